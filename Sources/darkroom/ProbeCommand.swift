import ArgumentParser
import DarkroomImage
import DarkroomSupport
import DarkroomVideo
import Foundation

/// `darkroom probe PATH... [--json]`: header facts without decoding pixels.
struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: """
            Print each image's format, size, orientation, alpha and frames without decoding it (for a video: its \
            container, codec, duration, frame rate and rotation).
            """)

    @Argument(help: "Image and video files.") var paths: [String]
    @Flag(help: "One JSON object per line.") var json = false
    @OptionGroup var decoding: DecodingOptions

    func run() throws {
        var failed = false
        // A video's header and a still's clip are read by FFmpeg: in a confined worker, started when one is met
        let videos = VideoDecoder(isolation: try decoding.decoder(workers: 1, prestart: false).isolation)
        for path in paths {
            do throws(DarkroomImageError) {
                let p: ImageProbe
                var color: ColorProfileSummary?
                var gainMap: GainMapDetails?
                var motion: PhotoMotion?
                var motionError: DarkroomImageError?
                if try ImageProber.format(ofFileAt: path) == .video {
                    p = try videos.header(ofVideoAt: path, limits: .default)
                } else {
                    // An image is read once, whole: its header, colour and gain map come from the same bytes
                    let bytes = try FileBytes.read(path, limit: DecodeLimits.default.maxInputBytes)
                    p = try ImageProber.probe(bytes)
                    color = bytes.withUnsafeBytes { ImageProber.colorProfile(of: $0) }
                    // A still's motion (a Motion Photo's clip, a Live Photo's video): its failure is the clip's,
                    // reported beside the still's facts
                    if [.jpeg, .heic, .avif].contains(p.format) {
                        do throws(DarkroomImageError) {
                            motion = try videos.motion(ofPhotoAt: path, format: p.format, contents: bytes)
                        } catch {
                            motionError = error
                        }
                    }
                    gainMap = bytes.withUnsafeBytes { ImageProber.gainMap(of: $0) }
                }
                if json {
                    var object: [String: Any] = [
                        "path": path, "format": p.format.rawValue, "width": p.width, "height": p.height,
                        "orientation": p.orientation.rawValue, "hasAlpha": p.hasAlpha, "frames": p.frameCount,
                        "progressive": p.isProgressive, "grayscale": p.isGrayscale, "hasICCProfile": p.hasICCProfile,
                        "bitDepth": p.bitDepth, "cmyk": p.isCMYK, "pageCount": p.pageCount,
                    ]
                    if let color { object["colorProfile"] = JSONLine.object(color) }
                    if let heif = p.heif { object["heif"] = JSONLine.object(heif) }
                    if let hdr = p.hdr { object["hdr"] = JSONLine.object(hdr) }
                    if let gainMap { object["gainMap"] = JSONLine.object(gainMap) }
                    if let video = p.video { object["video"] = JSONLine.object(video) }
                    if let motion { object["motion"] = JSONLine.motion(motion) }
                    if let motionError { object["motionError"] = JSONLine.error(motionError) }
                    print(JSONLine.encode(object))
                } else {
                    var line =
                        "\(path): \(p.format.rawValue) \(p.width)x\(p.height) orientation=\(p.orientation.rawValue) "
                        + "alpha=\(p.hasAlpha ? "yes" : "no") frames=\(p.frameCount) progressive=\(p.isProgressive ? "yes" : "no") "
                        + "gray=\(p.isGrayscale ? "yes" : "no") icc=\(p.hasICCProfile ? "yes" : "no") depth=\(p.bitDepth)"
                    if p.isCMYK { line += " cmyk=yes" }
                    if let video = p.video {
                        line +=
                            " container=\(video.fileExtension) codec=\(video.codec)"
                            + (video.duration.map { " duration=\(String(format: "%.3f", $0))s" } ?? "")
                            + (video.frameRate.map { " fps=\(String(format: "%.3f", $0))" } ?? "")
                            + " rotation=\(video.rotation)\(video.mirrored ? " mirrored" : "")"
                            + " coded=\(video.codedWidth)x\(video.codedHeight)"
                            + (video.pixelAspect == [1, 1]
                                ? "" : " pixel-aspect=\(video.pixelAspect[0]):\(video.pixelAspect[1])")
                            + " audio=\(video.hasAudio ? "yes" : "no")"
                    }
                    if p.pageCount > 1 { line += " pages=\(p.pageCount)" }
                    if let hdr = p.hdr {
                        line +=
                            " hdr=\(hdr.transfer) primaries=\(hdr.primaries)"
                            + (hdr.maxContentLightLevel.map { " maxCLL=\($0)" } ?? "")
                            + (hdr.toneMapped ? " tone-mapped" : " not-tone-mapped")
                    }
                    if let gainMap {
                        line +=
                            " gainmap=\(gainMap.width)x\(gainMap.height)x\(gainMap.channels)"
                            + (gainMap.metadataFormat.map { " (\($0))" } ?? "")
                            + (gainMap.metadata.map { " headroom=\(String(format: "%.2f", $0.alternateHeadroom))" }
                                ?? "")
                            + (gainMap.warning.map { " warning=\"\($0)\"" } ?? "")
                    }
                    if let color {
                        line +=
                            " colour=\"\(color.description ?? color.source.rawValue)\" (\(color.model.rawValue)"
                            + (color.isSRGB ? ", sRGB" : "")
                            + (color.isUsable ? "" : ", unusable: \(color.problem ?? "")") + ")"
                    }
                    if let heif = p.heif {
                        line +=
                            " codec=\(heif.codec) coded=\(heif.codedWidth)x\(heif.codedHeight) images=\(heif.imageCount)"
                            + (heif.thumbnailSizes.isEmpty
                                ? ""
                                : " thumbnails="
                                    + heif.thumbnailSizes.map { "\($0[0])x\($0[1])" }.joined(separator: ","))
                    }
                    if let motion {
                        line +=
                            " motion=\(motion.kind.rawValue)"
                            + (motion.embedded.map { " (\($0.layout.rawValue) at \($0.offset), \($0.length) bytes)" }
                                ?? " (\(motion.path))")
                            + (motion.duration.map { " clip=\(String(format: "%.3f", $0))s" } ?? "")
                            + " clip-codec=\(motion.clip.video?.codec ?? "?")"
                    }
                    if let motionError { line += " motion-error=\"\(motionError)\"" }
                    print(line)
                }
            } catch {
                failed = true
                let e = error
                if json {
                    print(JSONLine.encode(["path": path, "error": JSONLine.error(e)]))
                } else {
                    FileHandle.standardError.write(Data("\(path): error: \(e)\n".utf8))
                }
            }
        }
        if failed { throw ExitCode(1) }
    }
}

extension JSONLine {
    static func error(_ e: DarkroomImageError) -> [String: Any] {
        var o: [String: Any] = ["code": e.code.rawValue, "message": e.message]
        if let codec = e.codecMessage { o["codec_message"] = codec }
        return o
    }

    /// A still's motion as JSON: the kind, the file holding the clip (and where in it, or the content identifier that
    /// paired it), the clip's header.
    static func motion(_ motion: PhotoMotion) -> [String: Any] {
        var object: [String: Any] = [
            "kind": motion.kind.rawValue, "file": motion.path, "width": motion.clip.width,
            "height": motion.clip.height,
        ]
        if let embedded = motion.embedded {
            object["layout"] = embedded.layout.rawValue
            object["offset"] = embedded.offset
            object["length"] = embedded.length
            if let time = embedded.presentationTime { object["presentationTime"] = time }
        }
        if let identifier = motion.contentIdentifier { object["contentIdentifier"] = identifier }
        if let video = motion.clip.video { object["video"] = JSONLine.object(video) }
        return object
    }
}
