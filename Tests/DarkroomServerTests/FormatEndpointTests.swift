import DarkroomImage
import DarkroomTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import DarkroomServer

/// The formats beyond JPEG/PNG/WebP/GIF/HEIC/AVIF through the server: thumbnails and info from TIFF, JPEG XL, a DNG
/// with its preview, SVG, BMP and ICO, JPEG XL and ICO out, and both URL dialects' format names.
@Suite("Formats through the server")
struct FormatEndpointTests {
    let root = ServerHarness.makeRoot()

    /// Writes one file of each new format into the root (TIFF, DNG and BMP by tools and Pillow, JPEG XL by cjxl).
    func writeFiles() throws {
        let photo = SamplePhotos.path("orientation/fallenleaf-600x400-orientation-1.jpg")
        _ = try ReferenceTool.run("vips", ["copy", photo, root + "/photo.tif[compression=lzw]"])
        _ = try ReferenceTool.run("cjxl", [photo, root + "/photo.jxl", "--quiet", "--lossless_jpeg=0", "-d", "1"])
        _ = try PythonReference.script(
            "scripts/make-dng.py",
            [SamplePhotos.path("jpeg/kite-2560x1600.jpg"), root + "/camera.dng", "--preview", "512", "--scale", "0.5"])
        _ = try PythonReference.run(
            "import sys; from PIL import Image; im = Image.open(sys.argv[1]); im.save(sys.argv[2]); im.save(sys.argv[3], sizes=[(32, 32), (64, 64)])",
            [photo, root + "/photo.bmp", root + "/favicon.ico"])
        ServerHarness.write(
            root + "/logo.svg",
            Array(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"40\" height=\"20\"><rect width=\"40\" height=\"20\" fill=\"#36c\"/></svg>"
                    .utf8))
    }

