import Darkroom
import DarkroomImage
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import DarkroomServer

/// `/v1/thumb` operations (`rotate`, `flip`, `blur`, `sharpen`, `pad`, `bg`): the same pixels as the library's
/// processors after the same decode.
@Suite("Thumbnail operations")
struct OperationsEndpointTests {
    let root = ServerHarness.makeRoot()

    /// The library's answer: decode into `size`, then the processors, as PNG-decoded BGRA.
    func reference(_ size: TargetSize, _ processors: [any ImageProcessing]) throws -> Bitmap {
        let bytes = try #require(FileManager.default.contents(atPath: root + "/photo.jpg"))
        var bitmap = try ImageDecoder().decode(Array(bytes), options: DecodeOptions(size: size)).bitmap
        for processor in processors { bitmap = try processor.process(bitmap) }
        return try ImageDecoder().decode(try ImageEncoder.encode(bitmap, as: .png)).bitmap
    }

    func served(_ response: TestResponse) throws -> Bitmap {
        try ImageDecoder().decode(response.bytes).bitmap
    }

    @Test("rotate turns the output, whose box is w × h; flip mirrors; both equal the library's processors")
    func rotateAndFlip() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // Given the 640×480 photo turned a quarter and flipped, in a 100×50 box
            let r = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=100&h=50&rotate=90&flip=h&format=png", method: .get)
            #expect(r.status == .ok)
            let image = try served(r)
            // Then the portrait result fits the box, and its pixels are the library's
            #expect(image.width == 38 && image.height == 50)
            let expected = try reference(
                .fit(width: 50, height: 100), [ImageProcessors.Rotate(quarterTurns: 1, flipsHorizontally: true)])
            #expect(PixelCompare.psnr(image, expected) == .infinity)
        }
    }

    @Test("blur, sharpen, pad and bg equal the library's processors")
    func filtersAndPadding() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let r = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=120&blur=1.5&sharpen=0.8&pad=4,0,4,10&bg=ff8000&format=png",
                method: .get)
            #expect(r.status == .ok)
            let image = try served(r)
            let orange = RGBAColor(red: 255, green: 128, blue: 0)
            let expected = try reference(
                .fit(width: 120, height: 1 << 20),
                [
                    ImageProcessors.GaussianBlur(sigma: 1.5), ImageProcessors.Sharpen(sigma: 0.8),
                    ImageProcessors.Pad(top: 4, right: 0, bottom: 4, left: 10, color: orange),
                    ImageProcessors.Flatten(background: orange),
                ])
            #expect(image.width == 130 && image.height == 98)
            #expect(PixelCompare.psnr(image, expected) == .infinity)
            let corner = image.row(0).assumingMemoryBound(to: UInt8.self)
            #expect([corner[0], corner[1], corner[2], corner[3]] == [0, 128, 255, 255])
        }
    }

    @Test("bad operation values are refused with 400, naming the parameter")
    func refusals() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            for query in ["rotate=45", "flip=x", "blur=0", "sharpen=abc", "pad=1,2", "pad=-1", "bg=red", "bg=12345"] {
                let r = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=64&" + query, method: .get)
                #expect(r.status == .badRequest, "\(query)")
                #expect(r.errorCode == "bad_request")
            }
        }
    }

    @Test("operations apply to every frame of an animation")
    func animatedOperations() async throws {
        let root = try AnimationServerTests.makeRoot()
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let r = try await client.execute(
                uri: "/v1/thumb?src=kite.gif&w=80&h=128&rotate=270&format=webp", method: .get)
            #expect(r.status == .ok && r.headers[.contentType] == "image/webp")
            let decoder = try AnimatedImageDecoder(r.bytes)
            #expect(decoder.info.frameCount > 1)
            #expect(decoder.outputWidth == 80 && decoder.outputHeight == 128)
        }
    }
}

/// `/v1/thumb` resize modes: `fit=cover` with `g`, `fill-down`, `force`, and `dpr`.
@Suite("Thumbnail resize modes")
struct ResizeModeEndpointTests {
    let root = ServerHarness.makeRoot()

    @Test("g places the cover crop as the library's CropToFill; force, fill-down and dpr size the output")
    func modes() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            func image(_ query: String) async throws -> Bitmap {
                let r = try await client.execute(uri: "/v1/thumb?src=photo.jpg&format=png&" + query, method: .get)
                try #require(r.status == .ok, "\(query): \(r.status)")
                return try ImageDecoder().decode(r.bytes).bitmap
            }
            let bytes = try #require(FileManager.default.contents(atPath: root + "/photo.jpg"))
            let cover = try ImageDecoder().decode(
                Array(bytes), options: DecodeOptions(size: .cover(width: 64, height: 64)))
            for (g, gravity) in [
                ("we", Gravity.west()), ("soea", .southEast()), ("fp:0.8:0.5", .focusPoint(x: 0.8, y: 0.5)),
            ] {
                let served = try await image("w=64&h=64&fit=cover&g=" + g)
                let expected = try ImageProcessors.CropToFill(width: 64, height: 64, gravity: gravity).process(
                    cover.bitmap)
                let reference = try ImageDecoder().decode(try ImageEncoder.encode(expected, as: .png)).bitmap
                #expect(PixelCompare.psnr(served, reference) == .infinity, "g=\(g)")
            }
            let force = try await image("w=100&h=30&fit=force")
            #expect(force.width == 100 && force.height == 30)
            let down = try await image("w=2000&h=1000&fit=fill-down")
            #expect(down.width == 640 && down.height == 320)
            let dense = try await image("w=50&dpr=2")
            #expect(dense.width == 100 && dense.height == 75)
            for bad in ["w=64&g=no", "w=64&fit=cover&g=up", "w=64&fit=cover&g=fp:2:0", "w=64&fit=force", "w=64&dpr=9"] {
                let r = try await client.execute(uri: "/v1/thumb?src=photo.jpg&" + bad, method: .get)
                #expect(r.status == .badRequest, "\(bad)")
            }
        }
    }
}

/// `max_bytes`: a lossy thumbnail's quality goes down until it fits.
@Suite("Thumbnail max_bytes")
struct MaxBytesEndpointTests {
    let root = ServerHarness.makeRoot()

    @Test("a JPEG over max_bytes is re-encoded at a lower quality that fits; PNG is left alone")
    func maxBytes() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // Given the thumbnail's size at q90
            let full = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=400&format=jpeg&q=90", method: .get)
            #expect(full.status == .ok)
            let limit = full.bytes.count * 6 / 10
            // When it is asked for under 60 % of that
            let fitted = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=400&format=jpeg&q=90&max_bytes=\(limit)", method: .get)
            // Then it fits, is still the same image, and has its own ETag
            #expect(fitted.status == .ok && fitted.bytes.count <= limit && fitted.bytes.count > limit / 4)
            #expect(fitted.probe?.width == 400 && fitted.headers[.eTag] != full.headers[.eTag])
            let a = try ImageDecoder().decode(full.bytes).bitmap
            let b = try ImageDecoder().decode(fitted.bytes).bitmap
            #expect(PixelCompare.psnr(a, b) >= 28)
            // And PNG ignores it, and a tiny or huge limit is refused
            let png = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=400&format=png&max_bytes=2000", method: .get)
            #expect(png.status == .ok && png.bytes.count > 2000)
            for bad in ["max_bytes=10", "max_bytes=99999999999", "max_bytes=x"] {
                let r = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=64&" + bad, method: .get)
                #expect(r.status == .badRequest, "\(bad)")
            }
        }
    }
}
