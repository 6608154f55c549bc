import DarkroomCache
import DarkroomImage
import Foundation

/// The seed corpus of each target: small files Darkroom makes itself, plus what the sample photos hold (the photos
/// themselves for the image targets, their ICC profiles and EXIF blocks for those targets). `make fuzz` writes
/// them into each target's corpus folder before it runs; `make test` runs every seed through its target.
package enum FuzzSeeds {
    /// The seeds of `target` (name → bytes), with files from `photos` (the sample photos folder) when given.
    package static func seeds(for target: String, photos: String?) -> [(name: String, bytes: [UInt8])] {
        switch target {
        case "probe": return images() + formatSeeds() + motionPhotos() + photoFiles(photos, folders: stillFolders)
        case "decode": return images() + formatSeeds() + photoFiles(photos, folders: stillFolders)
        case "animation": return animations() + photoFiles(photos, folders: ["animated", "gif"])
        case "video": return videoClips() + motionPhotos()
        case "icc": return profiles(photos)
        case "exif": return exifBlocks(photos)
        case "url": return urls.enumerated().map { ("url-\($0.offset)", Array($0.element.utf8)) }
        case "manifest": return manifests()
        default: return []
        }
    }

    static let stillFolders = ["orientation", "png", "webp", "gif", "icc", "heic", "avif", "animated"]

    /// Small stills in every format Darkroom writes: colour and gray, opaque and with alpha, progressive JPEG.
    static func images() -> [(name: String, bytes: [UInt8])] {
        var seeds: [(name: String, bytes: [UInt8])] = []
        for (label, bitmap) in [("color", gradient(19, 13, alpha: false)), ("alpha", gradient(9, 17, alpha: true))] {
            guard let bitmap else { continue }
            for format in [ImageFileFormat.jpeg, .png, .webp, .avif] {
                if let bytes = try? ImageEncoder.encode(bitmap, as: format, options: EncodeOptions(speed: 10)) {
                    seeds.append(("\(label).\(format.rawValue)", bytes))
                }
            }
            if let bytes = try? ImageEncoder.encode(bitmap, as: .jpeg, options: EncodeOptions(progressive: true)) {
                seeds.append(("\(label)-progressive.jpeg", bytes))
            }
            if let bytes = try? ImageEncoder.encode(bitmap, as: .webp, options: EncodeOptions(lossless: true)) {
                seeds.append(("\(label)-lossless.webp", bytes))
            }
        }
        for (name, bytes) in [("gray.jpeg", SmallImages.grayJPEG)] { if let bytes { seeds.append((name, bytes)) } }
        seeds += ultraHDR()
        return seeds
    }

    /// Ultra HDR JPEGs (an MPF index, a gain map JPEG, its parameters as an ISO 21496-1 record and hdrgm XMP): a gray
    /// map at half size with one channel's parameters, and a colour map at full size with three.
    static func ultraHDR() -> [(name: String, bytes: [UInt8])] {
        guard let base = gradient(16, 12, alpha: false), let color = gradient(16, 12, alpha: false, shift: 80),
            let gray = try? gradient(8, 6, alpha: false)?.converted(to: .gray8),
            let primary = try? ImageEncoder.encode(base, as: .jpeg),
            let grayMap = try? ImageEncoder.encode(gray, as: .jpeg),
            let colorMap = try? ImageEncoder.encode(color, as: .jpeg)
        else { return [] }
        let single = GainMapMetadata(gainMapMin: [0], gainMapMax: [2.5], alternateHeadroom: 2.5)
        let triple = GainMapMetadata(
            gainMapMin: [-0.5, 0, 0.25], gainMapMax: [3, 2, 1], gamma: [1, 2, 0.5], alternateHeadroom: 3)
        return [
            ("ultrahdr-gray.jpeg", UltraHDRWriter.assemble(primary: primary, gainMap: grayMap, metadata: single)),
            ("ultrahdr-color.jpeg", UltraHDRWriter.assemble(primary: primary, gainMap: colorMap, metadata: triple)),
        ]
    }

    /// Three-frame animations as GIF, WebP and APNG.
    static func animations() -> [(name: String, bytes: [UInt8])] {
        var seeds: [(name: String, bytes: [UInt8])] = []
        for format in [ImageFileFormat.gif, .webp, .png] {
            guard let encoder = try? AnimatedImageEncoder(format: format, width: 12, height: 10, plays: 2) else {
                continue
            }
            for frame in 0..<3 {
                guard let bitmap = gradient(12, 10, alpha: frame == 1, shift: frame * 40) else { continue }
                try? encoder.add(bitmap, duration: 40 + frame * 10)
            }
            if let bytes = try? encoder.finish() { seeds.append(("three-frames.\(format.rawValue)", bytes)) }
        }
        return seeds
    }

    /// The ICC profiles the sample photos embed.
    static func profiles(_ photos: String?) -> [(name: String, bytes: [UInt8])] {
        var seeds: [(name: String, bytes: [UInt8])] = []
        for (name, bytes) in photoFiles(photos, folders: ["icc", "png", "heic", "avif"]) {
            var options = DecodeOptions(size: .maxPixelSize(8), limits: FuzzLimits.decode)
            options.colorSpace = .original
            if let profile = try? ImageDecoder().decode(bytes, options: options).colorProfile?.data,
                !seeds.contains(where: { $0.bytes == profile })
            {
                seeds.append((name + ".icc", profile))
            }
        }
        return seeds
    }

    /// The EXIF blocks of the sample photos (all eight orientations among them).
    static func exifBlocks(_ photos: String?) -> [(name: String, bytes: [UInt8])] {
        photoFiles(photos, folders: ["orientation", "jpeg", "icc"]).compactMap { name, bytes in
            ExifMetadata.extract(from: bytes).map { (name + ".exif", $0) }
        }
    }

    /// `/v1/thumb` queries and imgproxy and thumbor paths using every option family.
    static let urls = [
        "src=photos/a.jpg&w=256&h=256&fit=cover&g=sm&format=webp&q=80&dpr=2",
        "src=a.png&w=100&crop=0.5:0.5:ce&enlarge=1&min-w=40&extend=1&bg=ff8800&sharpen=1,0.5&blur=2",
        "src=s3://bucket/key.jpg&fit=auto&w=50&h=70&grayscale=1&trim=10&fq=jpeg:70&progressive=1&strip=0",
        "src=https://example.com/x.gif&w=64&frames=all&format=auto&preset=thumb&expires=4102444800&sig=00",
        "src=a.jpg&crop=10,20,110,220&fit=outside&w=30&h=40&keep_copyright=1&max_bytes=20000&rotate=90",
        "/_/rs:fill:300:200:1/g:sm/q:80/plain/local:///a.jpg@webp",
        "/insecure/resize:fit:64:64:0:1/gravity:nowe:10:5/crop:100:100:fp:0.3:0.7/bg:ffffff/aGVsbG8.png",
        "/AfrOrF3gWeDA6VOlDG4TzxMv39O7MXnF4CXpKUwGqRM/w:32/h:32/ex:1/pr:thumb/plain/s3://b/k.jpg",
        "/unsafe/trim/10x20:300x400/fit-in/-300x-200/left/top/smart/filters:quality(80):format(webp)/a.jpg",
        "/unsafe/full-fit-in/100x0/filters:fill(red):blur(3):rotate(90):no_upscale():max_bytes(5000)/b%2Fc.png",
    ]

    /// Manifests as a cache leaves them on close: empty, with the keys the target reads (inline and file-backed
    /// values), and with 60 entries.
    static func manifests() -> [(name: String, bytes: [UInt8])] {
        let keySets = [
            ("empty", [String]()), ("four-entries", ManifestFuzzing.keys),
            ("sixty-entries", (0..<60).map { "key-\($0)" }),
        ]
        return keySets.compactMap { name, keys in
            let directory = ManifestFuzzing.freshDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            do {
                let cache = try DiskCache(
                    directory: directory, configuration: DiskCacheConfiguration(inlineThreshold: 64))
                for (index, key) in keys.enumerated() {
                    try cache.set(Array(repeating: UInt8(index & 255), count: (index % 4) * 100 + 10), forKey: key)
                }
                cache.flush()
            } catch {
                return nil
            }
            return FileManager.default.contents(atPath: directory + "/manifest.sqlite").map {
                (name + ".sqlite", Array($0))
            }
        }
    }

    /// The files of `folders` under `photos`, smallest first, at most 8 a folder and 2 MiB each.
    static func photoFiles(_ photos: String?, folders: [String]) -> [(name: String, bytes: [UInt8])] {
        guard let photos else { return [] }
        var files: [(name: String, bytes: [UInt8])] = []
        for folder in folders {
            let dir = photos + "/" + folder
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
            let sized = names.compactMap { name -> (String, Int)? in
                let size = (try? FileManager.default.attributesOfItem(atPath: dir + "/" + name)[.size] as? Int) ?? nil
                return size.map { (name, $0) }
            }
            for (name, size) in sized.sorted(by: { $0.1 < $1.1 }).prefix(8) where size <= 2 << 20 {
                if let data = FileManager.default.contents(atPath: dir + "/" + name) {
                    files.append((folder + "-" + name, Array(data)))
                }
            }
        }
        return files
    }

    static func gradient(_ width: Int, _ height: Int, alpha: Bool, shift: Int = 0) -> Bitmap? {
        guard let bitmap = try? Bitmap(width: width, height: height, format: .bgra8Premultiplied) else { return nil }
        for y in 0..<height {
            let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                let a = alpha ? UInt8(255 * x / max(1, width - 1)) : 255
                let values = [(x * 13 + shift) & 255, (y * 19 + shift) & 255, (x * y + shift) & 255]
                for c in 0..<3 { row[x * 4 + c] = UInt8(values[c] * Int(a) / 255) }
                row[x * 4 + 3] = a
            }
        }
        return bitmap
    }
}
