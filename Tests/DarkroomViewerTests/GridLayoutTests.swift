import Testing

@testable import DarkroomViewer

@Suite struct GridLayoutTests {
    let layout = GridLayout(width: 800, height: 600, scale: 1, cellPoints: 100, count: 60)

    @Test func columnsFillTheWidthBesideTheScrollbar() {
        // Given an 800 px window with 100 px thumbnails, 6 px gaps and a 10 px scrollbar
        // Then 7 columns fit and the spare width goes into the gaps
        #expect(layout.columns == 7)
        #expect(layout.gap >= layout.minimumGap)
        let last = layout.frame(of: 6, offset: 0)
        #expect(last.x + last.width <= 800 - layout.scrollbarWidth)
        // And the scale factor multiplies the side, not the column count's arithmetic
        let hiDPI = GridLayout(width: 1600, height: 1200, scale: 2, cellPoints: 100, count: 60)
        #expect(hiDPI.side == 200)
        #expect(hiDPI.columns == 7)
    }

    @Test func visibleCellsFollowTheOffset() {
        // Given 60 cells in 9 rows of 106 px and a 600 px window
        #expect(layout.rows == 9)
        #expect(layout.maxOffset == Double(9 * 106 + 6 - 600))
        // Then the top shows rows 0…5 (the sixth partly) and the bottom the last rows
        #expect(layout.visibleCells(offset: 0) == 0..<42)
        let end = layout.visibleCells(offset: layout.maxOffset)
        #expect(end.upperBound == 60)
        #expect(end.lowerBound == 21)
        // And offsets past either end are clamped
        #expect(layout.visibleCells(offset: -500) == layout.visibleCells(offset: 0))
        #expect(layout.visibleCells(offset: 1e9) == end)
    }

    @Test func hitTestingInvertsFrames() {
        // Given any cell on screen at some offset
        for offset in [0.0, 57, layout.maxOffset] {
            for index in layout.visibleCells(offset: offset) {
                let f = layout.frame(of: index, offset: offset)
                // When the middle of its frame is hit-tested
                let y = Double(f.y + f.height / 2)
                guard y >= 0, y < 600 else { continue }
                // Then it is that cell; a gap is no cell
                #expect(layout.cell(atX: Double(f.x + f.width / 2), y: y, offset: offset) == index)
                #expect(layout.cell(atX: Double(f.x - 1), y: y, offset: offset) == nil)
            }
        }
    }

    @Test func revealingMovesAsLittleAsNeeded() {
        // A cell on screen keeps the offset; one below brings its row to the bottom; one above to the top
        #expect(layout.offset(revealing: 8, from: 0) == 0)
        let below = layout.offset(revealing: 40, from: 0)
        #expect(below > 0)
        #expect(layout.frame(of: 40, offset: below).y + 100 <= 600)
        #expect(layout.offset(revealing: 0, from: 300) == 0)
        #expect(layout.offset(revealing: 59, from: 0) == layout.maxOffset)
    }

    @Test func theScrollbarThumbMapsBackToTheOffset() {
        // Given the thumb at several offsets
        for offset in [0.0, 100, 250, layout.maxOffset] {
            let thumb = layout.scrollbarThumb(offset: offset)
            // Then dragging its top to where it is gives back the offset (to a pixel's rounding)
            #expect(abs(layout.offset(forThumbTop: Double(thumb.y)) - offset) <= layout.maxOffset / 100 + 1)
            #expect(thumb.height >= layout.scrollbarWidth * 3)
            #expect(thumb.y + thumb.height <= 600)
        }
    }
}
