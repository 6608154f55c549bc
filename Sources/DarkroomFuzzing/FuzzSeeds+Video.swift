import DarkroomImage
import Foundation

extension FuzzSeeds {
    /// The committed clips in `Fuzz/seeds/video` (a few frames of 64 × 48 in every container and codec Darkroom
    /// reads: Swift cannot encode video, and the tests' clips are too large to fuzz from).
    static func videoClips() -> [(name: String, bytes: [UInt8])] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzz/seeds/video").standardized.path
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
        return names.compactMap { name in
            FileManager.default.contents(atPath: folder + "/" + name).map { ("video-" + name, Array($0)) }
        }
    }

    /// Motion Photos in each layout Darkroom reads, holding the first committed clip: Google's `Container:Directory`
    /// XMP, the older `MicroVideoOffset`, Samsung's `SEFH`/`SEFT` trailer, and an AVIF with an `mpvd` box.
    static func motionPhotos() -> [(name: String, bytes: [UInt8])] {
        guard let clip = videoClips().first(where: { $0.name.hasSuffix(".mp4") })?.bytes,
            let bitmap = gradient(16, 12, alpha: false), let still = try? ImageEncoder.encode(bitmap, as: .jpeg),
            let avif = try? ImageEncoder.encode(bitmap, as: .avif, options: EncodeOptions(speed: 10))
        else { return [] }
        func withXMP(_ properties: String) -> [UInt8] {
            let xmp = Array(
                """
                <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
                <rdf:Description rdf:about="" xmlns:GCamera="http://ns.google.com/photos/1.0/camera/" \
                xmlns:Container="http://ns.google.com/photos/1.0/container/" \
                xmlns:Item="http://ns.google.com/photos/1.0/container/item/" \(properties)</rdf:Description></rdf:RDF>\
                </x:xmpmeta>
                """.utf8)
            let segment = JPEGSegments.segment(marker: 0xE1, payload: GainMapMetadata.xmpPacketSignature + xmp)
            return Array(still[0..<2]) + segment + Array(still[2...])
        }
        let directory = withXMP(
            """
            GCamera:MotionPhoto="1"><Container:Directory><rdf:Seq><rdf:li rdf:parseType="Resource">\
            <Container:Item Item:Semantic="Primary" Item:Length="0"/></rdf:li><rdf:li rdf:parseType="Resource">\
            <Container:Item Item:Semantic="MotionPhoto" Item:Length="\(clip.count)" Item:Padding="0"/></rdf:li>\
            </rdf:Seq></Container:Directory>
            """)
        let micro = withXMP("GCamera:MicroVideo=\"1\" GCamera:MicroVideoOffset=\"\(clip.count)\">")
        let name = Array("MotionPhoto_Data".utf8)
        let block: [UInt8] = [0, 0, 0x30, 0x0A] + le32(name.count) + name + clip
        let sef: [UInt8] =
            Array("SEFH".utf8) + le32(106) + le32(1) + [0, 0, 0x30, 0x0A] + le32(block.count)
            + le32(block.count)
        let samsung = still + block + sef + le32(sef.count) + Array("SEFT".utf8)
        let box = [UInt8]([0, 0, 0, 0]) + Array("mpvd".utf8) + clip
        var heif = avif + box
        let size = UInt32(box.count)
        heif.replaceSubrange(
            avif.count..<(avif.count + 4),
            with: [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)])
        return [
            ("motion-directory.jpeg", directory + clip), ("motion-micro.jpeg", micro + clip),
            ("motion-samsung.jpeg", samsung), ("motion-mpvd.avif", heif),
        ]
    }

    private static func le32(_ value: Int) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24 & 0xFF)]
    }
}
