import Crypto
import DarkroomSupport
import Foundation

/// imgproxy's URL dialect, translated into the `/v1/thumb` query vocabulary so both render the same pixels:
/// `/{signature}/{options}/plain/{percent-encoded source}[@{ext}]` and `/{signature}/{options}/{base64url source}[.{ext}]`
/// (the base64 may be split by `/`), options as `name:arg:arg` segments with imgproxy's long or short names.
///
/// Signature (with a key): URL-safe base64, unpadded, of the first ``ServerConfiguration/Imgproxy/signatureSize``
/// bytes of HMAC-SHA256(key, salt + the path after the signature); without a key any signature is accepted, with
/// one `insecure` and `_` are refused like any other wrong signature. Options Darkroom does not implement are
/// refused with a 400 that names them, never ignored. Cost: one HMAC and a pass over the path.
package struct ImgproxyURL {
    /// The translated query items (`src` first).
    package private(set) var query: [(name: String, value: String)] = []

    /// Parses and verifies `path` — everything after the `/imgproxy` prefix, as received (percent-encoded).
    /// - Throws: ``ServerError`` `badSignature` (403) for a wrong signature, `badRequest` (400) for malformed or
    ///   unsupported options, `notFound` for an expired link.
    package init(path: String, configuration: ServerConfiguration.Imgproxy) throws(ServerError) {
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if segments.first == "" { segments.removeFirst() }
        guard segments.count >= 2 else {
            throw ServerError(.badRequest, "an imgproxy URL is /SIGNATURE/OPTIONS/SOURCE, got '\(path.prefix(80))'")
        }
        let signature = segments.removeFirst()
        try Self.verify(signature: signature, path: "/" + segments.joined(separator: "/"), configuration: configuration)

        // Options run up to `plain` or to the first segment without a colon (base64url has none)
        var options: [String] = []
        if configuration.onlyPresets {
            // One segment of preset names joined by colons (`pr:` optional)
            let names = segments.removeFirst()
            options = [names.hasPrefix("pr:") || names.hasPrefix("preset:") ? names : "pr:" + names]
        } else {
            while let first = segments.first, first != "plain", first.contains(":") {
                options.append(segments.removeFirst())
            }
        }
        if segments.first == "enc" {
            throw ServerError(.badRequest, "imgproxy's encrypted sources (/enc/) are not supported by Darkroom")
        }
        let (source, ext) = try Self.source(segments)
        var items: [String: String] = [:]
        if let defaults = configuration.presets["default"] {
            try Self.apply(defaults.split(separator: "/").map(String.init), to: &items, configuration, depth: 1)
        }
        try Self.apply(options, to: &items, configuration, depth: 0)
        if let ext { items["format"] = ext }
        // imgproxy's gravity also places a crop that names none, and is ignored by resizes that do not cut
        if let g = items["g"], let crop = items["crop"], crop.split(separator: ":").count == 2 {
            items["crop"] = crop + ":" + g
        }
        if items["fit"] != "cover" { items["g"] = nil }
        query = [("src", source)] + items.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// `query` with its `preset=NAME[:NAME…]` items replaced by those presets' options (and the `default` preset
    /// first, when defined); items the query names itself win over the presets'. With
    /// ``ServerConfiguration/Imgproxy/onlyPresets`` a query may hold only `src`, `preset`, `format` and `sig`.
    package static func expandingPresets(
        _ query: [(name: String, value: String)], configuration: ServerConfiguration.Imgproxy
    ) throws(ServerError) -> [(name: String, value: String)] {
        let names = query.filter { $0.name == "preset" }.flatMap { $0.value.split(separator: ":").map(String.init) }
        if configuration.onlyPresets,
            let other = query.first(where: { !["src", "preset", "format", "sig"].contains($0.name) })
        {
            throw ServerError(.badRequest, "this server accepts presets only, not '\(other.name.prefix(40))'")
        }
        guard !names.isEmpty || configuration.presets["default"] != nil else { return query }
        var items: [String: String] = [:]
        if let defaults = configuration.presets["default"] {
            try apply(defaults.split(separator: "/").map(String.init), to: &items, configuration, depth: 1)
        }
        if !names.isEmpty { try apply(["pr:" + names.joined(separator: ":")], to: &items, configuration, depth: 1) }
        let own = Set(query.map(\.name))
        let fromPresets = items.filter { !own.contains($0.key) }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        return query.filter { $0.name != "preset" } + fromPresets
    }

    /// Checks the signature (see the type's summary).
    static func verify(signature: String, path: String, configuration: ServerConfiguration.Imgproxy)
        throws(ServerError)
    {
        guard let key = configuration.key else { return }
        let mac = HMAC<SHA256>.authenticationCode(
            for: configuration.salt + Array(path.utf8), using: SymmetricKey(data: key))
        // Compared as text, so the unused low bits of the last base64 digit cannot vary; constant-time
        let expected = Array(Base64URL.encode(Data(mac).prefix(configuration.signatureSize)).utf8)
        let given = Array(signature.utf8)
        guard given.count == expected.count, zip(given, expected).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0
        else { throw ServerError(.badSignature, "wrong imgproxy signature") }
    }

    /// The source and the extension asked for, from the segments after the options.
    private static func source(_ segments: [String]) throws(ServerError) -> (String, String?) {
        var segments = segments
        var source: String
        var ext: String?
        if segments.first == "plain" {
            segments.removeFirst()
            var raw = segments.joined(separator: "/")
            if let at = raw.lastIndex(of: "@") {
                ext = String(raw[raw.index(after: at)...])
                raw = String(raw[..<at])
            }
            guard let decoded = raw.removingPercentEncoding else {
                throw ServerError(.badRequest, "the plain source is not valid percent-encoding")
            }
            source = decoded
        } else {
            var raw = segments.joined()
            if let dot = raw.lastIndex(of: ".") {
                ext = String(raw[raw.index(after: dot)...])
                raw = String(raw[..<dot])
            }
            guard let bytes = Base64URL.decode(raw), let text = String(bytes: bytes, encoding: .utf8) else {
                throw ServerError(.badRequest, "the source is not URL-safe base64")
            }
            source = text
        }
        guard !source.isEmpty else { throw ServerError(.badRequest, "the imgproxy URL names no source") }
        // imgproxy names local files `local:///path`; Darkroom's are paths under the root
        if source.hasPrefix("local:///") { source = String(source.dropFirst("local:///".count)) }
        if let e = ext, e.isEmpty { ext = nil }
        return (source, try ext.map(format))
    }

    private static func format(_ ext: String) throws(ServerError) -> String {
        switch ext.lowercased() {
        case "jpg", "jpeg": "jpeg"
        case "png": "png"
        case "webp": "webp"
        case "avif": "avif"
        case "gif": "gif"
        case "jxl": "jxl"
        case "ico": "ico"
        case "best": "auto"
        default: throw ServerError(.badRequest, "imgproxy format '\(ext.prefix(20))' is not supported by Darkroom")
        }
    }

    /// Applies option segments in order (a later one overrides an earlier one), expanding presets.
    private static func apply(
        _ options: [String], to items: inout [String: String], _ configuration: ServerConfiguration.Imgproxy,
        depth: Int
    ) throws(ServerError) {
        for option in options {
            let parts = option.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let name = parts[0]
            let args = Array(parts.dropFirst())
            func arg(_ i: Int) -> String? { i < args.count && !args[i].isEmpty ? args[i] : nil }
            func bool(_ i: Int) throws(ServerError) -> Bool? {
                guard let a = arg(i) else { return nil }
                switch a {
                case "1", "t", "true": return true
                case "0", "f", "false": return false
                default: throw ServerError(.badRequest, "imgproxy option \(name): '\(a.prefix(20))' is not a boolean")
                }
            }
            func size(_ i: Int, _ key: String) {
                guard let a = arg(i) else { return }
                items[key] = a == "0" ? nil : a
            }
            func refuse(_ why: String) -> ServerError {
                ServerError(.badRequest, "imgproxy option '\(name)' \(why)")
            }
            switch name {
            case "resize", "rs":
                if let t = arg(0) { items["fit"] = try resizingType(t) }
                size(1, "w")
                size(2, "h")
                if let e = try bool(3) { items["enlarge"] = e ? "1" : "0" }
                if let x = try bool(4) {
                    items["extend"] = x ? (args.count > 5 ? args[5...].joined(separator: ":") : "1") : "0"
                }
            case "size", "s":
                size(0, "w")
                size(1, "h")
                if let e = try bool(2) { items["enlarge"] = e ? "1" : "0" }
                if let x = try bool(3) {
                    items["extend"] = x ? (args.count > 4 ? args[4...].joined(separator: ":") : "1") : "0"
                }
            case "resizing_type", "rt": items["fit"] = try resizingType(arg(0) ?? "")
            case "width", "w": size(0, "w")
            case "height", "h": size(0, "h")
            case "dpr": items["dpr"] = arg(0)
            case "page", "pg": items["page"] = arg(0)
            case "video_thumbnail_second", "vts": items["time"] = arg(0)
            case "min-width", "mw": size(0, "min-w")
            case "min-height", "mh": size(0, "min-h")
            case "enlarge", "el": items["enlarge"] = try bool(0) == true ? "1" : "0"
            case "extend", "ex":
                items["extend"] = try bool(0) == true ? (args.count > 1 ? args[1...].joined(separator: ":") : "1") : "0"
            case "gravity", "g":
                guard let g = arg(0) else { throw refuse("needs a gravity") }
                if g == "sm" { items["g"] = "sm" } else { items["g"] = args.joined(separator: ":") }
            case "crop", "c":
                guard args.count >= 2 else { throw refuse("needs a width and a height") }
                items["crop"] = args.joined(separator: ":")
            case "padding", "pd":
                let v = args.map { $0.isEmpty ? "0" : $0 }
                let sides: [String]
                switch v.count {
                case 1: sides = [v[0], v[0], v[0], v[0]]
                case 2: sides = [v[0], v[1], v[0], v[1]]
                case 3: sides = [v[0], v[1], v[2], v[1]]
                case 4: sides = v
                default: throw refuse("takes one to four sizes")
                }
                items["pad"] = sides.joined(separator: ",")
            case "background", "bg": items["bg"] = try color(args)
            case "blur", "bl": items["blur"] = arg(0) == "0" ? nil : arg(0)
            case "sharpen", "sh": items["sharpen"] = arg(0) == "0" ? nil : arg(0)
            case "rotate", "rot": items["rotate"] = arg(0)
            case "flip", "fl":
                let h = try bool(0) ?? false
                let v = try bool(1) ?? false
                items["flip"] = h || v ? (h ? "h" : "") + (v ? "v" : "") : nil
            case "quality", "q": items["q"] = arg(0) == "0" ? nil : arg(0)
            case "format_quality", "fq": items["fq"] = args.joined(separator: ":")
            case "max_bytes", "mb": items["max_bytes"] = arg(0) == "0" ? nil : arg(0)
            case "format", "f", "ext": items["format"] = try format(arg(0) ?? "")
            case "trim", "t": items["trim"] = arg(0).map { String(Int(Double($0) ?? -1)) } ?? "10"
            case "expires", "exp": items["expires"] = arg(0)
            case "hdr":  // Darkroom's own (imgproxy has no per-URL HDR option): hdr:sdr|keep|apply[:headroom]
                guard let mode = arg(0), !mode.isEmpty, args.count <= 2 else {
                    throw refuse("takes a mode (sdr, keep or apply) and, for apply, a headroom in stops")
                }
                items["hdr"] = mode
                items["headroom"] = arg(1)
            case "cachebuster", "cb": continue  // changes the URL only, as in imgproxy
            case "strip_metadata", "sm": items["strip"] = try bool(0) == false ? "0" : "1"
            case "keep_copyright", "kcr": items["keep_copyright"] = try bool(0) == true ? "1" : "0"
            case "strip_color_profile", "scp":
                guard try bool(0) != false else {
                    throw refuse("false is not supported per request; start the server with --keep-color-profile")
                }
            case "auto_rotate", "ar":
                guard try bool(0) != false else { throw refuse("false is not supported: Darkroom always auto-rotates") }
            case "preset", "pr":
                guard depth < 4 else { throw refuse("nests presets too deeply") }
                for presetName in args {
                    guard let preset = configuration.presets[presetName] else {
                        throw ServerError(.badRequest, "unknown imgproxy preset '\(presetName.prefix(40))'")
                    }
                    try apply(
                        preset.split(separator: "/").map(String.init), to: &items, configuration, depth: depth + 1)
                }
            default:
                throw ServerError(.badRequest, "imgproxy option '\(name.prefix(40))' is not supported by Darkroom")
            }
            if configuration.onlyPresets && depth == 0 && name != "pr" && name != "preset" {
                throw ServerError(.badRequest, "this server accepts presets only")
            }
        }
    }

    private static func resizingType(_ type: String) throws(ServerError) -> String {
        switch type {
        case "fit": "contain"
        case "fill": "cover"
        case "fill-down": "fill-down"
        case "force": "force"
        case "auto": "auto"
        default: throw ServerError(.badRequest, "imgproxy resizing type '\(type.prefix(20))' is not supported")
        }
    }

    /// `R:G:B` in decimal or `RGB`/`RRGGBB` in hex, as `RRGGBB`.
    private static func color(_ args: [String]) throws(ServerError) -> String {
        if args.count == 3 {
            let channels = args.compactMap { UInt8($0) }
            guard channels.count == 3 else { throw ServerError(.badRequest, "imgproxy background: R:G:B are 0...255") }
            return Hex.encode(channels, uppercase: true)
        }
        guard args.count == 1, [3, 6].contains(args[0].count), UInt32(args[0], radix: 16) != nil else {
            throw ServerError(.badRequest, "imgproxy background must be R:G:B or a hex colour")
        }
        return args[0].count == 3 ? args[0].map { "\($0)\($0)" }.joined() : args[0]
    }
}
