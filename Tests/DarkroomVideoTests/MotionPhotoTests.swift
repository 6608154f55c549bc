import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomVideo

/// Motion Photos and Live Photos: the clip found in every layout phones write, byte for byte where ExifTool finds it;
/// the rules that say a photo has none; the Live Photo pairing; the motion as an animation whose frames are the
/// `ffmpeg` command's; and `darkroom probe`/`thumb --motion` as a person runs them.
@Suite(.serialized) struct MotionPhotoTests {
    static func sample(_ name: String) throws -> String { try MotionPhotoSamples.path(name) }

    /// ExifTool's extraction of the clip a photo holds (its tag for each layout: `EmbeddedVideo` for a JPEG's
    /// appended clip, `EmbeddedVideoFile` for Samsung's trailer, `MotionPhotoVideo` for HEIF's `mpvd` box).
    static func exifToolClip(_ path: String) throws -> Data {
        try ReferenceTool.run(
            "exiftool", ["-b", "-ee", "-EmbeddedVideo", "-EmbeddedVideoFile", "-MotionPhotoVideo", path])
    }

    // MARK: Finding the clip

    @Test(arguments: [
        ("google.jpg", EmbeddedVideo.Layout.containerDirectory, 1.0 as Double?),
        ("micro-video.jpg", .microVideo, 0.5), ("samsung.jpg", .samsungTrailer, nil), ("heif.heic", .heifBox, 0.5),
    ])
    func findsTheClipExifToolFinds(_ name: String, _ layout: EmbeddedVideo.Layout, _ time: Double?) throws {
        // Given a Motion Photo in one of the layouts, and ExifTool's extraction of its clip
        let path = try Self.sample(name)
        let reference = try Self.exifToolClip(path)
        try #require(reference.count > 1000, "ExifTool found no clip in \(name)")
        // When Darkroom locates the clip in the file, and in the same bytes in memory
        let found = try #require(try ImageProber.embeddedVideo(ofFileAt: path))
        let bytes = try FileBytes.read(path)
        let inMemory = bytes.withUnsafeBytes { ImageProber.embeddedVideo(in: $0) }
        // Then both name the layout and exactly ExifTool's bytes, which are the clip made for it
        #expect(found == inMemory)
        #expect(found.layout == layout && found.presentationTime == time)
        #expect(Data(bytes[found.offset..<(found.offset + found.length)]) == reference)
        let clip = try Data(contentsOf: URL(fileURLWithPath: Self.sample("clip.mp4")))
        #expect(reference == clip)
    }

    @Test func aPhotoWithoutAClipHasNoMotion() throws {
        // Given photos that say to be shown still (their clip still there: a JPEG's appended, a HEIC's mpvd box),
        // one whose metadata outlived its clip, a plain JPEG, and a Live Photo still beside a video of its name that
        // is another Live Photo's (their content identifiers differ)
        let names = [
            "still-only.jpg", "heif-still-only.heic", "dropped.jpg", "live/IMG_0002.JPG", "live/IMG_0003.HEIC",
        ]
        for name in names {
            // When its motion is asked for
            let path = try Self.sample(name)
            // Then there is none: no clip is located, and no motion reported
            #expect(try ImageProber.embeddedVideo(ofFileAt: path) == nil, "\(name)")
            #expect(try VideoDecoder().motion(ofPhotoAt: path) == nil, "\(name)")
        }
        // And a plain photo from the shared set has none either
        let plain = SamplePhotos.path("jpeg/kite-2560x1600.jpg")
        #expect(try VideoDecoder().motion(ofPhotoAt: plain) == nil)
    }

