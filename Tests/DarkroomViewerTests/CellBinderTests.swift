import Darkroom
import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomViewer

/// The grid's cell binding and the large view, without a window: a real pipeline over generated photos, and the
/// deliveries read from the inbox the drawing thread would drain.
@Suite struct CellBinderTests {
    /// 800 × 600 pixels at 100 px cells: 7 columns of 106 px rows, six rows on screen.
    static let layout = GridLayout(width: 800, height: 600, scale: 1, cellPoints: 100, count: 140)

    /// Generated photos and the parts a viewer would wire together for them.
    struct Fixture {
        let harness: ViewerHarness
        let items: [LibraryItem]
        let pipeline = ImagePipeline()
        let inbox = DeliveryInbox()
        let binder: CellBinder
        var layout = CellBinderTests.layout
        var scroll = ScrollModel()
        var recorder = FrameRecorder(fps: 60)

        init(_ name: String, count: Int = 140) throws {
            let harness = try ViewerHarness(name)
            try harness.writeSolidImages(count)
            self.harness = harness
            items = (0..<count).map { i in
                let path = "\(harness.folder)/img\(String(format: "%03d", i)).png"
                return LibraryItem(path: path, imageID: path)
            }
            binder = CellBinder(
                pipeline: pipeline, prefetcher: ImagePrefetcher(pipeline: pipeline),
                placeholders: PlaceholderStore(file: nil),
                desktop: nil, inbox: inbox, strategy: .pipeline, prefetchScreens: 1)
        }

        mutating func update() {
            binder.update(items: items, layout: layout, scroll: &scroll, recorder: &recorder)
        }

        /// Drains the inbox until `count` deliveries arrived (at most 20 s).
        func deliveries(_ count: Int) async -> [Delivery] {
            var received: [Delivery] = []
            _ = await eventually {
                received += inbox.drain()
                return received.count >= count
            }
            return received
        }
    }

    @Test func whileScrollingACellAboutToLeaveTheScreenDropsBelowThePrefetchesAndOneThatStaysKeepsHigh() {
        // Given the grid scrolled down to row 10 (rows 10 to 15 on screen, 600 px high)
        let layout = Self.layout
        let offset = 1070.0
        let visible = layout.visibleCells(offset: offset)
        let top = visible.lowerBound  // the top row: leaves first when scrolling down
        let bottom = visible.upperBound - layout.columns  // the bottom row: stays longest
        let above = top - layout.columns  // the margin row above the screen
        let below = visible.upperBound  // the margin row below it
        #expect(top == 10 * layout.columns && bottom == 15 * layout.columns)
        func priority(_ index: Int, _ speed: Double) -> ImageRequest.Priority {
            CellBinder.priority(
                of: index, visible: layout.visibleCells(offset: offset).contains(index), layout: layout,
                offset: offset, speed: speed)
        }
        // When it scrolls down at 5,000 px/s
        // Then the top row (gone in 19 ms) and the margin row behind drop to veryLow; the bottom row, on screen for
        // another 120 ms, stays high and the margin row ahead normal
        #expect(priority(top, 5000) == .veryLow && priority(above, 5000) == .veryLow)
        #expect(priority(bottom, 5000) == .high && priority(below, 5000) == .normal)
        // When it scrolls up as fast, the sides swap
        #expect(priority(bottom, -5000) == .veryLow && priority(below, -5000) == .veryLow)
        #expect(priority(top, -5000) == .high && priority(above, -5000) == .normal)
        // When it is at rest, or slow, every cell keeps its place
        #expect(priority(top, 0) == .high && priority(bottom, 0) == .high && priority(above, 0) == .normal)
        #expect(priority(top, 300) == .high)
    }

