import DarkroomSupport
import Foundation
import Testing

@testable import DarkroomServer

/// The translation of imgproxy and thumbor URLs into `/v1/thumb` parameters, and their signatures.
@Suite("imgproxy and thumbor URL parsing")
struct DialectParsingTests {
    func items(_ query: [(name: String, value: String)]) -> [String: String] {
        Dictionary(query.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
    }

    /// imgproxy's documented example: key `secret`, salt `hello`.
    var documented: ServerConfiguration.Imgproxy {
        var c = ServerConfiguration.Imgproxy()
        c.key = Array("secret".utf8)
        c.salt = Array("hello".utf8)
        return c
    }

    @Test func imgproxysPublishedSignatureVerifiesAndTruncates() throws {
        // Given the path and signature from imgproxy's "Signing a URL" page
        let path = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
        // Then it verifies; a changed one does not
        try ImgproxyURL.verify(
            signature: "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8", path: path, configuration: documented)
        #expect(throws: ServerError.self) {
            try ImgproxyURL.verify(
                signature: "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH9", path: path, configuration: documented)
        }
        // And with an 8-byte signature size the first 8 bytes are the signature (11 base64 characters)
        var short = documented
        short.signatureSize = 8
        let truncated = Base64URL.encode(Base64URL.decode("oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8")!.prefix(8))
        #expect(truncated.count == 11)
        try ImgproxyURL.verify(signature: truncated, path: path, configuration: short)
        #expect(throws: ServerError.self) {
            try ImgproxyURL.verify(
                signature: "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8", path: path, configuration: short)
        }
        // And insecure is refused with a key, anything goes without one
        #expect(throws: ServerError.self) {
            try ImgproxyURL.verify(signature: "insecure", path: path, configuration: documented)
        }
        try ImgproxyURL.verify(signature: "_", path: path, configuration: .init())
    }

    @Test func imgproxyOptionsBecomeV1Parameters() throws {
        // Given a plain-source URL using most short names, and a base64 one split over segments
        let plain = try ImgproxyURL(
            path: "/_/rs:fill:300:200:1/g:soea:10:5/c:0.5:0.5/pd:1:2/bg:255:0:0/bl:2/sh:0.5/rot:90/fl:1:0/q:70"
                + "/mb:20000/dpr:2/ex:1/fq:webp:60/plain/photos/a%20b.jpg@webp",
            configuration: .init())
        let base64 = try ImgproxyURL(
            path: "/_/rs:fit:100:0/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png", configuration: .init())
        // Then each maps onto its /v1/thumb parameter
        #expect(plain.query.first?.name == "src" && plain.query.first?.value == "photos/a b.jpg")
        #expect(
            items(plain.query) == [
                "src": "photos/a b.jpg", "fit": "cover", "w": "300", "h": "200", "enlarge": "1", "g": "soea:10:5",
                "crop": "0.5:0.5:soea:10:5", "pad": "1,2,1,2", "bg": "FF0000", "blur": "2", "sharpen": "0.5",
                "rotate": "90", "flip": "h", "q": "70", "max_bytes": "20000", "dpr": "2", "extend": "1",
                "fq": "webp:60", "format": "webp",
            ])
        let minimum = try ImgproxyURL(
            path: "/_/rs:fit:300:200/mw:250/min-height:220/plain/a.jpg", configuration: .init())
        #expect(items(minimum.query)["min-w"] == "250" && items(minimum.query)["min-h"] == "220")
        #expect(
            items(base64.query) == [
                "src": "http://example.com/images/curiosity.jpg", "fit": "contain", "w": "100", "format": "png",
            ])
    }

    @Test func imgproxyOptionsDarkroomLacksAre400sNamingThem() {
        for (path, named) in [
            ("/_/wm:0.5/plain/a.jpg", "wm"), ("/_/z:2/plain/a.jpg", "z"), ("/_/pix:5/plain/a.jpg", "pix"),
            ("/_/ar:0/plain/a.jpg", "ar"), ("/_/w:10/enc/abcdef", "enc"), ("/_/pr:nope/plain/a.jpg", "nope"),
            ("/_/w:10/plain/a.jpg@bmp", "bmp"),
        ] {
            #expect {
                _ = try ImgproxyURL(path: path, configuration: .init())
            } throws: { error in
                let e = error as? ServerError
                return e?.code == .badRequest && e?.message.contains(named) == true
            }
        }
    }

    @Test(
        "Darkroom's hdr option has a spelling in each dialect: imgproxy hdr:MODE[:HEADROOM], thumbor hdr(MODE[,HEADROOM])"
    )
    func hdrInBothDialects() throws {
        // Given an imgproxy and a thumbor URL asking for an HDR rendition with a headroom, and for a kept one
        let imgproxy = try ImgproxyURL(path: "/_/rs:fit:256:0/hdr:apply:1.5/f:avif/plain/a.jpg", configuration: .init())
        let imgproxyKeep = try ImgproxyURL(path: "/_/w:256/hdr:keep/plain/a.jpg", configuration: .init())
        let thumbor = try ThumborURL(
            path: "unsafe/fit-in/256x0/filters:hdr(apply,1.5):format(avif)/a.jpg", configuration: .init())
        let thumborKeep = try ThumborURL(path: "unsafe/fit-in/256x0/filters:hdr(keep)/a.jpg", configuration: .init())
        // Then both become /v1/thumb's hdr and headroom, and a mode alone sets no headroom
        for url in [items(imgproxy.query), items(thumbor.query)] {
            #expect(url["hdr"] == "apply" && url["headroom"] == "1.5" && url["format"] == "avif", "\(url)")
        }
        for url in [items(imgproxyKeep.query), items(thumborKeep.query)] {
            #expect(url["hdr"] == "keep" && url["headroom"] == nil, "\(url)")
        }
        // And a missing mode or a third argument is a 400 naming the option
        for path in ["/_/hdr:/plain/a.jpg", "/_/hdr:apply:1:2/plain/a.jpg"] {
            #expect {
                _ = try ImgproxyURL(path: path, configuration: .init())
            } throws: {
                ($0 as? ServerError)?.code == .badRequest && ($0 as? ServerError)?.message.contains("hdr") == true
            }
        }
        for path in ["unsafe/filters:hdr()/a.jpg", "unsafe/filters:hdr(apply,1,2)/a.jpg"] {
            #expect {
                _ = try ThumborURL(path: path, configuration: .init())
            } throws: {
                ($0 as? ServerError)?.code == .badRequest && ($0 as? ServerError)?.message.contains("hdr") == true
            }
        }
    }

    @Test func presetsExpandAndOnlyPresetsRefusesTheRest() throws {
        // Given a default preset and a named one
        var c = ServerConfiguration.Imgproxy()
        c.presets = ["default": "q:60", "card": "rs:fill:300:200/sh:0.5"]
        // When an imgproxy URL and a /v1 query use the named one
        let url = try ImgproxyURL(path: "/_/pr:card/w:320/plain/a.jpg", configuration: c)
        let v1 = try ImgproxyURL.expandingPresets(
            [("src", "a.jpg"), ("preset", "card"), ("h", "240")], configuration: c)
        // Then the preset's options apply, later and explicit ones win, and the default applies first
        #expect(
            items(url.query) == ["src": "a.jpg", "fit": "cover", "w": "320", "h": "200", "sharpen": "0.5", "q": "60"])
        #expect(items(v1) == ["src": "a.jpg", "fit": "cover", "w": "300", "h": "240", "sharpen": "0.5", "q": "60"])
        // And with only presets, a preset name alone works and any other option is refused
        c.onlyPresets = true
        let only = try ImgproxyURL(path: "/_/card/plain/a.jpg", configuration: c)
        #expect(items(only.query)["w"] == "300")
        #expect(throws: ServerError.self) { _ = try ImgproxyURL(path: "/_/w:10/plain/a.jpg", configuration: c) }
        #expect(throws: ServerError.self) {
            _ = try ImgproxyURL.expandingPresets([("src", "a.jpg"), ("w", "10")], configuration: c)
        }
    }

    @Test func thumborsGrammarBecomesV1Parameters() throws {
        // Given unsafe URLs covering the grammar
        let c = ServerConfiguration.Thumbor()
        let full = try ThumborURL(
            path: "unsafe/trim:top-left:5/10x20:310x220/-300x-200/right/bottom/filters:quality(70):blur(2):"
                + "sharpen(1.5,0.8,false):max_bytes(30000):no_upscale()/https%3A%2F%2Fexample.com%2Fa.jpg",
            configuration: c)
        let fitIn = try ThumborURL(
            path: "unsafe/fit-in/400x0/filters:fill(white):format(webp)/a/b.png", configuration: c)
        let outside = try ThumborURL(path: "unsafe/full-fit-in/200x200/a.jpg", configuration: c)
        let turned = try ThumborURL(path: "unsafe/300x200/filters:rotate(90):grayscale()/a.jpg", configuration: c)
        // Then each maps onto its /v1/thumb parameter
        #expect(
            items(full.query) == [
                "src": "https://example.com/a.jpg", "trim": "5", "crop": "10,20,310,220", "w": "300", "h": "200",
                "fit": "cover", "g": "soea", "flip": "hv", "q": "70", "blur": "2.0", "sharpen": "0.8,1.5",
                "max_bytes": "30000", "enlarge": "0",
            ])
        #expect(
            items(fitIn.query) == [
                "src": "a/b.png", "fit": "contain", "w": "400", "extend": "1", "bg": "FFFFFF", "format": "webp",
                "enlarge": "0",
            ])
        #expect(items(outside.query)["fit"] == "outside")
        // And rotate (counter-clockwise in thumbor) turns clockwise by 270, its box the turned output
        #expect(items(turned.query)["rotate"] == "270" && items(turned.query)["w"] == "200")
        #expect(items(turned.query)["grayscale"] == "1" && items(turned.query)["enlarge"] == "1")
        // And what Darkroom lacks is refused by name
        for (path, named) in [
            ("unsafe/meta/a.jpg", "meta"), ("unsafe/adaptive-fit-in/10x10/a.jpg", "adaptive"),
            ("unsafe/filters:watermark(x.png,0,0,0)/a.jpg", "watermark"),
            ("unsafe/filters:sharpen(1,1,true)/a.jpg", "luminance_only"),
        ] {
            #expect {
                _ = try ThumborURL(path: path, configuration: c)
            } throws: { error in (error as? ServerError)?.message.contains(named) == true }
        }
    }

    @Test func thumborSignaturesAreCheckedAndUnsafeIsAChoice() throws {
        // Given a key
        var c = ServerConfiguration.Thumbor()
        c.key = "k"
        // Then unsafe is refused unless allowed, and a signature made with another key is refused
        #expect(throws: ServerError.self) { _ = try ThumborURL(path: "unsafe/10x10/a.jpg", configuration: c) }
        #expect(throws: ServerError.self) {
            _ = try ThumborURL(path: "AAAAAAAAAAAAAAAAAAAAAAAAAAA=/10x10/a.jpg", configuration: c)
        }
        c.allowUnsafe = true
        _ = try ThumborURL(path: "unsafe/10x10/a.jpg", configuration: c)
        // And without a key signed URLs cannot be checked, so they are refused
        #expect(throws: ServerError.self) {
            _ = try ThumborURL(path: "AAAAAAAAAAAAAAAAAAAAAAAAAAA=/10x10/a.jpg", configuration: .init())
        }
    }
}
