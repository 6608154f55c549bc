import DarkroomSupport

/// Damaged copies of encoded bytes for the robustness tests: bytes XORed with a non-zero value at random places,
/// reproducible from the generator's seed.
package enum ByteFlips {
    /// `bytes` with `count` flips, each at a random index in `indices` (which must lie inside `bytes`), XORed with a
    /// random value in 1...255.
    package static func flipped(
        _ bytes: [UInt8], count: Int, in indices: Range<Int>, using rng: inout SplitMix64
    ) -> [UInt8] {
        var damaged = bytes
        for _ in 0..<count {
            let i = Int.random(in: indices, using: &rng)
            damaged[i] ^= UInt8.random(in: 1...255, using: &rng)
        }
        return damaged
    }

    /// `bytes` with 1–8 flips, each one half the time inside the first `headerBytes` (where parsers are most
    /// fragile) and otherwise anywhere.
    package static func headerBiased(_ bytes: [UInt8], headerBytes: Int, using rng: inout SplitMix64) -> [UInt8] {
        var damaged = bytes
        for _ in 0..<(1 + Int(rng.next() % 8)) {
            let span = rng.next() % 2 == 0 ? min(bytes.count, headerBytes) : bytes.count
            damaged[Int(rng.next() % UInt64(span))] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
        }
        return damaged
    }
}
