import DarkroomImage

/// An SDL texture reused from image to image, and the image it holds: made again only when it has to change size,
/// uploaded to in place otherwise (one copy of the bitmap). The drawing thread owns it.
struct ImageTexture {
    private(set) var texture: OpaquePointer?
    private(set) var textureWidth = 0
    private(set) var textureHeight = 0
    /// The size of the image in the texture's top-left corner.
    private(set) var imageWidth = 0
    private(set) var imageHeight = 0
    /// Whether the texture holds the current binding's image (false after ``forget()``).
    private(set) var hasImage = false

    /// How the texture is sized for a bitmap.
    enum Sizing {
        /// Exactly `width × height` (a grid cell's side, a placeholder's 32 px): made again when that changes.
        case exactly(width: Int, height: Int)
        /// At least the bitmap's size (the large view): made again only to grow.
        case growing
    }

    /// Uploads `bitmap` (premultiplied BGRA8) into the texture, first making the texture as `sizing` says.
    /// Leaves the texture as it was when the bitmap is in another format, does not fit, or no texture can be made.
    mutating func show(_ bitmap: Bitmap, sizing: Sizing, in window: SDLWindow, linearScaling: Bool = false) -> Bool {
        guard bitmap.format == .bgra8Premultiplied else { return false }
        let (width, height): (Int, Int)
        let remake: Bool
        switch sizing {
        case .exactly(let w, let h):
            (width, height) = (w, h)
            remake = textureWidth != w || textureHeight != h
        case .growing:
            (width, height) = (bitmap.width, bitmap.height)
            remake = textureWidth < bitmap.width || textureHeight < bitmap.height
        }
        if texture == nil || remake {
            destroy(window)
            texture = try? window.makeTexture(width: width, height: height)
            if texture != nil { (textureWidth, textureHeight) = (width, height) }
        }
        guard let texture, bitmap.width <= textureWidth, bitmap.height <= textureHeight else { return false }
        window.upload(bitmap, to: texture)
        if linearScaling { window.setLinearScaling(texture) }
        (imageWidth, imageHeight) = (bitmap.width, bitmap.height)
        hasImage = true
        return true
    }

    /// Draws the image at its size, centred in `rect`; false (nothing drawn) when there is none.
    func drawCentred(in rect: PixelRect, window: SDLWindow) -> Bool {
        guard hasImage, let texture else { return false }
        window.draw(
            texture, sourceWidth: imageWidth, sourceHeight: imageHeight,
            into: PixelRect(
                x: rect.x + (rect.width - imageWidth) / 2, y: rect.y + (rect.height - imageHeight) / 2,
                width: imageWidth, height: imageHeight))
        return true
    }

    /// Draws the image stretched over `rect`; false (nothing drawn) when there is none.
    func drawStretched(into rect: PixelRect, window: SDLWindow) -> Bool {
        guard hasImage, let texture else { return false }
        window.draw(texture, sourceWidth: imageWidth, sourceHeight: imageHeight, into: rect)
        return true
    }

    /// Forgets the image; the texture is kept for the next one.
    mutating func forget() { hasImage = false }

    /// Frees the texture.
    mutating func destroy(_ window: SDLWindow) {
        if let texture { window.destroy(texture) }
        texture = nil
        (textureWidth, textureHeight) = (0, 0)
        hasImage = false
    }
}
