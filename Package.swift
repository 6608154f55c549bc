// swift-tools-version:6.0
import PackageDescription

/// Darkroom: fetch, decode at display size, cache and hand out display-ready bitmaps on Linux.
///
/// Codecs are the system's (libjpeg-turbo, libspng, libwebp, giflib), found with pkg-config. Anything that uses
/// setjmp/longjmp or a macro-heavy C API lives in a small C shim target that returns status codes.
let package = Package(
    name: "Darkroom",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "DarkroomImage", targets: ["DarkroomImage"]),
        .library(name: "DarkroomCache", targets: ["DarkroomCache"]),
        .library(name: "DarkroomTables", targets: ["DarkroomTables"]),
        .executable(name: "darkroom", targets: ["darkroom"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
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
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),

        // MARK: C shims (setjmp/longjmp and callbacks stay here; Swift sees status codes)
        .target(name: "CDarkroomJPEG", dependencies: ["CJPEG"]),
        .target(name: "CDarkroomGIF", dependencies: ["CGIF"]),

        // MARK: Swift modules
        .target(
            name: "DarkroomImage",
            dependencies: ["CDarkroomJPEG", "CDarkroomGIF", "CSPNG", "CWebP"]),
        .target(name: "DarkroomCache", dependencies: ["CSQLite"]),
        .target(name: "DarkroomTables", dependencies: ["DarkroomImage"]),
        .executableTarget(
            name: "darkroom",
            dependencies: [
                "DarkroomImage", "DarkroomCache", "DarkroomTables", "CTurboJPEG",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        // MARK: Tests
        .testTarget(name: "DarkroomImageTests", dependencies: ["DarkroomImage"]),
        .testTarget(name: "DarkroomCacheTests", dependencies: ["DarkroomCache"]),
        .testTarget(name: "DarkroomTablesTests", dependencies: ["DarkroomTables", "DarkroomImage"]),
    ]
)
