import DarkroomImage

/// One fuzz target: a name and a function that must return for any input. Throwing a typed error is the expected
/// answer to bad bytes; a trap, a sanitizer report, a leak or a run past a second (`-timeout=1` in
/// `scripts/fuzz.sh`) is a finding.
///
/// The same functions run under libFuzzer (`make fuzz`, the `darkroom-fuzz` driver built with
/// `-sanitize=fuzzer,address`) and in `make test`, which feeds them every saved crasher and seed so a fixed finding
/// stays fixed.
package struct FuzzTarget: Sendable {
    /// The name `make fuzz` and the `crashers/` folders use.
    package let name: String
    /// What the target feeds its input to.
    package let summary: String
    /// Runs one input. Must not throw, trap or keep state between inputs beyond caches that stay bounded.
    package let run: @Sendable (UnsafeRawBufferPointer) -> Void

    /// Every target, in the order `make fuzz` runs them.
    package static let all: [FuzzTarget] = [probe, decode, animation, video, icc, exif, url, manifest]

    /// The target called `name`, or `nil`.
    package static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }

    /// Runs `input` through the target.
    package func callAsFunction(_ input: [UInt8]) {
        input.withUnsafeBytes { run($0) }
    }
}

/// The limits every target decodes under: small enough that one input stays well under a second with
/// AddressSanitizer on this project's machines, large enough that every code path (shrink-on-load, animation
/// compositing, progressive scans) is reachable from small inputs.
package enum FuzzLimits {
    /// The decode limits: 4 MP sources, 64 MiB of pixels, 256 frames, 32 MP of animation, 1 MiB profiles.
    package static let decode = DecodeLimits(
        maxInputBytes: 4 << 20, maxSourcePixels: 4 << 20, maxDimension: 16384, maxDecodedBytes: 64 << 20,
        maxProgressiveScans: 100, maxFrames: 256, maxColorProfileBytes: 1 << 20, maxAnimationPixels: 32 << 20)
}
