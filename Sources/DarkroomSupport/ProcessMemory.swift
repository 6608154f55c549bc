#if canImport(Glibc)
    import Glibc
#endif

/// Process-wide memory policy for the tools that decode many large images one after another.
package enum ProcessMemory {
    /// Makes glibc serve every allocation of 2 MiB or more (input files, pixel buffers) with its own mapping,
    /// returned to the system on free, and keep up to 4 MiB of freed heap at the top of each arena.
    ///
    /// glibc raises the mapping threshold by itself after a large block is freed (up to 32 MiB), so an input file
    /// or a pixel buffer freed once makes the next ones come from the heap, which keeps their pages after they are
    /// freed: fixing the threshold keeps large buffers mapped and unmapped, which lowers peak RSS at the same speed
    /// (docs/PERFORMANCE.md, "Decode"). Below 2 MiB are a codec's per-call working blocks (libwebp allocates about
    /// 1 MiB for each frame it encodes): mapped and unmapped every call, their pages were faulted in and zeroed
    /// afresh each time; kept in the heap (and not trimmed at once), the next call reuses them.
    /// Call once at start, before other threads allocate. A no-op where glibc is not the allocator.
    package static func returnLargeAllocationsToSystem() {
        #if canImport(Glibc)
            _ = glibcMallopt(mmapThreshold, 2 << 20)
            _ = glibcMallopt(trimThreshold, 4 << 20)
        #endif
    }

    #if canImport(Glibc)
        /// `M_MMAP_THRESHOLD` and `M_TRIM_THRESHOLD` of `<malloc.h>`, which the Glibc module does not import (nor
        /// `mallopt`).
        private static let mmapThreshold: Int32 = -3
        private static let trimThreshold: Int32 = -1
    #endif
}

#if canImport(Glibc)
    /// glibc's `int mallopt(int param, int value)`, declared here as `<malloc.h>` is not in the Glibc module.
    @_silgen_name("mallopt")
    private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
#endif
