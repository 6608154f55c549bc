/// SplitMix64: a tiny deterministic generator, so crash workloads and test values are reproducible from a seed.
/// `package`: shared by the CLI's torture writer and the cache and table tests; not public API.
package struct SplitMix64: RandomNumberGenerator {
    package var state: UInt64

    package init(state: UInt64) { self.state = state }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` pseudo-random bytes from `seed`.
    package static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var g = SplitMix64(state: seed)
        var out = [UInt8](repeating: 0, count: count)
        var i = 0
        while i < count {
            var v = g.next()
            for _ in 0..<8 where i < count {
                out[i] = UInt8(truncatingIfNeeded: v)
                v >>= 8
                i += 1
            }
        }
        return out
    }
}
