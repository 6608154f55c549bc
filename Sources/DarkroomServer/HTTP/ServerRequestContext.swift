import Hummingbird
import NIOCore

/// Hummingbird's per-request context plus the channel the request came on, so the responder can find its
/// ``ClientConnection`` (and stop work when the client leaves).
struct ServerRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The client's channel; the router-level test client has one too (its own stand-in).
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
