import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

/// `darkroom thumb --hdr`, run as a child process: an Ultra HDR JPEG kept as Ultra HDR and applied as a PQ AVIF (in
/// decode workers and in this process, the same files), a PQ AVIF and a PQ TIFF kept as PQ.
@Suite struct ThumbCommandHDRTests {
    /// Runs `darkroom thumb` and answers its exit status and standard error.
    static func thumb(_ arguments: [String]) throws -> (status: Int32, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try SamplePhotos.darkroomBinary())
        process.arguments = ["thumb"] + arguments
        process.standardOutput = FileHandle.nullDevice
        let error = Pipe()
        process.standardError = error
        try process.run()
        let text = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test func keepWritesUltraHDRAndApplyWritesPQ() throws {
        // Given an Ultra HDR JPEG (640 × 400, its gain map at 1/4 size)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = directory.path + "/ultrahdr.jpg"
        try TemporaryDirectory.write(GainMapSamples.assembled(from: "jpeg/colorfulcups-2560x1600.jpg").bytes, to: input)
        // When it is thumbnailed to 128 px with --hdr keep, with --hdr apply, and with --hdr apply --headroom 1, in
        // decode workers (the default) and the first two in this process
        let runs = [
            ("keep", ["--hdr", "keep"]), ("apply", ["--hdr", "apply"]),
            ("apply1", ["--hdr", "apply", "--headroom", "1"]),
            ("keep-in-process", ["--hdr", "keep", "--in-process"]),
            ("apply-in-process", ["--hdr", "apply", "--in-process"]),
        ]
        for (folder, mode) in runs {
            let run = try Self.thumb([input, "--max-pixel-size", "128", "--out", directory.path + "/" + folder] + mode)
            #expect(run.status == 0, "\(folder): \(run.error)")
        }
        // Then keep writes an Ultra HDR JPEG with its gain map at the source's proportion
        let kept = try SamplePhotos.bytes(directory.path + "/keep/ultrahdr.jpg")
        let details = try #require(ImageProber.gainMap(of: kept))
        #expect(details.isUsable && details.width == 32 && details.height == 20, "\(details.width)×\(details.height)")
        // and apply writes 10-bit BT.2020 PQ AVIFs, the one for a 1-stop display differing from the full one
        let applied = try SamplePhotos.bytes(directory.path + "/apply/ultrahdr.avif")
        let probe = try ImageProber.probe(applied)
        #expect(probe.format == .avif && probe.width == 128 && probe.bitDepth == 10, "\(probe)")
        #expect(probe.hdr?.transfer == "pq" && probe.hdr?.primaries == 9)
        #expect(try SamplePhotos.bytes(directory.path + "/apply1/ultrahdr.avif") != applied)
        // and the workers wrote what this process writes, byte for byte
        #expect(try SamplePhotos.bytes(directory.path + "/keep-in-process/ultrahdr.jpg") == kept)
        #expect(try SamplePhotos.bytes(directory.path + "/apply-in-process/ultrahdr.avif") == applied)
    }

    @Test func keepOfAPQPhotoAsAVIFStaysPQ() throws {
        // Given a BT.2020 PQ AVIF (Darkroom's HDR output of an SDR photo, 320 px)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let input = directory.path + "/pq.avif"
        try TemporaryDirectory.write(
            ImageEncoder.encodeHDRDisplayThumbnail(
                SamplePhotos.bytes("jpeg/colorfulcups-2560x1600.jpg"), options: DecodeOptions(size: .maxPixelSize(320))),
            to: input)
        // When it is thumbnailed to 128 px as AVIF with --hdr keep, and without
        for (folder, mode) in [("keep", ["--hdr", "keep"]), ("sdr", [])] {
            let run = try Self.thumb(
                [input, "--max-pixel-size", "128", "--format", "avif", "--out", directory.path + "/" + folder] + mode)
            #expect(run.status == 0, "\(folder): \(run.error)")
        }
        // Then keep writes a 10-bit PQ AVIF, and the default an 8-bit SDR one
        let kept = try ImageProber.probe(SamplePhotos.bytes(directory.path + "/keep/pq.avif"))
        #expect(kept.width == 128 && kept.bitDepth == 10 && kept.hdr?.transfer == "pq", "\(kept)")
        let sdr = try ImageProber.probe(SamplePhotos.bytes(directory.path + "/sdr/pq.avif"))
        #expect(sdr.width == 128 && sdr.bitDepth == 8 && sdr.hdr == nil, "\(sdr)")
    }

    @Test func keepOfAPQTIFFAsAVIFStaysPQ() throws {
        // Given a 16-bit TIFF whose ICC profile says BT.2100 PQ (libjxl's, copied by libvips; 320 px)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try PythonReference.script(
            "scripts/make-hdr-samples.py",
            [SamplePhotos.path("jpeg/colorfulcups-2560x1600.jpg"), directory.path, "--max-side", "320", "--jxl"])
        let input = directory.path + "/colorfulcups-2560x1600-pq-icc.tif"
        // When it is thumbnailed to 128 px as AVIF with --hdr keep, and without
        for (folder, mode) in [("keep", ["--hdr", "keep"]), ("sdr", [])] {
            let run = try Self.thumb(
                [input, "--max-pixel-size", "128", "--format", "avif", "--out", directory.path + "/" + folder] + mode)
            #expect(run.status == 0, "\(folder): \(run.error)")
        }
        // Then keep writes a 10-bit PQ AVIF (the TIFF read whole, as other sources are), and the default an 8-bit SDR
        // one
        let name = "/colorfulcups-2560x1600-pq-icc.avif"
        let kept = try ImageProber.probe(SamplePhotos.bytes(directory.path + "/keep" + name))
        #expect(kept.width == 128 && kept.bitDepth == 10 && kept.hdr?.transfer == "pq", "\(kept)")
        let sdr = try ImageProber.probe(SamplePhotos.bytes(directory.path + "/sdr" + name))
        #expect(sdr.width == 128 && sdr.bitDepth == 8 && sdr.hdr == nil, "\(sdr)")
    }

    @Test func contradictoryHDROptionsAreRefused() throws {
        // Given a JPEG
        let input = SamplePhotos.path("jpeg/colorfulcups-2560x1600.jpg")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // When --headroom comes without --hdr apply, out of range, or --hdr apply with another format
        let runs = try [
            ["--headroom", "1"], ["--hdr", "apply", "--headroom", "11"], ["--hdr", "apply", "--format", "jpeg"],
        ].map { try Self.thumb([input, "--max-pixel-size", "64", "--out", directory.path] + $0) }
        // Then each exits with a usage error naming the option, and nothing is written
        #expect(runs.map(\.status) == [64, 64, 64], "\(runs)")
        #expect(runs[0].error.contains("--headroom needs --hdr apply"))
        #expect(runs[1].error.contains("--headroom must be 0...10"))
        #expect(runs[2].error.contains("--hdr apply writes AVIF"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
}
