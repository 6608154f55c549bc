extension Array where Element == UInt8 {
    /// `withUnsafeBytes` that keeps `body`'s typed error: the `[UInt8]` forms of the raw-buffer APIs forward
    /// through it. Costs nothing beyond `withUnsafeBytes` (no copy).
    package func withBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withUnsafeBytes { raw in Swift.Result { () throws(Failure) in try body(raw) } }.get()
    }
}
