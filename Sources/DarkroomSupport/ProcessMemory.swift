#if canImport(Glibc)
    import Glibc
#endif

/// Process-wide memory policy for the tools that decode many large images one after another.
package enum ProcessMemory {
    /// Makes glibc serve every allocation of 128 KiB or more with its own mapping, returned to the system on free.
    ///
    /// glibc raises this threshold by itself after a large block is freed (up to 32 MiB), so an input file or a
    /// pixel buffer freed once makes the next ones come from the heap, which keeps their pages after they are freed:
    /// fixing the threshold keeps large buffers mapped and unmapped, which lowers peak RSS at the same speed
    /// (docs/PERFORMANCE.md, "Decode").
    /// Call once at start, before other threads allocate. A no-op where glibc is not the allocator.
    package static func returnLargeAllocationsToSystem() {
        #if canImport(Glibc)
            _ = glibcMallopt(mmapThreshold, 128 << 10)
        #endif
    }

    #if canImport(Glibc)
        /// `M_MMAP_THRESHOLD` of `<malloc.h>`, which the Glibc module does not import (nor `mallopt`).
        private static let mmapThreshold: Int32 = -3
    #endif
}

#if canImport(Glibc)
    /// glibc's `int mallopt(int param, int value)`, declared here as `<malloc.h>` is not in the Glibc module.
    @_silgen_name("mallopt")
    private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
#endif
