import CAVIF

/// A `clap` (clean aperture) box turned into the pixel rectangle of the coded image it keeps.
///
/// ISO/IEC 14496-12 §12.1.4: the aperture is `width × height` (fractions) centred at
/// `horizOff + (codedWidth − 1) / 2`, `vertOff + (codedHeight − 1) / 2`, so its left edge is
/// `horizOff + (codedWidth − width) / 2`. Edges that fall between pixels round to the nearest (halves up), as
/// libheif does; libavif's own `avifCropRectConvertCleanApertureBox` refuses odd edges in 4:2:0 images, which this
/// decoder converts row by row and can crop anywhere. The HEIF specification applies `clap` to the coded image
/// before `irot` and `imir`.
struct CleanAperture: Equatable, Sendable {
    let x: Int
    let y: Int
    let width: Int
    let height: Int

    /// The aperture of `box` over a `codedWidth × codedHeight` image, or nil when the box is malformed (a zero
    /// denominator) or reaches outside the image: such a box is ignored and the coded image shown whole.
    init?(_ box: avifCleanApertureBox, codedWidth: Int, codedHeight: Int) {
        guard box.widthD > 0, box.heightD > 0, box.horizOffD > 0, box.vertOffD > 0 else { return nil }
        let width = Double(box.widthN) / Double(box.widthD)
        let height = Double(box.heightN) / Double(box.heightD)
        // The offsets are signed fractions stored in unsigned fields.
        let horizontal = Double(Int32(bitPattern: box.horizOffN)) / Double(box.horizOffD)
        let vertical = Double(Int32(bitPattern: box.vertOffN)) / Double(box.vertOffD)
        let left = horizontal + (Double(codedWidth) - width) / 2
        let top = vertical + (Double(codedHeight) - height) / 2
        let x = Int((left + 0.5).rounded(.down))
        let y = Int((top + 0.5).rounded(.down))
        let w = Int((width + 0.5).rounded(.down))
        let h = Int((height + 0.5).rounded(.down))
        guard w >= 1, h >= 1, x >= 0, y >= 0, x + w <= codedWidth, y + h <= codedHeight else { return nil }
        self.x = x
        self.y = y
        self.width = w
        self.height = h
    }
}