    @Test func hostileLocationsFindNothing() throws {
        // Given JPEGs whose XMP names lengths past the file (huge, negative, their sum past Int.max) or whose Samsung
        // trailer points outside the file, each followed by a real clip
        let clip = Array(try Data(contentsOf: URL(fileURLWithPath: Self.sample("clip.mp4"))))
        let still = Array(try FileBytes.read(Self.sample("live/IMG_0002.JPG")))
        func jpeg(_ properties: String) -> [UInt8] {
            let xmp = Array(
                """
                <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF><rdf:Description \
                xmlns:GCamera="http://ns.google.com/photos/1.0/camera/" \
                xmlns:Container="http://ns.google.com/photos/1.0/container/" \
                xmlns:Item="http://ns.google.com/photos/1.0/container/item/" \(properties)</rdf:Description></rdf:RDF>\
                </x:xmpmeta>
                """.utf8)
            let payload = Array("http://ns.adobe.com/xap/1.0/\0".utf8) + xmp
            let length = payload.count + 2
            return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + still.dropFirst(2)
                + clip
        }
        func directory(_ lengths: [String], padding: String = "0") -> [UInt8] {
            let items = lengths.map {
                "<rdf:li><Container:Item Item:Semantic=\"MotionPhoto\" Item:Length=\"\($0)\" Item:Padding=\"\(padding)\"/></rdf:li>"
            }
            return jpeg(
                "GCamera:MotionPhoto=\"1\"><Container:Directory><rdf:Seq>\(items.joined())</rdf:Seq></Container:Directory>"
            )
        }
        let huge = String(Int.max)
        let files = [
            directory([huge, huge]), directory(["-5"]), directory(["\(clip.count)"], padding: huge),
            directory(["99999999999999999999"]), jpeg("GCamera:MicroVideo=\"1\" GCamera:MicroVideoOffset=\"\(huge)\">"),
            still + Array(repeating: 0xFF, count: 12) + Array("SEFT".utf8),
            still + [0xFF, 0xFF, 0xFF, 0x7F] + Array("SEFT".utf8),
        ]
        // When each is searched for a clip, Then nothing is found, and nothing traps
        for (index, bytes) in files.enumerated() {
            #expect(bytes.withUnsafeBytes { ImageProber.embeddedVideo(in: $0) } == nil, "file \(index)")
        }
        // And the same directory with the clip's true length finds it
        let good = directory(["\(clip.count)"])
        let found = try #require(good.withUnsafeBytes { ImageProber.embeddedVideo(in: $0) })
        #expect(found.length == clip.count && Array(good[found.offset...]) == clip)
    }

    @Test func aDamagedClipIsATypedError() throws {
        // Given a Motion Photo whose clip was cut in half (its header, at the end of the MP4, lost)
        let path = try Self.sample("truncated.jpg")
        // When its motion is asked for, then the clip is located but opening it is a typed error
        #expect(try ImageProber.embeddedVideo(ofFileAt: path) != nil)
        let error = #expect(throws: DarkroomImageError.self) { try VideoDecoder().motion(ofPhotoAt: path) }
        #expect([.corrupt, .truncated].contains(error?.code), "\(String(describing: error))")
        // And the still itself still decodes
        #expect(try ImageDecoder().decode(FileBytes.read(path)).bitmap.width == 640)
    }

