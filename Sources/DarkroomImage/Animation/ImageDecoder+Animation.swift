#if canImport(Glibc)
    import Glibc
#endif

/// An animation's frames, made where the decoder decodes: in its ``ImageDecoder/isolation`` when it has one (a
/// confined worker makes each frame), else in this process (``AnimatedImageDecoder``).
extension ImageDecoder {
    /// The frames of the animation in `bytes` at `options`' size, at most `frameLimit` of them (a still is one
    /// frame). Costs and memory as ``AnimatedImageDecoder``, wherever it runs; isolated, one copy of `bytes` and of
    /// each frame more, and the isolation keeps the decoder until the source is released (a worker is taken only
    /// while a frame is made).
    /// - Throws: ``DarkroomImageError`` as ``AnimatedImageDecoder``'s initializers do, and, isolated, as
    ///   ``DecodeIsolation/animation(_:options:frameLimit:)``.
    public func animation(_ bytes: [UInt8], options: DecodeOptions, frameLimit: Int? = nil)
        throws(DarkroomImageError) -> any AnimationFrameSource
    {
        guard let isolation else { return try AnimatedImageDecoder(bytes, options: options, frameLimit: frameLimit) }
        return try bytes.withUnsafeBytes { bytes in
            Result { () throws(DarkroomImageError) in
                try isolation.animation(bytes, options: options, frameLimit: frameLimit)
            }
        }.get()
    }

    /// The frames of the animation in the file at `path` (see ``animation(_:options:frameLimit:)``): isolated, the
    /// open file is handed over and read there, never here; in this process it is read whole first.
    /// - Throws: ``DarkroomImageError`` as ``animation(_:options:frameLimit:)``, and `.io`/`.limitExceeded` for a
    ///   file that cannot be opened or is over ``DecodeLimits/maxInputBytes``.
    public func animation(fileAt path: String, options: DecodeOptions, frameLimit: Int? = nil)
        throws(DarkroomImageError) -> any AnimationFrameSource
    {
        guard let isolation else {
            return try animation(
                FileBytes.read(path, limit: options.limits.maxInputBytes), options: options,
                frameLimit: frameLimit)
        }
        let (fd, size) = try FileBytes.openRegularFile(path, limit: options.limits.maxInputBytes)
        defer { close(fd) }
        return try isolation.animation(file: fd, length: size, options: options, frameLimit: frameLimit)
    }
}
