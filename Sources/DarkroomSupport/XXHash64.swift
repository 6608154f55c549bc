/// XXH64 (Yann Collet's xxHash, 64-bit), one-shot: the checksum stored with every disk-cache value.
///
/// Chosen over CRC32 for speed (four independent multiply-rotate lanes over 32-byte stripes run several times
/// faster than the system zlib's `crc32`; docs/PERFORMANCE.md, "Caches"), while detecting torn, truncated and
/// foreign content with 2⁻⁶⁴ odds of a miss. Cost: one pass over the bytes.
/// Not a cryptographic hash: it guards against accidents, not an attacker who can write the cache directory.
package enum XXHash64 {
    private static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The XXH64 hash of `bytes` with `seed`. O(n), no allocation.
    package static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let count = bytes.count
        guard let base = bytes.baseAddress else { return finish(seed &+ p5 &+ 0, base: nil, offset: 0, end: 0) }
        var offset = 0
        var h: UInt64
        if count >= 32 {
            var v1 = seed &+ p1 &+ p2
            var v2 = seed &+ p2
            var v3 = seed
            var v4 = seed &- p1
            let limit = count - 32
            while offset <= limit {
                v1 = round(v1, base.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian)
                v2 = round(v2, base.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self).littleEndian)
                v3 = round(v3, base.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self).littleEndian)
                v4 = round(v4, base.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self).littleEndian)
                offset += 32
            }
            h = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
            h = merge(h, v1)
            h = merge(h, v2)
            h = merge(h, v3)
            h = merge(h, v4)
        } else {
            h = seed &+ p5
        }
        h &+= UInt64(count)
        return finish(h, base: base, offset: offset, end: count)
    }

    /// The XXH64 hash of `bytes` with `seed`.
    package static func hash(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { hash($0, seed: seed) }
    }

    private static func finish(_ hIn: UInt64, base: UnsafeRawPointer?, offset: Int, end: Int) -> UInt64 {
        var h = hIn
        var offset = offset
        if let base {
            while offset + 8 <= end {
                let k = round(0, base.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian)
                h ^= k
                h = rotl(h, 27) &* p1 &+ p4
                offset += 8
            }
            if offset + 4 <= end {
                h ^= UInt64(base.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian) &* p1
                h = rotl(h, 23) &* p2 &+ p3
                offset += 4
            }
            while offset < end {
                h ^= UInt64(base.load(fromByteOffset: offset, as: UInt8.self)) &* p5
                h = rotl(h, 11) &* p1
                offset += 1
            }
        }
        h ^= h >> 33
        h &*= p2
        h ^= h >> 29
        h &*= p3
        h ^= h >> 32
        return h
    }

    @inline(__always) private static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        rotl(acc &+ input &* p2, 31) &* p1
    }

    @inline(__always) private static func merge(_ acc: UInt64, _ value: UInt64) -> UInt64 {
        (acc ^ round(0, value)) &* p1 &+ p4
    }

    @inline(__always) private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 {
        (x << r) | (x >> (64 - r))
    }
}