    @Test func theVisibleCellsAndAMarginRowAreBoundWithTheVisibleOnesFirst() async throws {
        // Given a grid of 140 photos at the top
        var fixture = try Fixture("binder-top")
        defer { fixture.harness.work.remove() }
        let visible = Self.layout.visibleCells(offset: 0)
        // When the first frame binds
        fixture.update()
        // Then the visible cells and one row below are bound, the visible ones at high priority, the margin at normal
        let margin = Self.layout.columns
        #expect(Set(fixture.binder.bound.keys) == Set(0..<(visible.upperBound + margin)))
        for (index, cell) in fixture.binder.bound {
            #expect(cell.index == index && cell.item == fixture.items[index])
            #expect(cell.task?.priority == (visible.contains(index) ? .high : .normal) || cell.task?.isDone == true)
        }
        // And the prefetch window starts past the bound rows, a screen's worth of rows ahead
        let prefetched = fixture.binder.prefetching.keys.sorted()
        #expect(prefetched.first == visible.upperBound + margin)
        #expect(prefetched.count == Self.layout.columns * 6)
        // And every bound cell receives its photo filled into a cell-sized square, tagged with its binding
        let deliveries = await fixture.deliveries(fixture.binder.bound.count)
        #expect(deliveries.count == fixture.binder.bound.count)
        for delivery in deliveries {
            let cell = try #require(fixture.binder.cell(for: delivery))
            guard case .image(let bitmap, _, _) = delivery.content else {
                Issue.record("cell \(cell.index) failed: \(delivery.content)")
                continue
            }
            #expect(bitmap.width == Self.layout.side && bitmap.height == Self.layout.side)
        }
    }

    @Test func scrollingAwayReleasesCellsIntoThePoolAndDropsTheirLateDeliveries() async throws {
        // Given a bound first screen
        var fixture = try Fixture("binder-scroll")
        defer { fixture.harness.work.remove() }
        fixture.update()
        let cellsMade = fixture.binder.cellsBySlot.count
        let before = fixture.binder.bound.values.map { ($0.cell.slot, $0.generation, $0.task) }
        // When the grid jumps ten rows down and the next frame binds
        fixture.scroll.jump(to: Double(10 * Self.layout.rowHeight), layout: Self.layout)
        fixture.update()
        // Then the new screen is bound by reusing the released cells (new ones only for what the first screen did not
        // need), every old request is over, and a delivery made for an old binding finds no cell
        let visible = Self.layout.visibleCells(offset: fixture.scroll.offset)
        #expect(visible.contains(10 * Self.layout.columns))
        #expect(visible.allSatisfy { fixture.binder.bound[$0] != nil })
        let cellsNow = fixture.binder.cellsBySlot.count
        #expect(cellsNow == max(cellsMade, fixture.binder.bound.count))
        #expect(fixture.binder.bound.keys.allSatisfy { $0 >= visible.lowerBound - Self.layout.columns })
        for (slot, generation, task) in before {
            #expect(task?.isDone ?? true)
            #expect(
                fixture.binder.cell(for: Delivery(slot: slot, generation: generation, content: .failure("late"))) == nil
            )
        }
        // And releasing everything empties the bound set and keeps the cells for the next binding
        fixture.binder.unbindAll(recorder: &fixture.recorder)
        #expect(fixture.binder.bound.isEmpty && fixture.binder.cellsBySlot.count == cellsNow)
    }

    @Test func theLargeViewFitsTheWindowClampsItsIndexAndIgnoresAnOldRequestsDelivery() async throws {
        // Given generated 320 × 240 photos and a large view
        let fixture = try Fixture("large-view", count: 3)
        defer { fixture.harness.work.remove() }
        let view = LargeView(inbox: fixture.inbox)
        let prefetcher = ImagePrefetcher(pipeline: fixture.pipeline)
        // When image 0 is opened and then, before it arrives, an index past the end
        view.open(0, items: fixture.items, width: 800, height: 600, pipeline: fixture.pipeline, prefetcher: prefetcher)
        let first = view.generation
        view.open(7, items: fixture.items, width: 800, height: 600, pipeline: fixture.pipeline, prefetcher: prefetcher)
        // Then it shows the last image, and a failure delivered for the first request changes nothing
        #expect(view.index == 2 && view.generation != first)
        #expect(view.apply(Delivery(slot: Delivery.largeView, generation: first, content: .failure("old"))) == nil)
        #expect(!view.failed && !view.hasImage)
        // And the last image arrives at its own size (fit, never enlarged), to upload once
        var current: Delivery?
        _ = await eventually {
            current = fixture.inbox.drain().first { $0.slot == Delivery.largeView && $0.generation == view.generation }
            return current != nil
        }
        _ = view.apply(try #require(current))
        #expect(view.hasImage)
        let bitmap = try #require(view.frameToUpload(now: 0))
        #expect(bitmap.width == 320 && bitmap.height == 240)
        #expect(view.frameToUpload(now: 0) == nil)
        // And its colour is image 2's
        let pixel = bitmap.row(120).assumingMemoryBound(to: UInt8.self) + 4 * 160
        let c = ViewerHarness.color(2)
        #expect((pixel[2], pixel[1], pixel[0]) == (c.r, c.g, c.b))
    }
}
