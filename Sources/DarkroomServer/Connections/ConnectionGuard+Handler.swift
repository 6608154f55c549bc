import NIOCore
import NIOHTTPTypes

/// The per-connection side of ``ConnectionGuard``, in each client channel's pipeline after HTTP parsing: admits
/// or closes the connection when it opens, marks it busy from a request head to the end of its response, closes
/// it when no complete head arrives within the head timeout, and reports when the client leaves — the socket
/// closes, or its input closes while a request is being answered.
///
/// Not `Sendable`: NIO calls it on the channel's event loop only; the closures it schedules capture the channel
/// and the guard, both `Sendable`.
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let connections: ConnectionGuard
    private var connection: ClientConnection?
    private var headTimer: Scheduled<Void>?
    private var busy = false

    init(_ connections: ConnectionGuard) {
        self.connections = connections
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        switch connections.open(context.channel) {
        case .refused:
            context.close(promise: nil)
        case .accepted(let connection, let evict):
            self.connection = connection
            evict?.close(promise: nil)
            armHeadTimer(context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data), !busy {
            busy = true
            headTimer?.cancel()
            headTimer = nil
            connections.requestStarted(context.channel)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let ends: Bool = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if ends, busy {
            busy = false
            connections.requestFinished(context.channel)
            armHeadTimer(context)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client closed its side: a request being answered has nobody left to answer
        if let event = event as? ChannelEvent, event == .inputClosed, busy { connection?.markGone() }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        headTimer?.cancel()
        headTimer = nil
        connections.closed(context.channel)
        context.fireChannelInactive()
    }

    private func armHeadTimer(_ context: ChannelHandlerContext) {
        headTimer?.cancel()
        guard connections.limits.headTimeout > 0 else { return }
        let channel = context.channel
        let connections = connections
        headTimer = context.eventLoop.scheduleTask(in: .nanoseconds(Int64(connections.limits.headTimeout * 1e9))) {
            connections.headTimedOut(channel)
            channel.close(promise: nil)
        }
    }
}
