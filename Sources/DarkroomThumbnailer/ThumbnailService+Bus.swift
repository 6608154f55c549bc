import CDarkroomBus

/// The shim's callbacks: each takes the service back from its context, reads the C arguments into Swift values and
/// answers with 0 or a filled error. They run on the bus thread, inside `BusConnection.run`.
extension ThumbnailService {
    static func handlers(context: UnsafeMutableRawPointer) -> dr_bus_handlers {
        dr_bus_handlers(
            context: context,
            queue: { context, sender, uris, uriCount, mimeTypes, mimeCount, flavor, scheduler, old, handle, failure in
                let service = Unmanaged<ThumbnailService>.fromOpaque(context!).takeUnretainedValue()
                do throws(ThumbnailServiceError) {
                    handle!.pointee = try service.queue(
                        sender: sender.map { String(cString: $0) } ?? "",
                        uris: CStrings.read(uris, count: uriCount),
                        mimeTypes: CStrings.read(mimeTypes, count: mimeCount),
                        flavor: flavor.map { String(cString: $0) } ?? "",
                        scheduler: scheduler.map { String(cString: $0) } ?? "", replacing: old)
                    return 0
                } catch {
                    BusErrors.fill(&failure!.pointee, name: error.busErrorName, message: error.description)
                    return -1
                }
            },
            dequeue: { context, handle, _ in
                Unmanaged<ThumbnailService>.fromOpaque(context!).takeUnretainedValue().queue.dequeue(handle)
                return 0
            },
            cache: { context, operation, uris, uriCount, to, toCount, since, call, failure in
                let service = Unmanaged<ThumbnailService>.fromOpaque(context!).takeUnretainedValue()
                do throws(ThumbnailServiceError) {
                    try service.cache(
                        operation, uris: CStrings.read(uris, count: uriCount), to: CStrings.read(to, count: toCount),
                        since: since, call: call!)
                    return 0
                } catch {
                    BusErrors.fill(&failure!.pointee, name: error.busErrorName, message: error.description)
                    return -1
                }
            })
    }
}
