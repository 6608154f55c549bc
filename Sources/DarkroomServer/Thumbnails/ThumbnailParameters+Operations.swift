import Darkroom
import DarkroomImage

/// The image operations of a `GET /v1/thumb` request, applied after the resize, in imgproxy's order:
/// `rotate`/`flip`, `blur`, `sharpen`, `extend` (to the box), `pad`, then `bg` (flattening onto a colour). Each becomes one of the library's processors,
/// so pipeline users get the same pixels.
struct ThumbnailOperations: Sendable, Hashable {
    /// Clockwise quarter turns (`rotate=90|180|270`).
    var quarterTurns = 0
    /// `flip=h|v|hv`.
    var flipsHorizontally = false
    var flipsVertically = false
    /// `blur=SIGMA` (0.1…100 pixels).
    var blur: Double?
    /// `sharpen=SIGMA[,AMOUNT]` (0.1…100 pixels; amount 0.1…10, default 1).
    var sharpen: Double?
    var sharpenAmount = 1.0
    /// `pad=T,R,B,L` in output pixels (each 0…the output limit; one value pads all sides).
    var padding: [Int]?
    /// `bg=RRGGBB[AA]`: the colour transparency is flattened onto, and the padding's colour.
    var background: RGBAColor?
    /// `grayscale=1`.
    var grayscale = false
    /// `trim=T`: cut away a border of the top-left pixel's colour, within T (0…255) per channel, after the resize.
    var trim: Int?
    /// `extend=1|GRAVITY`: a result smaller than the box is padded up to it, placed by the gravity.
    var extend: Gravity?

    /// Reads one query item; false when `name` is not an operation.
    mutating func read(_ name: String, _ value: String, maxPadding: Int) throws(ServerError) -> Bool {
        switch name {
        case "rotate":
            guard let degrees = Int(value), [0, 90, 180, 270].contains(degrees) else {
                throw ServerError(.badRequest, "rotate must be 0, 90, 180 or 270, got '\(value.prefix(40))'")
            }
            quarterTurns = degrees / 90
        case "flip":
            guard ["h", "v", "hv", "vh"].contains(value) else {
                throw ServerError(.badRequest, "flip must be h, v or hv, got '\(value.prefix(40))'")
            }
            flipsHorizontally = value.contains("h")
            flipsVertically = value.contains("v")
        case "blur": blur = try Self.sigma(value, name: name)
        case "sharpen":
            let parts = value.split(separator: ",", maxSplits: 1).map(String.init)
            sharpen = try Self.sigma(parts.first ?? "", name: name)
            if parts.count == 2 {
                guard let amount = Double(parts[1]), amount.isFinite, (0.1...10).contains(amount) else {
                    throw ServerError(.badRequest, "sharpen's amount must be 0.1...10, got '\(value.prefix(40))'")
                }
                sharpenAmount = amount
            }
        case "pad":
            let sides = value.split(separator: ",", omittingEmptySubsequences: false).map { Int($0) }
            guard sides.count == 1 || sides.count == 4, sides.allSatisfy({ ($0 ?? -1) >= 0 && $0! <= maxPadding })
            else {
                throw ServerError(
                    .badRequest, "pad must be one or four integers 0...\(maxPadding), got '\(value.prefix(40))'")
            }
            padding = sides.count == 1 ? Array(repeating: sides[0]!, count: 4) : sides.map { $0! }
        case "grayscale": grayscale = try ThumbnailParameters.flag(value, name: name)
        case "trim":
            guard let tolerance = Int(value), (0...255).contains(tolerance) else {
                throw ServerError(.badRequest, "trim must be a tolerance 0...255, got '\(value.prefix(40))'")
            }
            trim = tolerance
        case "extend":
            switch value {
            case "0", "false": extend = nil
            case "1", "true": extend = .center()
            default:
                do {
                    extend = try ThumbnailParameters.gravity(value) ?? .center()
                    if extend == .smart { throw ServerError(.badRequest, "") }
                } catch {
                    throw ServerError(
                        .badRequest, "extend must be 1, 0 or a gravity such as no or soea, got '\(value.prefix(40))'")
                }
            }
        case "bg":
            guard let color = Self.color(value) else {
                throw ServerError(.badRequest, "bg must be RRGGBB or RRGGBBAA in hex, got '\(value.prefix(40))'")
            }
            background = color
        default: return false
        }
        return true
    }

    /// Whether a clockwise turn swaps the output's width and height.
    var swapsSides: Bool { quarterTurns % 2 == 1 }

    /// The processors, in the order they apply; `box` is the output box `extend` pads to.
    func processors(box: (width: Int?, height: Int?)) -> [any ImageProcessing] {
        var list: [any ImageProcessing] = []
        if quarterTurns != 0 || flipsHorizontally || flipsVertically {
            list.append(
                ImageProcessors.Rotate(
                    quarterTurns: quarterTurns, flipsHorizontally: flipsHorizontally, flipsVertically: flipsVertically))
        }
        if let blur { list.append(ImageProcessors.GaussianBlur(sigma: blur)) }
        if let sharpen { list.append(ImageProcessors.Sharpen(sigma: sharpen, amount: sharpenAmount)) }
        if grayscale { list.append(ImageProcessors.Grayscale()) }
        if let extend, box.width != nil || box.height != nil {
            list.append(
                ImageProcessors.Extend(
                    width: box.width ?? 0, height: box.height ?? 0, gravity: extend,
                    color: background ?? RGBAColor(red: 0, green: 0, blue: 0, alpha: 0)))
        }
        if let padding {
            list.append(
                ImageProcessors.Pad(
                    top: padding[0], right: padding[1], bottom: padding[2], left: padding[3],
                    color: background ?? RGBAColor(red: 0, green: 0, blue: 0, alpha: 0)))
        }
        if let background { list.append(ImageProcessors.Flatten(background: background)) }
        return list
    }

    private static func sigma(_ value: String, name: String) throws(ServerError) -> Double {
        guard let sigma = Double(value), sigma.isFinite, (0.1...100).contains(sigma) else {
            throw ServerError(.badRequest, "\(name) must be a sigma 0.1...100, got '\(value.prefix(40))'")
        }
        return sigma
    }

    private static func color(_ hex: String) -> RGBAColor? {
        guard hex.count == 6 || hex.count == 8, let value = UInt32(hex, radix: 16) else { return nil }
        let rgba = hex.count == 6 ? value << 8 | 0xFF : value
        return RGBAColor(
            red: UInt8(rgba >> 24), green: UInt8((rgba >> 16) & 0xFF), blue: UInt8((rgba >> 8) & 0xFF),
            alpha: UInt8(rgba & 0xFF))
    }
}
