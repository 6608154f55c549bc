import Crypto
import DarkroomSupport
import Foundation

/// thumbor's URL dialect, translated into the `/v1/thumb` query vocabulary so both render the same pixels:
/// `/(unsafe|SIGNATURE)/[trim[:top-left][:T]/][AxB:CxD/][fit-in/|full-fit-in/][-]Wx[-]H/[left|center|right/]`
/// `[top|middle|bottom/][smart/][filters:NAME(ARGS):…/]IMAGE`, IMAGE a path under the root or a URL (either may be
/// percent-encoded).
///
/// Signature: URL-safe base64 (padded, as libthumbor writes it) of HMAC-SHA1(key, the path after the signature).
/// Without fit-in the image is cropped to fill the box and enlarged when smaller, unless `no_upscale()`; fit-in
/// never enlarges unless `upscale()`. Filters: quality, format, fill, blur, sharpen, grayscale, rotate (counter-
/// clockwise, as thumbor's PIL engine), strip_icc, strip_exif, no_upscale, upscale, max_bytes; any other is
/// refused with a 400 that names it. Cost: one HMAC and a pass over the path.
package struct ThumborURL {
    /// The translated query items (`src` first).
    package private(set) var query: [(name: String, value: String)] = []

    /// Parses and verifies `path` — everything after the `/thumbor` prefix, as received (percent-encoded).
    /// - Throws: ``ServerError`` `badSignature` (403) for a wrong or disallowed signature, `badRequest` (400) for
    ///   malformed or unsupported parts.
    package init(path: String, configuration: ServerConfiguration.Thumbor) throws(ServerError) {
        var rest = Substring(path.hasPrefix("/") ? path.dropFirst() : Substring(path))
        guard let slash = rest.firstIndex(of: "/") else {
            throw ServerError(.badRequest, "a thumbor URL is /unsafe/… or /SIGNATURE/…")
        }
        let signature = String(rest[..<slash])
        rest = rest[rest.index(after: slash)...]
        try Self.verify(signature: signature, signed: String(rest), configuration: configuration)

        var segments = rest.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        var items: [String: String] = [:]
        func next(_ matches: (String) -> Bool) -> String? {
            guard let first = segments.first, segments.count > 1, matches(first) else { return nil }
            return segments.removeFirst()
        }
        if next({ $0 == "meta" }) != nil { throw ServerError(.badRequest, "thumbor's meta endpoint is not supported") }
        if let trim = next({ $0 == "trim" || $0.hasPrefix("trim:") }) {
            let parts = trim.split(separator: ":").map(String.init)
            if parts.contains("bottom-right") {
                throw ServerError(.badRequest, "trim:bottom-right is not supported; trim uses the top-left pixel")
            }
            items["trim"] = parts.last.flatMap { Int($0) }.map(String.init) ?? "0"
        }
        if let crop = next({ $0.range(of: #"^\d+x\d+:\d+x\d+$"#, options: .regularExpression) != nil }) {
            let n = crop.split(whereSeparator: { $0 == "x" || $0 == ":" }).map(String.init)
            items["crop"] = n.joined(separator: ",")
        }
        var fitIn: String?
        if let fit = next({ ["fit-in", "full-fit-in", "adaptive-fit-in", "adaptive-full-fit-in"].contains($0) }) {
            guard !fit.hasPrefix("adaptive") else {
                throw ServerError(.badRequest, "thumbor's \(fit) is not supported; use fit-in or full-fit-in")
            }
            fitIn = fit
        }
        var width = 0
        var height = 0
        var flips = ""
        if let size = next({ $0.range(of: #"^(-?(\d+|orig)?)x(-?(\d+|orig)?)$"#, options: .regularExpression) != nil })
        {
            let sides = size.split(separator: "x", omittingEmptySubsequences: false).map(String.init)
            func side(_ text: String, flip: String) -> Int {
                var t = text
                if t.hasPrefix("-") {
                    flips += flip
                    t.removeFirst()
                }
                return t == "orig" ? 0 : Int(t) ?? 0  // "orig" and 0: the source's own size (proportional)
            }
            width = side(sides[0], flip: "h")
            height = side(sides[1], flip: "v")
        }
        let halign = next({ ["left", "center", "right"].contains($0) }) ?? "center"
        let valign = next({ ["top", "middle", "bottom"].contains($0) }) ?? "middle"
        if next({ $0 == "smart" }) != nil { items["g"] = "sm" }
        var upscale: Bool?
        var quarterTurns = 0
        if let filters = next({ $0.hasPrefix("filters:") }) {
            try Self.filters(String(filters.dropFirst("filters:".count)), &items, &upscale, &quarterTurns)
        }
        guard let source = segments.joined(separator: "/").removingPercentEncoding, !source.isEmpty else {
            throw ServerError(.badRequest, "the thumbor URL names no image")
        }

        // The box: thumbor resizes first and rotates last, so a quarter turn swaps the sides of the output
        let (w, h) = quarterTurns % 2 == 1 ? (height, width) : (width, height)
        if w > 0 { items["w"] = String(w) }
        if h > 0 { items["h"] = String(h) }
        switch fitIn {
        case "fit-in": items["fit"] = "contain"
        case "full-fit-in": items["fit"] = "outside"
        default:
            // Crop mode: fill the box when both sides are given, else scale to the one given
            items["fit"] = w > 0 && h > 0 ? "cover" : "contain"
            if w > 0 && h > 0 && items["g"] == nil, let g = Self.gravity(halign, valign) { items["g"] = g }
        }
        if w > 0 || h > 0 { items["enlarge"] = (upscale ?? (fitIn == nil)) ? "1" : "0" }
        if quarterTurns != 0 { items["rotate"] = String((4 - quarterTurns) % 4 * 90) }  // to clockwise
        if !flips.isEmpty { items["flip"] = flips }
        if items["extend"] != nil && fitIn == nil { items["extend"] = nil }  // fill pads fit-in results only
        query = [("src", source)] + items.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Checks the signature: `unsafe` when allowed, else the HMAC-SHA1 of `signed` (tried as received, then
    /// percent-decoded, as thumbor does).
    static func verify(signature: String, signed: String, configuration: ServerConfiguration.Thumbor)
        throws(ServerError)
    {
        if signature == "unsafe" {
            guard configuration.key == nil || configuration.allowUnsafe else {
                throw ServerError(.badSignature, "unsafe thumbor URLs are not allowed on this server")
            }
            return
        }
        guard let key = configuration.key else {
            throw ServerError(.badSignature, "this server has no thumbor key: only /unsafe/ URLs are served")
        }
        // Compared as text (padding optional), so the unused low bits of the last digit cannot vary; constant-time
        let given = Array((signature.hasSuffix("=") ? signature : signature + "=").utf8)
        let symmetric = SymmetricKey(data: Array(key.utf8))
        for candidate in [signed, signed.removingPercentEncoding ?? signed] {
            let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Array(candidate.utf8), using: symmetric)
            let expected = Array(Base64URL.encode(Data(mac), padded: true).utf8)
            if given.count == expected.count, zip(given, expected).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0 {
                return
            }
        }
        throw ServerError(.badSignature, "wrong thumbor signature")
    }

    /// imgproxy-style gravity for thumbor's alignments; `nil` for the centre.
    private static func gravity(_ halign: String, _ valign: String) -> String? {
        let v = ["top": "no", "middle": "", "bottom": "so"][valign] ?? ""
        let h = ["left": "we", "center": "", "right": "ea"][halign] ?? ""
        switch (v, h) {
        case ("", ""): return nil
        case ("", _): return h
        case (_, ""): return v
        default: return v + (h == "we" ? "we" : "ea")
        }
    }

    /// Applies `name(args):name(args)…`.
    private static func filters(
        _ text: String, _ items: inout [String: String], _ upscale: inout Bool?, _ quarterTurns: inout Int
    ) throws(ServerError) {
        var rest = Substring(text)
        while !rest.isEmpty {
            guard let open = rest.firstIndex(of: "("), let close = rest[open...].firstIndex(of: ")") else {
                throw ServerError(.badRequest, "thumbor filters are name(args) joined by ':', got '\(text.prefix(60))'")
            }
            let name = String(rest[..<open])
            let args = rest[rest.index(after: open)..<close].split(separator: ",", omittingEmptySubsequences: false)
                .map { String($0).trimmingCharacters(in: .whitespaces) }
            rest = rest[rest.index(after: close)...]
            if rest.first == ":" { rest = rest.dropFirst() }
            func bad(_ why: String) -> ServerError { ServerError(.badRequest, "thumbor filter \(name): \(why)") }
            switch name {
            case "quality": items["q"] = args.first
            case "format":
                guard let f = args.first?.lowercased(),
                    ["jpeg", "jpg", "png", "webp", "gif", "avif", "jxl"].contains(f)
                else {
                    throw bad("format must be jpeg, png, webp, gif, avif or jxl")
                }
                items["format"] = f == "jpg" ? "jpeg" : f
            case "fill":
                guard let color = args.first.flatMap(Self.color) else {
                    throw bad("the colour must be hex (RGB or RRGGBB), transparent, white, black, red, green or blue")
                }
                items["extend"] = "1"
                items["bg"] = color
            case "blur":
                guard let radius = args.first.flatMap(Double.init), radius >= 0 else { throw bad("needs a radius") }
                let sigma = args.count > 1 ? Double(args[1]) ?? radius : radius
                if sigma > 0 { items["blur"] = String(sigma) }
            case "sharpen":
                guard args.count >= 2, let amount = Double(args[0]), let radius = Double(args[1]) else {
                    throw bad("needs amount and radius")
                }
                if args.count > 2, ["true", "1"].contains(args[2].lowercased()) {
                    throw bad("luminance_only=true is not supported; every channel is sharpened")
                }
                items["sharpen"] = "\(radius),\(amount)"
            case "grayscale": items["grayscale"] = "1"
            case "rotate":
                guard let angle = args.first.flatMap(Int.init), angle % 90 == 0 else {
                    throw bad("the angle must be a multiple of 90")
                }
                quarterTurns = ((angle / 90) % 4 + 4) % 4
            case "strip_icc", "strip_exif": continue  // thumbnails never carry either
            case "no_upscale": upscale = false
            case "upscale": upscale = true
            case "max_bytes": items["max_bytes"] = args.first
            case "still":  // thumbor-video-engine's: a video's frame at a time (seconds or [HH:]MM:SS[.fff]), else 0
                guard args.count <= 1, let seconds = Self.seconds(args.first ?? "") else {
                    throw bad("takes a time in seconds or [HH:]MM:SS[.fff]")
                }
                items["time"] = String(seconds)
            case "hdr":  // Darkroom's own (thumbor has no HDR filter): hdr(sdr|keep|apply[,headroom])
                guard let mode = args.first, !mode.isEmpty, args.count <= 2 else {
                    throw bad("takes a mode (sdr, keep or apply) and, for apply, a headroom in stops")
                }
                items["hdr"] = mode
                items["headroom"] = args.count > 1 ? args[1] : nil
            default: throw ServerError(.badRequest, "thumbor filter '\(name.prefix(40))' is not supported by Darkroom")
            }
        }
    }

    /// `RRGGBB` (or `RRGGBB00` for transparent) for thumbor's colour names and hex.
    private static func color(_ text: String) -> String? {
        let names = [
            "white": "FFFFFF", "black": "000000", "red": "FF0000", "green": "008000", "blue": "0000FF",
            "transparent": "00000000",
        ]
        if let named = names[text.lowercased()] { return named }
        let hex = text.hasPrefix("#") ? String(text.dropFirst()) : text
        guard [3, 6].contains(hex.count), UInt32(hex, radix: 16) != nil else { return nil }
        return hex.count == 3 ? hex.map { "\($0)\($0)" }.joined() : hex
    }

    /// A time as thumbor-video-engine's `still()` takes it: empty (the start), seconds, or `[HH:]MM:SS[.fff]` as
    /// ffmpeg's `-ss` reads it; nil when it is none of those.
    static func seconds(_ text: String) -> Double? {
        if text.isEmpty { return 0 }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (index, part) in parts.enumerated() {
            let isLast = index == parts.count - 1
            guard let value = isLast ? Double(part) : Double(Int(part) ?? -1), value >= 0, value.isFinite else {
                return nil
            }
            guard index == 0 || value < 60 else { return nil }  // minutes and seconds under a higher unit
            total = total * 60 + value
        }
        return total
    }
}
