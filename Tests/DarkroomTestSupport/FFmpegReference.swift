import DarkroomImage
import Foundation

/// The `ffmpeg` command as the reference for video frames.
package enum FFmpegReference {
    /// The `ffmpeg` command's decode of the frame at `time` (its `-ss`: the first frame at or after it), rotated as
    /// ffmpeg shows it and scaled to `width × height` with Lanczos (full chroma, accurate rounding), as BGRA.
    /// Throws when ffmpeg is missing or fails (`make test` installs it).
    package static func frame(_ path: String, time: Double, width: Int, height: Int) throws -> Bitmap {
        try frames(path, from: time, count: 1, width: width, height: height)[0]
    }

    /// ``frame(_:time:width:height:)`` of `count` successive frames from `time`, with one `ffmpeg` command.
    package static func frames(_ path: String, from time: Double, count: Int, width: Int, height: Int) throws
        -> [Bitmap]
    {
        let directory = try TemporaryDirectory.make("video-ref")
        defer { TemporaryDirectory.remove(directory) }
        _ = try ReferenceTool.run(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-y", "-ss", String(time), "-i", path, "-frames:v", String(count), "-vf",
                "scale=\(width):\(height):flags=lanczos+accurate_rnd+full_chroma_int", "-pix_fmt", "rgb24",
                directory + "/frame%04d.png",
            ])
        var options = DecodeOptions()
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        return try (1...count).map { index in
            try ImageDecoder().decode(
                FileBytes.read(directory + "/frame\(String(format: "%04d", index)).png"), options: options
            ).bitmap
        }
    }

    /// Writes a 20 s 640 × 360 H.264 clip to `path` (about 6 MB: a keyframe a second, its index at the end, as the
    /// `ffmpeg` command writes by default), large enough that reading it by ranges, not whole, shows.
    package static func writeLongClip(to path: String) throws {
        _ = try ReferenceTool.run(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30", "-t", "20",
                "-c:v", "libx264", "-preset", "ultrafast", "-crf", "20", "-g", "30", "-pix_fmt", "yuv420p", path,
            ])
    }
}