    @Test("each format gives a thumbnail of the right size, as JPEG, JPEG XL or ICO")
    func thumbnails() async throws {
        try writeFiles()
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            for (src, size) in [
                ("photo.tif", [120, 75]), ("photo.jxl", [120, 75]), ("camera.dng", [120, 75]), ("logo.svg", [120, 60]),
                ("photo.bmp", [120, 75]), ("favicon.ico", [64, 40]),
            ] {
                // When a 120 px thumbnail is asked for as JPEG and as JPEG XL
                let jpeg = try await client.execute(uri: "/v1/thumb?src=\(src)&w=120&format=jpeg", method: .get)
                let jxl = try await client.execute(uri: "/v1/thumb?src=\(src)&w=120&format=jxl", method: .get)
                // Then both answer at the size (ICO entries are not enlarged past 64 px)
                #expect(jpeg.status == .ok, "\(src): \(jpeg.status)")
                #expect(jpeg.probe.map { [$0.width, $0.height] } == size, "\(src)")
                #expect(jxl.headers[.contentType] == "image/jxl" && jxl.probe?.format == .jxl, "\(src)")
            }
            // And ICO is written at a favicon size; SVG is not offered as output
            let ico = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=32&h=32&fit=cover&format=ico", method: .get)
            #expect(ico.headers[.contentType] == "image/x-icon" && ico.probe?.format == .ico)
            let svg = try await client.execute(uri: "/v1/thumb?src=logo.svg&w=32&format=svg", method: .get)
            #expect(svg.status == .badRequest)
        }
    }

    @Test("info lists a RAW's preview sizes and camera; imgproxy and thumbor name the new formats")
    func infoAndDialects() async throws {
        try writeFiles()
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // When a DNG is described
            let info = try await client.execute(uri: "/v1/info?src=camera.dng", method: .get)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(info.bytes)) as? [String: Any])
            let raw = try #require(json["raw"] as? [String: Any], "\(json)")
            // Then it is a RAW with a 512 px JPEG preview
            #expect(json["format"] as? String == "raw" && json["pageCount"] as? Int == 1)
            #expect(raw["previewSizes"] as? [[Int]] == [[512, 320]] && raw["previewFormat"] as? String == "jpeg")
            // And imgproxy's `@jxl` and thumbor's `format(jxl)` give JPEG XL from a TIFF
            let imgproxy = try await client.execute(
                uri: "/imgproxy/insecure/rs:fit:64:64/plain/photo.tif@jxl", method: .get)
            let thumbor = try await client.execute(
                uri: "/thumbor/unsafe/64x0/filters:format(jxl)/photo.tif", method: .get)
            #expect(imgproxy.probe?.format == .jxl && imgproxy.probe?.width == 64)
            #expect(thumbor.probe?.format == .jxl && thumbor.probe?.width == 64)
        }
    }

    @Test("the gallery lists every new format beside the photos, and a RAW's thumbnail link answers")
    func gallery() async throws {
        try writeFiles()
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // When the library's first page is asked for
            let html = String(buffer: try await client.execute(uri: "/", method: .get).body)
            // Then each file is a thumbnail on it
            for name in ["photo.tif", "photo.jxl", "camera.dng", "logo.svg", "photo.bmp", "favicon.ico"] {
                #expect(html.contains("alt=\"\(name)\""), "\(name) is not in the gallery")
            }
            // And the RAW's thumbnail, as the gallery asks for it, is an image
            let thumb = try await client.execute(uri: "/v1/thumb?src=camera.dng&w=200&h=200&fit=cover", method: .get)
            #expect(thumb.status == .ok && thumb.probe?.width == 200)
        }
    }

    @Test("format=auto offers JPEG XL only with autoJXL, to a client that accepts it, varying by Accept")
    func jxlNegotiation() async throws {
        let accept = "image/jxl,image/avif,image/webp,*/*;q=0.8"
        // Given the server as it starts by default: JPEG XL is never chosen by negotiation
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let response = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=64", method: .get, headers: [.accept: accept])
            #expect(response.headers[.contentType] == "image/webp")
        }
        // When autoJXL is on
        var configuration = ServerHarness.configuration(root: root)
        configuration.autoJXL = true
        try await ServerHarness.withServer(configuration) { _, client in
            let jxl = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=64", method: .get, headers: [.accept: accept])
            let webp = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=64", method: .get, headers: [.accept: "image/webp,*/*"])
            // Then a client naming image/jxl gets JPEG XL, one that does not gets WebP, both told it varies
            #expect(jxl.headers[.contentType] == "image/jxl" && jxl.probe?.format == .jxl)
            #expect(webp.headers[.contentType] == "image/webp")
            #expect(jxl.headers[.vary] == "Accept" && webp.headers[.vary] == "Accept")
        }
    }

    @Test("page=N (imgproxy's pg:N) picks a TIFF's page; a page the file does not have is 400, never page 0")
    func pages() async throws {
        // Given a three-page TIFF: red, green, blue
        try PageFiles.writeThreePages(to: root + "/pages.tif")
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // When info is asked for, Then it counts the pages
            let info = try await client.execute(uri: "/v1/info?src=pages.tif", method: .get)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(info.bytes)) as? [String: Any])
            #expect(json["pageCount"] as? Int == 3)
            // When each page is asked for, through /v1/thumb and imgproxy's URL
            for page in 0..<3 {
                for uri in [
                    "/v1/thumb?src=pages.tif&w=30&format=png&page=\(page)",
                    "/imgproxy/insecure/rs:fit:30:30/pg:\(page)/plain/pages.tif@png",
                ] {
                    let response = try await client.execute(uri: uri, method: .get)
                    try #require(response.status == .ok, "\(uri): \(response.status)")
                    // Then the thumbnail is that page's colour
                    #expect(try PageFiles.page(shownBy: response.bytes) == page, "\(uri)")
                }
            }
            // When a page past the end, a negative one or a word is asked for, Then 400 with the reason
            for (query, code) in [("page=3", "bad_request"), ("page=-1", "bad_request"), ("page=two", "bad_request")] {
                let response = try await client.execute(uri: "/v1/thumb?src=pages.tif&w=30&\(query)", method: .get)
                #expect(response.status == .badRequest && response.errorCode == code, "\(query): \(response.status)")
            }
            // And a one-page file refuses page=1 the same way
            let still = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=30&page=1", method: .get)
            #expect(still.status == .badRequest)
        }
    }
}
