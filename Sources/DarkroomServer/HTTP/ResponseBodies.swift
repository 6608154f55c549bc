import DarkroomImage
import DarkroomWorkers
import Foundation

/// `{"error": {"code": "...", "message": "..."}}`.
struct ErrorBody: Codable, Sendable {
    struct Detail: Codable, Sendable {
        var code: String
        var message: String
    }
    var error: Detail
}

/// `GET /health`: `ok`, or `degraded` while the server runs without the disk caches it was given (it still
/// serves, from memory; the reason is in `diskCache`). Always 200 while the process answers.
struct HealthBody: Codable, Sendable {
    var status: String
    var rendersRunning: Int
    var rendersQueued: Int
    /// Client connections open, this one included.
    var connectionsOpen: Int
    /// `ok`, `none` (memory caches by configuration) or `unavailable: REASON`.
    var diskCache: String
    /// `workers` (confined decode workers) or `in-process`.
    var decoding: String
    /// What the decode workers have done (started, decodes, crashes, timeouts, recycled); absent in-process.
    var decodeWorkers: DecodeWorkerPool.Statistics?
}

/// `GET /v1/info`: the probe plus the upright size.
struct InfoBody: Codable, Sendable {
    var format: String
    var width: Int
    var height: Int
    var orientedWidth: Int
    var orientedHeight: Int
    var orientation: Int
    var hasAlpha: Bool
    var isGrayscale: Bool
    var frameCount: Int
    var isProgressive: Bool
    var hasICCProfile: Bool
    var bitDepth: Int
    var isCMYK: Bool
    /// The colour description: ICC profile (description, model, whether sRGB, usable), CICP or PNG chunks.
    var colorProfile: ColorProfileSummary?
    /// HEIC/AVIF: coded size, transformations, item count, thumbnail sizes, codec.
    var heif: HEIFDetails?
    /// Camera RAW: maker, model, sensor size, and the embedded previews' sizes and encoding.
    var raw: RAWDetails?
    /// HDR (PQ or HLG): the transfer, primaries, content light level, and whether thumbnails are tone-mapped.
    var hdr: HDRDetails?
    /// A gain map (Ultra HDR JPEG): its container, metadata form, size and parameters.
    var gainMap: GainMapDetails?
    /// What is wrong with the file's metadata that the image is shown without (a damaged gain map); absent when
    /// nothing is.
    var warnings: [String]?
    /// Pages a TIFF holds (`page=N` picks one); 1 for other formats.
    var pageCount: Int
    /// A video: its container, codec, duration, frame rate, frame count, rotation, coded size and audio.
    var video: VideoDetails?
    /// Animations: each frame's duration in milliseconds as stored, the loop count as stored (absent: none),
    /// how many times it plays (0 forever) and one play's length by the browsers' delay rule.
    var animation: AnimationBody?
    /// A ThumbHash of the image (base64), to paint a blurred placeholder while the thumbnail loads; absent when
    /// the image cannot be decoded.
    var thumbhash: String?

    struct AnimationBody: Codable, Sendable {
        var durations: [Int]
        var loopCount: Int?
        var plays: Int
        var totalDisplayDuration: Int
    }

    init(_ p: ImageProbe) {
        format = p.format.rawValue
        width = p.width
        height = p.height
        orientedWidth = p.orientedWidth
        orientedHeight = p.orientedHeight
        orientation = p.orientation.rawValue
        hasAlpha = p.hasAlpha
        isGrayscale = p.isGrayscale
        frameCount = p.frameCount
        isProgressive = p.isProgressive
        hasICCProfile = p.hasICCProfile
        bitDepth = p.bitDepth
        isCMYK = p.isCMYK
        colorProfile = p.colorProfile
        thumbhash = p.thumbHash.map { Data($0).base64EncodedString() }
        animation = p.animation.map {
            AnimationBody(
                durations: $0.durations, loopCount: $0.loopCount, plays: $0.plays,
                totalDisplayDuration: $0.totalDisplayDuration)
        }
        heif = p.heif
        raw = p.raw
        hdr = p.hdr
        gainMap = p.gainMap
        let warnings = [p.gainMap?.warning.map { "gain map: \($0)" }].compactMap { $0 }
        self.warnings = warnings.isEmpty ? nil : warnings
        pageCount = p.pageCount
        video = p.video
    }
}
