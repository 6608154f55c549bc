import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomDesktop
@testable import DarkroomThumbnailer

/// The service as a person meets it: Thunar (XFCE's file manager, which asks the thumbnail service and never runs a
/// thumbnailer itself) opens a folder under Xvfb on the service's bus, and the thumbnails it shows are the service's.
@Suite("Thumbnail service and a file manager", .serialized)
struct FileManagerTests {
    @Test("Thunar opening a folder gets every photo's thumbnail from the service, HEIC and AVIF included")
    func thunar() throws {
        let harness = try ServiceHarness()
        defer { harness.stop() }
        // Given a folder of photos of five kinds (tumbler reads neither the HEIC nor the AVIF)
        let photos = harness.folder.file("photos")
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        let files = [
            "jpeg/kite-2560x1600.jpg", "heic/summer_1am-2560x1600.heic", "avif/bythewater-2560x1600.avif",
            "webp/eveningglow-lossy-2560x1600.webp", "png/cups-alpha-1600x1000.png",
        ].map { relative in
            let link = photos + "/" + (relative as NSString).lastPathComponent
            try? FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: SamplePhotos.path(relative))
            return link
        }
        let screenshot = harness.folder.file("thunar.png")
        // When Thunar opens it under Xvfb with the service's bus as its session bus, and the screen is taken once
        // the thumbnails are there (or after 60 s)
        let normal = harness.folder.file("thumbnails/normal")
        let script = """
            thunar "$1" >/dev/null 2>&1 & pid=$!
            for i in $(seq 600); do [ "$(ls "$2" 2>/dev/null | wc -l)" -ge 5 ] && break; sleep 0.1; done
            sleep 2; import -window root "$3"; kill $pid
            """
        _ = try ReferenceTool.runDetached(
            "env",
            [
                "DBUS_SESSION_BUS_ADDRESS=" + harness.bus.address, "XDG_CACHE_HOME=" + harness.folder.path,
                "HOME=" + harness.folder.path, "xvfb-run", "-a", "-s", "-screen 0 1024x768x24", "sh", "-c", script,
                "thunar-test", photos, normal, screenshot,
            ])
        // Then the service made each photo's thumbnail, and GLib finds each valid
        #expect(harness.service.tally.withLock { $0["rendered"] } == files.count)
        for file in files { #expect(try harness.glib(file).valid, "\(file)") }
        // And the screenshot shows them (kept in .build-logs/thunar-thumbnails.png for a person to look at): the
        // window is not blank
        let logs = SamplePhotos.packageRoot.appendingPathComponent(".build-logs").path
        try? FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: logs + "/thunar-thumbnails.png")
        try? FileManager.default.copyItem(atPath: screenshot, toPath: logs + "/thunar-thumbnails.png")
        let shot = try ImageDecoder().decode(fileAt: screenshot)
        #expect(shot.bitmap.width == 1024 && shot.bitmap.height == 768)
        let bitmap = shot.bitmap
        let bytesPerPixel = bitmap.format.bytesPerPixel
        var colours = Set<UInt32>()
        for y in stride(from: 0, to: bitmap.height, by: 4) {
            let row = bitmap.row(y)
            for x in stride(from: 0, to: bitmap.width, by: 4) {
                let p = row + x * bytesPerPixel
                colours.insert(
                    UInt32(p.load(as: UInt8.self)) << 16 | UInt32((p + 1).load(as: UInt8.self)) << 8
                        | UInt32((p + 2).load(as: UInt8.self)))
            }
        }
        #expect(colours.count > 700, "\(colours.count) colours: no photo drawn (the window alone has ~350)")
    }
}