    @Test func motionReportsTheClipAsFFprobeReadsIt() throws {
        // Given a Motion Photo and a Live Photo holding the same clip, and ffprobe's reading of the clip
        let reference = try VideoDecoderTests.ffprobe(try Self.sample("clip.mp4"))
        let google = try #require(try VideoDecoder().motion(ofPhotoAt: Self.sample("google.jpg")))
        let live = try #require(try VideoDecoder().motion(ofPhotoAt: Self.sample("live/IMG_0001.HEIC")))
        // Then each says which kind it is and where the clip is
        let photo = try Self.sample("google.jpg")
        #expect(google.kind == .motionPhoto && google.path == photo)
        let mov = try Self.sample("live/IMG_0001.MOV")
        #expect(live.kind == .livePhoto && live.path == mov && live.embedded == nil)
        // And both clips' size, codec and length are ffprobe's
        for motion in [google, live] {
            #expect(
                motion.clip.width == reference["width"] as? Int && motion.clip.height == reference["height"] as? Int)
            #expect(motion.clip.video?.codec == "h264")
            let duration = try #require(motion.duration)
            #expect(abs(duration - (reference["duration"] as? Double ?? 0)) < 0.05, "\(duration)")
        }
        #expect(google.clip.video?.container == "mp4" && live.clip.video?.fileExtension == "mov")
    }

    @Test func theLivePhotoRuleIsTheBaseName() throws {
        let directory = try TemporaryDirectory("live-photo")
        defer { directory.remove() }
        // Given stills beside videos named the same with either case of .mov, and one beside an .mp4
        for (still, video) in [("A.HEIC", "A.MOV"), ("b.jpg", "b.mov"), ("C.JPG", "C.mp4")] {
            try Data([0xFF, 0xD8]).write(to: URL(fileURLWithPath: directory.file(still)))
            try Data([0]).write(to: URL(fileURLWithPath: directory.file(video)))
        }
        // Then the QuickTime files pair, the MP4 does not, nor does a still without a video
        #expect(PhotoMotion.livePhotoVideo(forPhotoAt: directory.file("A.HEIC")) == directory.file("A.MOV"))
        #expect(PhotoMotion.livePhotoVideo(forPhotoAt: directory.file("b.jpg")) == directory.file("b.mov"))
        #expect(PhotoMotion.livePhotoVideo(forPhotoAt: directory.file("C.JPG")) == nil)
        #expect(PhotoMotion.livePhotoVideo(forPhotoAt: directory.file("D.JPG")) == nil)
    }

    @Test func contentIdentifiersAreExifTools() throws {
        // Given Live Photo stills (HEIC and JPEG) and videos, and ExifTool's reading of their identifiers
        let stills = ["live/IMG_0001.HEIC", "live/IMG_0003.HEIC", "live/2024-05-01 10.00.00.jpg", "live/IMG_0002.JPG"]
        let videos = ["live/IMG_0001.MOV", "live/IMG_0003.MOV", "live/exported-clip.mov"]
        func exifTool(_ tag: String, _ name: String) throws -> String? {
            let text = String(
                decoding: try ReferenceTool.run("exiftool", ["-s3", "-\(tag)", Self.sample(name)]), as: UTF8.self
            ).trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty ? nil : text
        }
        for name in stills {
            // When Darkroom reads a still's identifier from its file and from its bytes
            let path = try Self.sample(name)
            let fromFile = try ImageProber.contentIdentifier(ofFileAt: path)
            let fromBytes = try FileBytes.read(path).withUnsafeBytes { ImageProber.contentIdentifier(in: $0) }
            // Then both are ExifTool's (none for the still that has no video)
            #expect(fromFile == fromBytes, "\(name)")
            #expect(fromFile == (try exifTool("MediaGroupUUID", name)), "\(name)")
            #expect((fromFile == nil) == (name == "live/IMG_0002.JPG"), "\(name)")
        }
        for name in videos {
            // And a video's header carries its identifier as ExifTool reads it
            let header = try VideoDecoder().probe(fileAt: Self.sample(name))
            let identifier = try #require(header.video?.contentIdentifier, "\(name)")
            #expect(identifier == (try exifTool("ContentIdentifier", name)), "\(name)")
        }
    }

    @Test func aRenamedLivePhotoPairsByItsContentIdentifier() throws {
        // Given a folder holding a renamed pair (the still and its video under unrelated names), a video that is
        // another Live Photo's, and a still whose video is not there
        let directory = try TemporaryDirectory("live-renamed")
        defer { directory.remove() }
        let files = [
            ("live/2024-05-01 10.00.00.jpg", "2024-05-01 10.00.00.jpg"), ("live/exported-clip.mov", "clip.MOV"),
            ("live/IMG_0003.MOV", "IMG_0003.MOV"), ("live/IMG_0001.HEIC", "IMG_0001.HEIC"),
        ]
        for (from, to) in files {
            try FileManager.default.copyItem(atPath: Self.sample(from), toPath: directory.file(to))
        }
        // (last changed an hour ago: a folder changed this second is looked through again on every ask)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: directory.path)
        let still = directory.file("2024-05-01 10.00.00.jpg")
        // When the still's motion is asked for, twice
        let motion = try #require(try VideoDecoder().motion(ofPhotoAt: still))
        let again = try #require(try VideoDecoder().motion(ofPhotoAt: still))
        // Then it is the video that shares its identifier, found with one look through the folder
        #expect(motion.kind == .livePhoto && motion.path == directory.file("clip.MOV"))
        #expect(motion.contentIdentifier == (try ImageProber.contentIdentifier(ofFileAt: still)))
        #expect(motion.contentIdentifier != nil && again.path == motion.path)
        #expect(LivePhotoIndex.shared.timesBuilt(directory.path) == 1)
        // And a still whose video is absent has none, from the same index
        #expect(try VideoDecoder().motion(ofPhotoAt: directory.file("IMG_0001.HEIC")) == nil)
        #expect(LivePhotoIndex.shared.timesBuilt(directory.path) == 1)
        // And once its video is added under another name, the changed folder is looked through again and it pairs
        try FileManager.default.copyItem(
            atPath: Self.sample("live/IMG_0001.MOV"), toPath: directory.file("IMG_0001 (1).mov"))
        let added = try #require(try VideoDecoder().motion(ofPhotoAt: directory.file("IMG_0001.HEIC")))
        #expect(added.path == directory.file("IMG_0001 (1).mov"))
        #expect(LivePhotoIndex.shared.timesBuilt(directory.path) == 2)
        // And with no candidates allowed, pairing is by name only
        var limits = DecodeLimits.default
        limits.maxLivePhotoCandidates = 0
        #expect(try VideoDecoder().motion(ofPhotoAt: still, limits: limits) == nil)
    }

    // MARK: The motion as an animation

    @Test(arguments: ["google.jpg", "samsung.jpg", "heif.heic"])
    func theMotionPlaysTheClipsFramesAsFFmpegShowsThem(_ name: String) throws {
        // Given a Motion Photo's clip (2 s at 30 fps)
        let motion = try #require(try VideoDecoder().motion(ofPhotoAt: Self.sample(name)))
        // When its motion is made at 10 fps fitting 160 px
        let animation = try VideoAnimation(
            fileAt: motion.path, range: motion.byteRange, options: VideoDecoderTests.options(160))
        // Then it has 20 frames of 100 ms at 160×120, playing forever
        #expect(animation.info.frameCount == 20 && animation.info.durations.allSatisfy { $0 == 100 })
        #expect(animation.info.plays == 0 && animation.outputWidth == 160 && animation.outputHeight == 120)
        // And frame k is the clip's frame at k/10 s as the ffmpeg command decodes and scales it
        let clip = try Self.sample("clip.mp4")
        var count = 0
        while let frame = try animation.nextFrame() {
            if frame.index % 5 == 0 || frame.index == 19 {
                let reference = try FFmpegReference.frame(
                    clip, time: Double(frame.index) / 10, width: 160, height: 120)
                let psnr = PixelCompare.psnr(frame.bitmap, reference)
                #expect(psnr >= 35, "frame \(frame.index): \(psnr) dB")
            }
            count += 1
        }
        #expect(count == 20)
        // And a rewind plays it again from the first frame
        try animation.rewind()
        let again = try #require(try animation.nextFrame())
        let first = try FFmpegReference.frame(clip, time: 0, width: 160, height: 120)
        #expect(again.index == 0 && PixelCompare.psnr(again.bitmap, first) >= 35)
    }

    @Test func aTurnedClipPlaysUpright() throws {
        // Given a Motion Photo whose clip is stored turned (a phone held upright)
        let motion = try #require(try VideoDecoder().motion(ofPhotoAt: Self.sample("portrait.jpg")))
        // When its motion is made fitting 160 px
        let animation = try VideoAnimation(
            fileAt: motion.path, range: motion.byteRange, options: VideoDecoderTests.options(160),
            preview: MotionPreview(seconds: 1, framesPerSecond: 5, start: 0.4))
        // Then the frames are upright, 120×160, and five of them from 0.4 s are ffmpeg's (which turns it too)
        #expect(animation.outputWidth == 120 && animation.outputHeight == 160 && animation.info.frameCount == 5)
        let frame = try #require(try animation.nextFrame())
        #expect(frame.bitmap.width == 120 && frame.bitmap.height == 160)
        let reference = try FFmpegReference.frame(
            Self.sample("portrait.mp4"), time: 0.4, width: 120, height: 160)
        #expect(PixelCompare.psnr(frame.bitmap, reference) >= 35)
    }

    @Test func aPreviewOfNoFramesIsRefused() throws {
        let clip = try Self.sample("clip.mp4")
        for preview in [MotionPreview(seconds: 0), MotionPreview(framesPerSecond: 0), MotionPreview(start: -1)] {
            let error = #expect(throws: DarkroomImageError.self) {
                try VideoAnimation(fileAt: clip, preview: preview)
            }
            #expect(error?.code == .invalidArgument)
        }
    }

    // MARK: The command line

    @Test func probeAndThumbShowTheMotion() throws {
        let binary = try SamplePhotos.darkroomBinary()
        let out = try TemporaryDirectory("motion-cli")
        defer { out.remove() }
        let google = try Self.sample("google.jpg")
        let live = try Self.sample("live/IMG_0001.HEIC")
        // When the Motion Photo and the Live Photo are probed
        let lines = try VideoCommandTests.json(ReferenceTool.run(binary, ["probe", "--json", google, live]))
        // Then each names its kind and its clip's length
        let kinds = lines.map { ($0["motion"] as? [String: Any])?["kind"] as? String }
        #expect(kinds == ["motion-photo", "live-photo"])
        let motion = try #require(lines[0]["motion"] as? [String: Any])
        #expect(motion["layout"] as? String == "container-directory" && motion["presentationTime"] as? Double == 1)
        let seconds = (motion["video"] as? [String: Any])?["duration"] as? Double ?? 0
        #expect(abs(seconds - 2) < 0.05)
        // When thumbnails are made of the still and of the motion
        _ = try ReferenceTool.run(
            binary, ["thumb", google, live, "--max-pixel-size", "128", "--out", out.file("still")])
        _ = try ReferenceTool.run(
            binary, ["thumb", google, live, "--max-pixel-size", "128", "--motion", "--out", out.file("motion")])
        // Then the still is the photo's, and the motion an animated WebP of the clip that Pillow plays
        let still = try ImageProber.probe(fileAt: out.file("still/google.jpg"))
        #expect(still.format == .jpeg && still.width == 128 && still.height == 80)
        let script = """
            import sys
            from PIL import Image
            for path in sys.argv[1:]:
                im = Image.open(path)
                im.load()
                print(im.format, im.size[0], im.size[1], im.n_frames, im.info.get("duration"), im.info.get("loop"))
            """
        let played = try PythonReference.run(
            script, [out.file("motion/google.webp"), out.file("motion/IMG_0001.webp")])
        #expect(
            String(decoding: played, as: UTF8.self) == "WEBP 128 96 20 100 0\nWEBP 128 96 20 100 0\n")
        // And asking for the motion of a photo without any is a typed error, not an empty file
        let plain = try Self.sample("live/IMG_0002.JPG")
        let failed = #expect(throws: (any Error).self) {
            try ReferenceTool.run(binary, ["thumb", plain, "--max-pixel-size", "128", "--motion", "--out", out.path])
        }
        #expect("\(String(describing: failed))".contains("no motion"))
        #expect(!FileManager.default.fileExists(atPath: out.file("IMG_0002.webp")))
    }
}
