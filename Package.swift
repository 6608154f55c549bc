// swift-tools-version:6.2
import PackageDescription

/// Darkroom: fetch, decode at display size, cache and hand out display-ready bitmaps on Linux.
///
/// Codecs are the system's (libjpeg-turbo, libspng, libwebp, giflib, libheif for HEIC, libavif for AVIF, libjxl,
/// libtiff, libraw for camera RAWs, librsvg for SVG; BMP and ICO are read by Darkroom's own small reader) and colour
/// management is lcms2's, each found with pkg-config. Anything that uses
/// setjmp/longjmp or a macro-heavy C API lives in a small C shim target that returns status codes.
/// Every Darkroom target builds in Swift 6 mode with these: `any` spelled out for existentials, a member visible only
/// through a module the file imports, and every warning an error (so the tree stays warning-free).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "Darkroom",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "DarkroomImage", targets: ["DarkroomImage"]),
        .library(name: "DarkroomCache", targets: ["DarkroomCache"]),
        .library(name: "DarkroomTables", targets: ["DarkroomTables"]),
        .library(name: "Darkroom", targets: ["Darkroom"]),
        .library(name: "DarkroomVideo", targets: ["DarkroomVideo"]),
        .library(name: "DarkroomServer", targets: ["DarkroomServer"]),
        .library(name: "DarkroomWorkers", targets: ["DarkroomWorkers"]),
        .library(name: "DarkroomThumbnailer", targets: ["DarkroomThumbnailer"]),
        .executable(name: "darkroom", targets: ["darkroom"]),
        .executable(name: "darkroom-worker", targets: ["darkroom-worker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // MARK: System codec libraries
        .systemLibrary(
            name: "CJPEG", pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg62-turbo-dev"]), .brew(["jpeg-turbo"])]),
        .systemLibrary(
            name: "CTurboJPEG", pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"]), .brew(["jpeg-turbo"])]),
        .systemLibrary(
            name: "CSPNG", pkgConfig: "spng",
            providers: [.apt(["libspng-dev"]), .brew(["libspng"])]),
        .systemLibrary(
            name: "CWebP", pkgConfig: "libwebpdemux",
            providers: [.apt(["libwebp-dev"]), .brew(["webp"])]),
        .systemLibrary(
            name: "CGIF", pkgConfig: "libgif",
            providers: [.apt(["libgif-dev"]), .brew(["giflib"])]),
        .systemLibrary(
            name: "CLCMS2", pkgConfig: "lcms2",
            providers: [.apt(["liblcms2-dev"]), .brew(["little-cms2"])]),
        .systemLibrary(
            name: "CHeif", pkgConfig: "libheif",
            providers: [.apt(["libheif-dev"]), .brew(["libheif"])]),
        .systemLibrary(
            name: "CAVIF", pkgConfig: "libavif",
            providers: [.apt(["libavif-dev"]), .brew(["libavif"])]),
        .systemLibrary(
            name: "CJXL", pkgConfig: "libjxl",
            providers: [.apt(["libjxl-dev"]), .brew(["jpeg-xl"])]),
        .systemLibrary(
            name: "CTIFF", pkgConfig: "libtiff-4",
            providers: [.apt(["libtiff-dev"]), .brew(["libtiff"])]),
        .systemLibrary(
            name: "CRaw", pkgConfig: "libraw_r",
            providers: [.apt(["libraw-dev"]), .brew(["libraw"])]),
        .systemLibrary(
            name: "CRSVG", pkgConfig: "librsvg-2.0",
            providers: [.apt(["librsvg2-dev"]), .brew(["librsvg"])]),
        .systemLibrary(
            name: "CSDL2", pkgConfig: "sdl2",
            providers: [.apt(["libsdl2-dev"]), .brew(["sdl2"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // FFmpeg, for videos: containers, codecs, scaling, and the utilities they share
        .systemLibrary(
            name: "CAVFormat", pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev"]), .brew(["ffmpeg"])]),
        .systemLibrary(
            name: "CAVCodec", pkgConfig: "libavcodec",
            providers: [.apt(["libavcodec-dev"]), .brew(["ffmpeg"])]),
        .systemLibrary(
            name: "CSwscale", pkgConfig: "libswscale",
            providers: [.apt(["libswscale-dev"]), .brew(["ffmpeg"])]),
        .systemLibrary(
            name: "CAVUtil", pkgConfig: "libavutil",
            providers: [.apt(["libavutil-dev"]), .brew(["ffmpeg"])]),
        .systemLibrary(name: "CSeccomp", pkgConfig: "libseccomp", providers: [.apt(["libseccomp-dev"])]),
        // sd-bus, for the desktop's D-Bus thumbnail service
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),

        // MARK: C shims (setjmp/longjmp and callbacks stay here; Swift sees status codes)
        .target(name: "CDarkroomJPEG", dependencies: ["CJPEG"]),
        .target(name: "CDarkroomGIF", dependencies: ["CGIF"]),
        .target(name: "CDarkroomTIFF", dependencies: ["CTIFF"]),
        .target(name: "CDarkroomSVG", dependencies: ["CRSVG"]),
        .target(name: "CDarkroomSQLite", dependencies: ["CSQLite"]),
        .target(name: "CDarkroomVideo", dependencies: ["CAVFormat", "CAVCodec", "CSwscale", "CAVUtil"]),
        .target(name: "CDarkroomSandbox", dependencies: ["CSeccomp"]),
        .target(name: "CDarkroomBus", dependencies: ["CSystemd"]),

        // MARK: Swift modules
        // What several modules share (locks, clocks): `package` access, not a product.
        .target(name: "DarkroomSupport"),
        .target(
            name: "DarkroomImage",
            dependencies: [
                "DarkroomSupport", "CDarkroomJPEG", "CDarkroomGIF", "CSPNG", "CWebP", "CLCMS2", "CHeif", "CAVIF",
                "CJXL",
                "CDarkroomTIFF", "CRaw", "CDarkroomSVG",
            ]),
        .target(name: "DarkroomCache", dependencies: ["DarkroomSupport", "CSQLite", "CDarkroomSQLite"]),
        .target(name: "DarkroomTables", dependencies: ["DarkroomSupport", "DarkroomImage"]),
        // Videos as images: a poster frame (or the frame at a time) at display size, through FFmpeg, behind
        // DarkroomImage's decoder seam. The only module that links FFmpeg.
        .target(name: "DarkroomVideo", dependencies: ["DarkroomSupport", "DarkroomImage", "CDarkroomVideo"]),
        // Decoding in confined worker processes: the confinement (seccomp, limits, namespaces). The only module that
        // links libseccomp.
        .target(name: "DarkroomWorkers", dependencies: ["DarkroomSupport", "DarkroomImage", "CDarkroomSandbox"]),
        // The decode worker's executable, beside `darkroom`.
        .executableTarget(
            name: "darkroom-worker", dependencies: ["DarkroomImage", "DarkroomWorkers", "DarkroomVideo"]),
        .target(
            name: "Darkroom",
            dependencies: [
                "DarkroomSupport", "DarkroomImage", "DarkroomCache", "DarkroomTables",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        // The benchmarks behind `darkroom bench` (decode against TurboJPEG, caches, tables, pipeline, the scroll
        // simulator), testable apart from the CLI; not a product. The only target that links libturbojpeg.
        .target(
            name: "DarkroomBenchKit",
            dependencies: [
                "DarkroomSupport", "Darkroom", "DarkroomTables", "DarkroomImage", "DarkroomCache", "CTurboJPEG",
                // Each benchmark declares its own options, which the CLI takes as an option group
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // The thumbnail server: HTTP routes, source safety (paths, hosts, addresses, signatures), admission control,
        // the encoded-thumbnail cache and the gallery page.
        .target(
            name: "DarkroomServer",
            dependencies: [
                "DarkroomSupport", "Darkroom", "DarkroomImage", "DarkroomCache", "DarkroomVideo", "DarkroomWorkers",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ]),
        // The desktop's side: the freedesktop.org thumbnail cache shared with file managers (read and written per
        // the specification).
        .target(
            name: "DarkroomDesktop",
            dependencies: [
                "DarkroomSupport", "DarkroomImage", .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // The desktop's thumbnail service on D-Bus (org.freedesktop.thumbnails.Thumbnailer1 and Cache1), in place of
        // tumblerd. The only module that links libsystemd (sd-bus).
        .target(
            name: "DarkroomThumbnailer",
            dependencies: ["DarkroomSupport", "DarkroomImage", "DarkroomDesktop", "CDarkroomBus"]),
        // `darkroom view`: a desktop photo browser in an SDL2 window (the grid, the large view, animations, scripted
        // runs with a frame record). Built on the pipeline's public API, as an app would use it.
        .target(
            name: "DarkroomViewer",
            dependencies: [
                "DarkroomSupport", "Darkroom", "DarkroomImage", "DarkroomCache", "DarkroomTables", "DarkroomDesktop",
                "DarkroomVideo", "CSDL2",
            ]),
        // The fuzz targets: functions that must survive any input, run by libFuzzer (`make fuzz`) and, on the saved
        // crashers and seeds, by the tests.
        .target(
            name: "DarkroomFuzzing",
            dependencies: ["DarkroomImage", "DarkroomCache", "DarkroomServer", "DarkroomVideo"]),
        .executableTarget(
            name: "darkroom",
            dependencies: [
                "DarkroomSupport", "DarkroomImage", "DarkroomCache", "DarkroomTables", "Darkroom", "DarkroomBenchKit",
                "DarkroomServer", "DarkroomDesktop", "DarkroomViewer", "DarkroomVideo", "DarkroomWorkers",
                "DarkroomThumbnailer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]),

        // MARK: Tests
        // What the test targets share: sample photos that fail loudly when missing, temporary directories, the
        // loopback HTTP server, generated images and PSNR.
        .target(
            name: "DarkroomTestSupport",
            dependencies: [
                "DarkroomSupport", "DarkroomImage",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/DarkroomTestSupport"),
        .testTarget(
            name: "DarkroomImageTests",
            dependencies: [
                "DarkroomSupport", "DarkroomTestSupport", "DarkroomImage",
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .testTarget(name: "DarkroomSupportTests", dependencies: ["DarkroomSupport"]),
        .testTarget(
            name: "DarkroomVideoTests",
            dependencies: ["DarkroomSupport", "DarkroomTestSupport", "DarkroomVideo", "DarkroomImage"]),
        // A decode worker with a decoder that misbehaves on request, for the workers' fault tests only.
        .executableTarget(
            name: "darkroom-test-worker", dependencies: ["DarkroomWorkers", "DarkroomImage", "DarkroomTestSupport"],
            path: "Tests/TestWorker"),
        .testTarget(
            name: "DarkroomWorkersTests",
            dependencies: [
                "DarkroomSupport", "DarkroomTestSupport", "DarkroomWorkers", "DarkroomImage", "DarkroomVideo",
            ]),
        .testTarget(
            name: "DarkroomCacheTests", dependencies: ["DarkroomSupport", "DarkroomTestSupport", "DarkroomCache"]),
        .testTarget(
            name: "DarkroomTablesTests",
            dependencies: ["DarkroomSupport", "DarkroomTestSupport", "DarkroomTables", "DarkroomImage"]),
        .testTarget(
            name: "DarkroomBenchKitTests",
            dependencies: ["DarkroomSupport", "DarkroomTestSupport", "DarkroomBenchKit", "DarkroomImage"]),
        .testTarget(
            name: "DarkroomServerTests",
            dependencies: [
                "DarkroomSupport", "DarkroomTestSupport", "DarkroomServer", "Darkroom", "DarkroomImage",
                "DarkroomVideo", "DarkroomWorkers",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "DarkroomDesktopTests",
            dependencies: ["DarkroomSupport", "DarkroomTestSupport", "DarkroomDesktop", "DarkroomImage"]),
        .testTarget(
            name: "DarkroomThumbnailerTests",
            dependencies: [
                "DarkroomSupport", "DarkroomTestSupport", "DarkroomThumbnailer", "DarkroomDesktop", "DarkroomImage",
            ]),
        .testTarget(
            name: "DarkroomViewerTests",
            dependencies: [
                "DarkroomSupport", "DarkroomTestSupport", "DarkroomViewer", "Darkroom", "DarkroomImage",
                "DarkroomDesktop", "DarkroomVideo", "DarkroomWorkers",
            ]),
        .testTarget(
            name: "DarkroomFuzzingTests",
            dependencies: [
                "DarkroomSupport", "DarkroomTestSupport", "DarkroomFuzzing", "DarkroomImage", "DarkroomVideo",
                "DarkroomWorkers",
            ]),
        .testTarget(
            name: "DarkroomTests",
            dependencies: [
                "DarkroomSupport", "DarkroomTestSupport", "Darkroom", "DarkroomImage", "DarkroomCache",
                "DarkroomTables", "DarkroomVideo",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
    ]
)

// The libFuzzer driver, only when `make fuzz` asks for it (DARKROOM_FUZZ=1). Darkroom's own modules are then built
// with coverage and AddressSanitizer (`-sanitize=fuzzer,address`; UndefinedBehaviorSanitizer too on the C shims,
// whose setjmp/longjmp paths are where undefined behaviour would hide) and the driver links libFuzzer and the
// sanitizer runtimes. The dependencies keep the flags of the build they are shared with: scripts/fuzz.sh builds in
// the test build's scratch path, so only Darkroom's modules compile again. Coverage then guides the fuzzer through
// Darkroom's code alone; the dependencies' own code runs unchecked, as the system codecs always did.
// DARKROOM_FUZZ_SMOKE=1 (`make fuzz-smoke`, CI's seconds a target) compiles Darkroom's modules unoptimized: the smoke
// proves the instrumented driver builds and that every target runs from its seeds, which a build in half the time
// proves as well; `make fuzz`'s long runs keep the optimized build and its executions a second.
if Context.environment["DARKROOM_FUZZ"] == "1" {
    let smoke = Context.environment["DARKROOM_FUZZ_SMOKE"] == "1" ? ["-Onone"] : []
    for target in package.targets where target.type == .regular {
        if target.name.hasPrefix("CDarkroom") {
            target.cSettings =
                (target.cSettings ?? []) + [
                    .unsafeFlags(["-fsanitize=fuzzer-no-link,address,undefined", "-fno-sanitize-recover=undefined"])
                ]
        } else if !target.name.hasPrefix("C") {
            target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=fuzzer,address"] + smoke)]
        }
    }
    package.targets.append(
        .executableTarget(
            name: "darkroom-fuzz", dependencies: ["DarkroomFuzzing"], path: "Fuzz/Driver",
            swiftSettings: [.unsafeFlags(["-sanitize=fuzzer,address"] + smoke)],
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer,address", "-Xclang-linker", "-fuse-ld=lld"])]))
    package.products.append(.executable(name: "darkroom-fuzz", targets: ["darkroom-fuzz"]))
}

// The ThreadSanitizer build (`make tsan`, DARKROOM_TSAN=1) instruments Darkroom's own modules (`-sanitize=thread` on
// the Swift targets, `-fsanitize=thread` on the C shims, the runtime linked into every product) and holds only the
// test targets whose suites it runs and the targets those need. It builds in the test build's scratch path with the
// test build's flags, as the fuzz driver does, so the dependencies are reused as they are and only Darkroom's modules
// compile again: the races it looks for are in Darkroom's code, whose every access is instrumented, and the
// dependencies' synchronization reaches TSan through the locks and system calls it intercepts. Darkroom's modules are
// compiled unoptimized (`-Onone` after the build's `-O`): nothing is inlined away from TSan's view, they compile in
// half the time, and these suites run as fast (they wait on threads, not on pixel loops). Every product is named
// after its one target, so a product goes with its target.
if Context.environment["DARKROOM_TSAN"] == "1" {
    // The server's suites start decode workers, and the pool's own suites the test worker: the executables go with
    // them.
    let suites: Set<String> = [
        "DarkroomTests", "DarkroomCacheTests", "DarkroomTablesTests", "DarkroomServerTests", "DarkroomWorkersTests",
        "DarkroomThumbnailerTests", "darkroom-worker", "darkroom-test-worker",
    ]
    let targets = Dictionary(uniqueKeysWithValues: package.targets.map { ($0.name, $0) })
    var needed = Set<String>()
    var pending = Array(suites)
    while let name = pending.popLast() {
        guard needed.insert(name).inserted, let target = targets[name] else { continue }
        for dependency in target.dependencies {
            switch dependency {
            case .targetItem(let name, _), .byNameItem(let name, _): pending.append(name)
            default: break
            }
        }
    }
    package.targets.removeAll { !needed.contains($0.name) }
    package.products.removeAll { !needed.contains($0.name) }
    for target in package.targets where target.type != .system {
        if target.name.hasPrefix("CDarkroom") {
            target.cSettings = (target.cSettings ?? []) + [.unsafeFlags(["-fsanitize=thread"])]
        } else if !target.name.hasPrefix("C") {
            target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-sanitize=thread", "-Onone"])]
            target.linkerSettings = (target.linkerSettings ?? []) + [.unsafeFlags(["-sanitize=thread"])]
        }
    }
}

// The package's own Swift targets (not the C shims or system libraries) all take the strict settings.
for target in package.targets where target.type != .system && !target.name.hasPrefix("C") {
    target.swiftSettings = (target.swiftSettings ?? []) + strictSettings
}
