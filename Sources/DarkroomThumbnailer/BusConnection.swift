import CDarkroomBus

#if canImport(Glibc)
    import Glibc
#endif

/// A connection to a D-Bus bus serving the thumbnailer's two objects, through the C shim over sd-bus. Used only on
/// the thread that calls ``run(wakeFD:timeoutSeconds:)`` (sd-bus connections are not thread-safe): the service's bus
/// thread owns it.
final class BusConnection {
    private let bus: OpaquePointer

    /// Connects to `address` (nil: the user's session bus) and adds the objects, whose calls go to `handlers`.
    init(address: String?, handlers: dr_bus_handlers) throws(ThumbnailServiceError) {
        var handlers = handlers
        var opened: OpaquePointer?
        var message = [CChar](repeating: 0, count: 256)
        let status = CStrings.with(ThumbnailerProtocol.mimeTypes.map { _ in "file" }) { schemes in
            CStrings.with(ThumbnailerProtocol.mimeTypes) { mimeTypes in
                CStrings.with(ThumbnailerProtocol.flavors) { flavors in
                    CStrings.with(ThumbnailerProtocol.schedulers) { schedulers in
                        var lists = dr_bus_lists(
                            schemes: schemes, mime_types: mimeTypes,
                            supported_count: ThumbnailerProtocol.mimeTypes.count,
                            flavors: flavors, flavor_count: ThumbnailerProtocol.flavors.count, schedulers: schedulers,
                            scheduler_count: ThumbnailerProtocol.schedulers.count)
                        return dr_bus_open(&opened, address, &handlers, &lists, &message, message.count)
                    }
                }
            }
        }
        guard status == 0, let opened else {
            throw ThumbnailServiceError(
                .busUnavailable, "cannot serve on \(address ?? "the session bus")",
                systemMessage: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            )
        }
        bus = opened
    }

    deinit { dr_bus_close(bus) }

    /// Owns `name`.
    /// - Throws: `.nameTaken` when another connection owns it, `.busUnavailable` otherwise.
    func own(_ name: String) throws(ThumbnailServiceError) {
        let status = dr_bus_own_name(bus, name)
        if status == -EEXIST || status == -EALREADY {
            throw ThumbnailServiceError(
                .nameTaken, "\(name) is owned by another process (tumblerd, or another darkroom thumbnaild)")
        }
        guard status >= 0 else {
            throw ThumbnailServiceError(
                .busUnavailable, "cannot own \(name)", systemMessage: String(cString: strerror(-status)))
        }
    }

    /// Gives `name` back, so that the bus starts a new instance for the next call.
    func release(_ name: String) { _ = dr_bus_release_name(bus, name) }

    /// This connection's unique name.
    var uniqueName: String { String(cString: dr_bus_unique_name(bus)) }

    /// Handles what waits on the bus, then waits up to `timeoutSeconds` for more or for `wakeFD`.
    /// - Throws: `.busUnavailable` when the bus went away.
    func run(wakeFD: Int32, timeoutSeconds: Double) throws(ThumbnailServiceError) {
        let timeout = timeoutSeconds.isFinite ? UInt64(max(0, timeoutSeconds) * 1_000_000) : UInt64.max
        let status = dr_bus_run(bus, wakeFD, timeout)
        guard status >= 0 else {
            throw ThumbnailServiceError(
                .busUnavailable, "the bus connection ended", systemMessage: String(cString: strerror(-status)))
        }
    }

    /// Sends a signal. A failure to send is not the caller's to handle (the bus's own errors end ``run``).
    func emit(_ event: ThumbnailQueue.Event) {
        switch event {
        case .started(let handle): _ = dr_bus_emit_handle(bus, "Started", handle)
        case .finished(let handle): _ = dr_bus_emit_handle(bus, "Finished", handle)
        case .ready(let handle, let uris):
            _ = CStrings.with(uris) { dr_bus_emit_ready(bus, handle, $0, uris.count) }
        case .error(let handle, let uris, let code, let message):
            _ = CStrings.with(uris) { dr_bus_emit_error(bus, handle, $0, uris.count, code.rawValue, message) }
        }
    }

    /// Answers a call the `cache` handler took: empty, or with `error` (a D-Bus error name and message).
    func reply(_ call: UnsafeMutableRawPointer, error: (name: String, message: String)?) {
        if let error {
            var busError = dr_bus_error()
            BusErrors.fill(&busError, name: error.name, message: error.message)
            _ = dr_bus_reply(bus, call, &busError)
        } else {
            _ = dr_bus_reply(bus, call, nil)
        }
    }

    /// Sends everything queued.
    func flush() { _ = dr_bus_flush(bus) }
}

/// C string arrays for the shim, alive for one call.
enum CStrings {
    static func with<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { UnsafePointer(strdup($0)) }
        defer { for copy in copies { free(UnsafeMutablePointer(mutating: copy)) } }
        return copies.withUnsafeBufferPointer { body($0.baseAddress ?? UnsafePointer(bitPattern: 1)!) }
    }

    /// The strings of a C array of `count`.
    static func read(_ strings: UnsafePointer<UnsafePointer<CChar>?>?, count: Int) -> [String] {
        guard let strings else { return [] }
        return (0..<count).map { strings[$0].map { String(cString: $0) } ?? "" }
    }
}

/// Filling the shim's error record.
enum BusErrors {
    static func fill(_ error: inout dr_bus_error, name: String, message: String) {
        withUnsafeMutableBytes(of: &error.name) { copy(name, into: $0) }
        withUnsafeMutableBytes(of: &error.message) { copy(message, into: $0) }
    }

    private static func copy(_ text: String, into buffer: UnsafeMutableRawBufferPointer) {
        // Whole characters only: D-Bus refuses a string that is not UTF-8
        var bytes: [UInt8] = []
        for scalar in text.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            guard bytes.count + encoded.count < buffer.count else { break }
            bytes += encoded
        }
        bytes.append(0)
        buffer.copyBytes(from: bytes)
    }
}
