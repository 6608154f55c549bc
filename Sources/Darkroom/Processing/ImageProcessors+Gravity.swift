import DarkroomImage

/// Where a crop sits in a larger image (imgproxy's gravity): one of nine positions, moved by an offset, or
/// centred on a focus point.
public enum Gravity: Sendable, Hashable {
    /// Centred; the offset moves the crop right and down (negative: left and up).
    case center(offsetX: Int = 0, offsetY: Int = 0)
    /// Against an edge or corner; the offset moves the crop inwards from it.
    case north(offsetX: Int = 0, offsetY: Int = 0)
    case south(offsetX: Int = 0, offsetY: Int = 0)
    case east(offsetX: Int = 0, offsetY: Int = 0)
    case west(offsetX: Int = 0, offsetY: Int = 0)
    case northEast(offsetX: Int = 0, offsetY: Int = 0)
    case northWest(offsetX: Int = 0, offsetY: Int = 0)
    case southEast(offsetX: Int = 0, offsetY: Int = 0)
    case southWest(offsetX: Int = 0, offsetY: Int = 0)
    /// Centred on the point (`x`, `y`) given as fractions of the width and height (0…1), as far as the image allows.
    case focusPoint(x: Double, y: Double)
    /// Centred on the image's most interesting point (edges, skin, saturation; see ``ImageProcessors/CropToFill``),
    /// found on the resized image, so it costs about what the thumbnail does. Where no image is at hand (a crop
    /// before the resize, `Extend`) it is the centre.
    case smart

    /// The crop's top-left corner for a `cropWidth × cropHeight` crop of a `width × height` image, kept inside it.
    func origin(cropWidth: Int, cropHeight: Int, width: Int, height: Int) -> (x: Int, y: Int) {
        let spareX = width - cropWidth
        let spareY = height - cropHeight
        var x: Int
        var y: Int
        switch self {
        case .focusPoint(let fx, let fy):
            x = Int((fx * Double(width) - Double(cropWidth) / 2).rounded())
            y = Int((fy * Double(height) - Double(cropHeight) / 2).rounded())
        case .smart: (x, y) = (spareX / 2, spareY / 2)
        case .center(let dx, let dy): (x, y) = (spareX / 2 + dx, spareY / 2 + dy)
        case .north(let dx, let dy): (x, y) = (spareX / 2 + dx, dy)
        case .south(let dx, let dy): (x, y) = (spareX / 2 + dx, spareY - dy)
        case .east(let dx, let dy): (x, y) = (spareX - dx, spareY / 2 + dy)
        case .west(let dx, let dy): (x, y) = (dx, spareY / 2 + dy)
        case .northEast(let dx, let dy): (x, y) = (spareX - dx, dy)
        case .northWest(let dx, let dy): (x, y) = (dx, dy)
        case .southEast(let dx, let dy): (x, y) = (spareX - dx, spareY - dy)
        case .southWest(let dx, let dy): (x, y) = (dx, spareY - dy)
        }
        return (min(max(x, 0), max(spareX, 0)), min(max(y, 0), max(spareY, 0)))
    }

    /// The same placement for a crop made before the resize (the crop of ``ImageRequest/geometry``).
    public var cropPosition: CropRegion.Position {
        switch self {
        case .focusPoint(let x, let y): .centeredOn(x: x, y: y)
        case .smart: .anchored(anchorX: 0.5, anchorY: 0.5, offsetX: 0, offsetY: 0)
        case .center(let dx, let dy): .anchored(anchorX: 0.5, anchorY: 0.5, offsetX: dx, offsetY: dy)
        case .north(let dx, let dy): .anchored(anchorX: 0.5, anchorY: 0, offsetX: dx, offsetY: dy)
        case .south(let dx, let dy): .anchored(anchorX: 0.5, anchorY: 1, offsetX: dx, offsetY: -dy)
        case .east(let dx, let dy): .anchored(anchorX: 1, anchorY: 0.5, offsetX: -dx, offsetY: dy)
        case .west(let dx, let dy): .anchored(anchorX: 0, anchorY: 0.5, offsetX: dx, offsetY: dy)
        case .northEast(let dx, let dy): .anchored(anchorX: 1, anchorY: 0, offsetX: -dx, offsetY: dy)
        case .northWest(let dx, let dy): .anchored(anchorX: 0, anchorY: 0, offsetX: dx, offsetY: dy)
        case .southEast(let dx, let dy): .anchored(anchorX: 1, anchorY: 1, offsetX: -dx, offsetY: -dy)
        case .southWest(let dx, let dy): .anchored(anchorX: 0, anchorY: 1, offsetX: dx, offsetY: -dy)
        }
    }

    /// A short stable description for cache keys.
    var key: String {
        switch self {
        case .focusPoint(let x, let y): "fp:\(x):\(y)"
        case .smart: "sm"
        case .center(let x, let y): "ce:\(x):\(y)"
        case .north(let x, let y): "no:\(x):\(y)"
        case .south(let x, let y): "so:\(x):\(y)"
        case .east(let x, let y): "ea:\(x):\(y)"
        case .west(let x, let y): "we:\(x):\(y)"
        case .northEast(let x, let y): "noea:\(x):\(y)"
        case .northWest(let x, let y): "nowe:\(x):\(y)"
        case .southEast(let x, let y): "soea:\(x):\(y)"
        case .southWest(let x, let y): "sowe:\(x):\(y)"
        }
    }
}

extension ImageProcessors {
    /// Crops to `width × height` (or the whole image where it is smaller) at a ``Gravity``: the second half of a
    /// fill whose decode was `TargetSize.cover(width:height:)`. Cost: one copy of the crop.
    public struct CropToFill: ImageProcessing, Hashable {
        /// The box.
        public var width: Int, height: Int
        /// Where the crop sits.
        public var gravity: Gravity

        /// Creates a crop of `width × height` placed by `gravity`.
        public init(width: Int, height: Int, gravity: Gravity) {
            (self.width, self.height, self.gravity) = (width, height, gravity)
        }

        /// Keys the caches: the processor and its parameters.
        public var identifier: String { "darkroom.fillcrop(\(width),\(height),\(gravity.key))" }

        /// Applies the crop; never mutates `source`. Cost: one copy of the crop (none when it is the whole image);
        /// with ``Gravity/smart`` also one pass over the image for its interest map.
        public func process(_ source: Bitmap) throws -> Bitmap {
            let w = min(width, source.width)
            let h = min(height, source.height)
            let origin =
                gravity == .smart
                ? try Saliency.cropOrigin(source, cropWidth: w, cropHeight: h)
                : gravity.origin(cropWidth: w, cropHeight: h, width: source.width, height: source.height)
            return try Crop(x: origin.x, y: origin.y, width: w, height: h).process(source)
        }
    }
}
