import CDarkroomVideo
import DarkroomImage

extension VideoFile {
    /// The header as an `ImageProbe`: format `ImageFileFormat/video`, the displayed frame size before rotation
    /// (the coded width times the pixel aspect), the display matrix's rotation as the orientation, the bit depth,
    /// PQ or HLG light as `ImageProbe/hdr`, and the container's facts as `ImageProbe/video`.
    var probe: ImageProbe {
        let sar = (Int(info.sar_num), Int(info.sar_den))
        let coded = (Int(info.coded_width), Int(info.coded_height))
        // Non-square pixels widen (or narrow) the frame; its height is kept, as players show it
        let width = sar.0 == sar.1 ? coded.0 : max(1, Int((Double(coded.0 * sar.0) / Double(sar.1)).rounded()))
        var probe = ImageProbe(
            format: .video, width: width, height: coded.1, orientation: orientation,
            bitDepth: info.bit_depth > 0 ? Int(info.bit_depth) : 8)
        probe.hdr = HDRDetails(
            primaries: Int(info.color_primaries), transfer: Int(info.color_transfer), hasICC: false,
            lightLevel: info.max_cll > 0 ? (Int(info.max_cll), Int(info.max_fall)) : nil)
        probe.video = VideoDetails(
            container: text(info.container), brand: text(info.brand).isEmpty ? nil : text(info.brand),
            codec: text(info.codec), duration: info.duration >= 0 ? info.duration : nil,
            frameRate: info.fps_den > 0 && info.fps_num > 0 ? Double(info.fps_num) / Double(info.fps_den) : nil,
            frameCount: info.frame_count > 0 ? Int(info.frame_count) : nil, rotation: Int(info.rotation),
            mirrored: info.mirrored != 0, codedWidth: coded.0, codedHeight: coded.1, pixelAspect: [sar.0, sar.1],
            hasAudio: info.has_audio != 0,
            contentIdentifier: text(info.content_identifier).isEmpty ? nil : text(info.content_identifier))
        return probe
    }

    /// The display matrix as an EXIF orientation: the clockwise turn, after a left-right mirror when it mirrors.
    private var orientation: ExifOrientation {
        switch (Int(info.rotation), info.mirrored != 0) {
        case (90, false): .right
        case (180, false): .down
        case (270, false): .left
        case (0, true): .upMirrored
        case (90, true): .rightMirrored
        case (180, true): .downMirrored
        case (270, true): .leftMirrored
        default: .up
        }
    }

    /// A fixed-size C character array as a string.
    private func text<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
