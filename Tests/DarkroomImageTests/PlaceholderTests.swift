import Testing
@testable import DarkroomImage
@Test func bitmapRowsAreAligned() throws {
    let b = try Bitmap(width: 3, height: 2, format: .bgra8Premultiplied)
    #expect(b.bytesPerRow == 64)
}
