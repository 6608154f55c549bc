import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Synchronization
import Testing

@testable import DarkroomImage

/// `ImageDecoder.decode(_:options:into:)`: the final pixels land in memory the caller supplies (image tables).
@Suite("Decoding into caller-supplied memory")
struct DecodeIntoTests {
    /// Allocates on the heap with a wider-than-needed row stride, recording every call.
    final class Recorder: Sendable {
        let calls = Locked<[(Int, Int, PixelFormat)]>([])
        let storages = Locked<[ObjectIdentifier]>([])

        func allocate(_ w: Int, _ h: Int, _ f: PixelFormat, _ opaque: Bool) throws(DarkroomImageError) -> Bitmap {
            calls.withLock { $0.append((w, h, f)) }
            let stride = Bitmap.alignedBytesPerRow(width: w, format: f) + 64
            let storage = try HeapBitmapStorage(byteCount: stride * h, zeroed: true)
            storages.withLock { $0.append(ObjectIdentifier(storage)) }
            return try Bitmap(width: w, height: h, format: f, bytesPerRow: stride, isOpaque: opaque, storage: storage)
        }
    }

    @Test(
        "codec output, format conversion and orientation: called once, the result is the supplied memory, pixels as a plain decode",
        arguments: [
            ("jpeg", "", PixelFormatPreference.exactly(.bgra8Premultiplied)), ("jpeg", "", .exactly(.gray8)),
            ("orientation", "-6.", .exactly(.bgra8Premultiplied)), ("webp", "", .exactly(.gray8)),
            ("png", "alpha", .exactly(.bgra8Premultiplied)), ("gif", "", .auto),
        ])
    func decodesIntoSuppliedMemory(_ folder: String, _ name: String, _ format: PixelFormatPreference) throws {
        // Given a sample and a recording allocator
        let path = try #require(
            SamplePhotos.files(folder).first { name.isEmpty || $0.contains(name) }, "no \(folder) sample")
        let bytes = try SamplePhotos.bytes(path)
        let options = DecodeOptions(size: .fill(width: 120, height: 90), pixelFormat: format)
        let recorder = Recorder()
        // When it is decoded into the supplied memory
        let decoded = try ImageDecoder().decode(bytes.withUnsafeBytes { Array($0) }, options: options)
        let into = try bytes.withUnsafeBytes { raw in
            try ImageDecoder().decode(raw, options: options, into: recorder.allocate)
        }
        // Then the allocator was asked once, for the final geometry, and the result lives in what it returned
        let calls = recorder.calls.withLock { $0 }
        #expect(calls.count == 1)
        #expect(
            calls.first.map { $0.0 == into.bitmap.width && $0.1 == into.bitmap.height && $0.2 == into.bitmap.format }
                == true)
        #expect(recorder.storages.withLock { $0 } == [ObjectIdentifier(into.bitmap.storage)])
        // And the pixels equal a plain decode's
        #expect(into.bitmap.pixelsEqual(decoded.bitmap))
        #expect(into.bitmap.isOpaque == decoded.bitmap.isOpaque)
    }

    @Test("an allocator that returns another geometry is refused")
    func wrongGeometry() throws {
        let bytes = try SamplePhotos.bytes(try #require(SamplePhotos.files("jpeg").first))
        #expect(throws: DarkroomImageError.self) {
            try bytes.withUnsafeBytes { raw in
                try ImageDecoder().decode(raw, options: DecodeOptions(size: .maxPixelSize(64))) {
                    (w: Int, h: Int, f: PixelFormat, o: Bool) throws(DarkroomImageError) -> Bitmap in
                    try Bitmap(width: w + 1, height: h, format: f, isOpaque: o)
                }
            }
        }
    }

    @Test("a custom decoder's result is copied into the supplied memory")
    func customDecoderIsCopied() throws {
        struct Flat: ImageDecoding {
            func canDecode(_ probe: ImageProbe) -> Bool { probe.format == .png }
            func decode(_ bytes: UnsafeRawBufferPointer, probe: ImageProbe, options: DecodeOptions)
                throws(DarkroomImageError) -> Bitmap
            {
                do { return try TestBitmaps.synthetic(width: 33, height: 17, gray: true) } catch {
                    throw DarkroomImageError(.outOfMemory, "synthetic image: \(error)")
                }
            }
        }
        let bytes = try SamplePhotos.bytes(try #require(SamplePhotos.files("png").first))
        let recorder = Recorder()
        let decoder = ImageDecoder(customDecoders: [Flat()])
        let into = try bytes.withUnsafeBytes { raw in
            try decoder.decode(raw, options: DecodeOptions(), into: recorder.allocate)
        }
        #expect(recorder.calls.withLock { $0.count } == 1)
        #expect(recorder.storages.withLock { $0 } == [ObjectIdentifier(into.bitmap.storage)])
        #expect(into.bitmap.pixelsEqual(try TestBitmaps.synthetic(width: 33, height: 17, gray: true)))
    }
}
