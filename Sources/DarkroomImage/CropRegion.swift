/// A rectangle of the upright source kept before the resize: the decode then treats it as the whole image, so a
/// crop of a large photo costs a decode of the crop (shrink-on-load applies to it), never of the full image.
///
/// Sizes and positions are in pixels of the upright (oriented) source or fractions of its sides; a region reaching
/// past the image is clipped to it.
public struct CropRegion: Sendable, Hashable, Codable {
    /// A length along one side.
    public enum Length: Sendable, Hashable, Codable {
        /// Pixels of the upright source.
        case pixels(Int)
        /// A fraction (0…1] of the source's side.
        case fraction(Double)

        func resolve(_ side: Double) -> Double {
            switch self {
            case .pixels(let n): Double(n)
            case .fraction(let f): f * side
            }
        }
    }

    /// Where the region sits.
    public enum Position: Sendable, Hashable, Codable {
        /// Its top-left corner.
        case origin(x: Length, y: Length)
        /// `anchorX`/`anchorY` (0…1) share out the room the region leaves — 0 puts it against the left or top edge,
        /// 0.5 centres it, 1 puts it against the right or bottom — then the offset (pixels) moves it right and down.
        case anchored(anchorX: Double, anchorY: Double, offsetX: Int, offsetY: Int)
        /// Centred on a point given as fractions (0…1) of the width and height, as far as the image allows.
        case centeredOn(x: Double, y: Double)
    }

    /// The region's width; `nil` keeps the source's.
    public var width: Length?
    /// The region's height; `nil` keeps the source's.
    public var height: Length?
    /// Where it sits. Default centred.
    public var position: Position

    /// Creates a region of `width × height` placed by `position`.
    public init(
        width: Length?, height: Length?,
        position: Position = .anchored(anchorX: 0.5, anchorY: 0.5, offsetX: 0, offsetY: 0)
    ) {
        (self.width, self.height, self.position) = (width, height, position)
    }

    /// The region between two corners in upright-source pixels (thumbor's `AxB:CxD`).
    public static func corners(left: Int, top: Int, right: Int, bottom: Int) -> CropRegion {
        CropRegion(
            width: .pixels(right - left), height: .pixels(bottom - top),
            position: .origin(x: .pixels(left), y: .pixels(top)))
    }

    /// The region in upright-source pixels for a `width × height` upright source: at least 1×1, inside the image.
    /// - Throws: `.invalidArgument` for a zero or negative size.
    func rect(width sourceWidth: Double, height sourceHeight: Double) throws(DarkroomImageError) -> SourceRect {
        let w = min(sourceWidth, (width?.resolve(sourceWidth) ?? sourceWidth).rounded())
        let h = min(sourceHeight, (height?.resolve(sourceHeight) ?? sourceHeight).rounded())
        guard w >= 1, h >= 1 else {
            throw DarkroomImageError(.invalidArgument, "a crop must be at least 1×1 pixel, got \(w)×\(h)")
        }
        var x: Double
        var y: Double
        switch position {
        case .origin(let ox, let oy):
            (x, y) = (ox.resolve(sourceWidth).rounded(), oy.resolve(sourceHeight).rounded())
        case .anchored(let ax, let ay, let dx, let dy):
            x = ((sourceWidth - w) * ax).rounded(.down) + Double(dx)
            y = ((sourceHeight - h) * ay).rounded(.down) + Double(dy)
        case .centeredOn(let fx, let fy):
            x = (fx * sourceWidth - w / 2).rounded()
            y = (fy * sourceHeight - h / 2).rounded()
        }
        x = min(max(x, 0), sourceWidth - w)
        y = min(max(y, 0), sourceHeight - h)
        return SourceRect(x: x, y: y, width: w, height: h)
    }

    /// A short stable description for cache keys.
    public var key: String {
        func k(_ l: Length?) -> String {
            switch l {
            case nil: "-"
            case .pixels(let n): "\(n)"
            case .fraction(let f): "\(f)f"
            }
        }
        let at: String =
            switch position {
            case .origin(let x, let y): "@\(k(x)),\(k(y))"
            case .anchored(let ax, let ay, let dx, let dy): "~\(ax),\(ay),\(dx),\(dy)"
            case .centeredOn(let x, let y): "^\(x),\(y)"
            }
        return "crop\(k(width))x\(k(height))\(at)"
    }
}

extension ExifOrientation {
    /// The stored-image rectangle that shows as `rect` once this orientation is applied to a stored image whose
    /// upright size is `width × height`.
    func storedRect(_ rect: SourceRect, uprightWidth width: Double, uprightHeight height: Double) -> SourceRect {
        let (x, y, w, h) = (rect.x, rect.y, rect.width, rect.height)
        switch self {
        case .up: return rect
        case .upMirrored: return SourceRect(x: width - x - w, y: y, width: w, height: h)
        case .down: return SourceRect(x: width - x - w, y: height - y - h, width: w, height: h)
        case .downMirrored: return SourceRect(x: x, y: height - y - h, width: w, height: h)
        case .leftMirrored: return SourceRect(x: y, y: x, width: h, height: w)
        case .right: return SourceRect(x: y, y: width - x - w, width: h, height: w)
        case .rightMirrored: return SourceRect(x: height - y - h, y: width - x - w, width: h, height: w)
        case .left: return SourceRect(x: height - y - h, y: x, width: h, height: w)
        }
    }
}
