import Darkroom
import DarkroomImage

/// Parsing of the geometry parameters of `GET /v1/thumb`: gravity, crop and switches.
extension ThumbnailParameters {
    /// imgproxy's gravity: `ce|no|so|ea|we|noea|nowe|soea|sowe[:X:Y]` (offsets in pixels) or `fp:X:Y` (fractions).
    static func gravity(_ value: String) throws(ServerError) -> Gravity? {
        let parts = value.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let bad = ServerError(
            .badRequest,
            "g must be sm, ce, no, so, ea, we, noea, nowe, soea or sowe with optional :X:Y pixel offsets, or fp:X:Y with X and Y in 0...1, got '\(value.prefix(40))'"
        )
        if parts == ["sm"] { return .smart }
        if parts[0] == "fp" {
            guard parts.count == 3, let x = Double(parts[1]), let y = Double(parts[2]), (0...1).contains(x),
                (0...1).contains(y)
            else { throw bad }
            return .focusPoint(x: x, y: y)
        }
        guard parts.count == 1 || parts.count == 3 else { throw bad }
        var dx = 0
        var dy = 0
        if parts.count == 3 {
            guard let x = Int(parts[1]), let y = Int(parts[2]), abs(x) <= 1 << 16, abs(y) <= 1 << 16 else { throw bad }
            (dx, dy) = (x, y)
        }
        switch parts[0] {
        case "ce": return dx == 0 && dy == 0 ? nil : .center(offsetX: dx, offsetY: dy)
        case "no": return .north(offsetX: dx, offsetY: dy)
        case "so": return .south(offsetX: dx, offsetY: dy)
        case "ea": return .east(offsetX: dx, offsetY: dy)
        case "we": return .west(offsetX: dx, offsetY: dy)
        case "noea": return .northEast(offsetX: dx, offsetY: dy)
        case "nowe": return .northWest(offsetX: dx, offsetY: dy)
        case "soea": return .southEast(offsetX: dx, offsetY: dy)
        case "sowe": return .southWest(offsetX: dx, offsetY: dy)
        default: throw bad
        }
    }

    /// `crop=W:H[:GRAVITY]` — a `W × H` region (integer pixels; a decimal below 1 is a fraction of the side; 0 keeps
    /// the side) placed by an imgproxy gravity, centred by default — or `crop=L,T,R,B`, the region between two
    /// corners in pixels (thumbor's manual crop). Both are in the upright source.
    static func crop(_ value: String) throws(ServerError) -> CropRegion {
        if value.contains(",") {
            let corners = value.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard corners.count == 4, let l = corners[0], let t = corners[1], let r = corners[2], let b = corners[3],
                l >= 0, t >= 0, r > l, b > t, r <= 1 << 20, b <= 1 << 20
            else {
                throw ServerError(
                    .badRequest,
                    "crop=L,T,R,B needs four pixel coordinates with L < R and T < B, got '\(value.prefix(40))'")
            }
            return .corners(left: l, top: t, right: r, bottom: b)
        }
        let parts = value.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        func length(_ text: String) throws(ServerError) -> CropRegion.Length? {
            if let n = Int(text), (0...(1 << 20)).contains(n) { return n == 0 ? nil : .pixels(n) }
            if let f = Double(text), f > 0, f < 1 { return .fraction(f) }
            throw ServerError(
                .badRequest,
                "crop=W:H[:GRAVITY] needs W and H as pixels, 0 (the whole side) or a fraction below 1, got '\(value.prefix(40))'"
            )
        }
        guard parts.count >= 2 else {
            throw ServerError(.badRequest, "crop must be W:H[:GRAVITY] or L,T,R,B, got '\(value.prefix(40))'")
        }
        let placement = parts.count == 3 ? try gravity(parts[2]) ?? .center() : .center()
        guard placement != .smart else {
            throw ServerError(.badRequest, "a crop before the resize cannot use g=sm; give a position or focus point")
        }
        let position = placement.cropPosition
        return CropRegion(width: try length(parts[0]), height: try length(parts[1]), position: position)
    }

    /// `FORMAT:Q[:FORMAT:Q…]` with formats jpeg (jpg), png, webp, avif, gif and qualities 1…100.
    static func formatQuality(_ value: String) throws(ServerError) -> [ImageFileFormat: Int] {
        let parts = value.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let bad = ServerError(
            .badRequest, "fq must be FORMAT:QUALITY pairs such as jpeg:80:webp:70, got '\(value.prefix(40))'")
        guard parts.count % 2 == 0, !parts.isEmpty else { throw bad }
        var qualities: [ImageFileFormat: Int] = [:]
        for i in stride(from: 0, to: parts.count, by: 2) {
            guard let format = ImageFileFormat(rawValue: parts[i] == "jpg" ? "jpeg" : parts[i]),
                let q = Int(parts[i + 1]), (1...100).contains(q)
            else { throw bad }
            qualities[format] = q
        }
        return qualities
    }

    /// A switch: `1`/`true`/`t` or `0`/`false`/`f`.
    static func flag(_ value: String, name: String) throws(ServerError) -> Bool {
        switch value {
        case "1", "true", "t": return true
        case "0", "false", "f": return false
        default: throw ServerError(.badRequest, "\(name) must be 1 or 0, got '\(value.prefix(40))'")
        }
    }
}
