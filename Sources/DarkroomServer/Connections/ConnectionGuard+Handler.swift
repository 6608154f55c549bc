import NIOCore
import NIOHTTPTypes

/// The per-connection side of ``ConnectionGuard``, in each client channel's pipeline after HTTP parsing: admits
/// or closes the connection when it opens, marks it busy from a request head to the end of its response, closes
/// it when no complete head arrives within the head timeout, and reports when the client leaves — the socket
/// closes, or its input closes while a request is being answered.
///
/// Per request it only flips the connection's busy flag and notes the time (no lock, no timer): one timer per
/// connection checks the head deadline and re-arms itself for the latest one when it fires early.
/// Not `Sendable`: NIO calls it on the channel's event loop only; its timer reaches it through `NIOLoopBound`.
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let connections: ConnectionGuard
    private var connection: ClientConnection?
    private var headTimer: Scheduled<Void>?
    /// When the connection became ready for its next request head (opened, or its last response ended).
    private var readySince = NIODeadline.now()
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
            readySince = .now()
            armHeadTimer(context)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data), !busy {
            busy = true
            connection?.setBusy(true)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let ends: Bool = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        if ends, busy {
            busy = false
            readySince = .now()
            connection?.setBusy(false)
            if headTimer == nil { armHeadTimer(context) }
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

    /// Schedules the head-deadline check for `readySince` + the timeout.
    private func armHeadTimer(_ context: ChannelHandlerContext) {
        let timeout = connections.limits.headTimeout
        guard timeout > 0 else { return }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        headTimer = context.eventLoop.scheduleTask(deadline: readySince + .nanoseconds(Int64(timeout * 1e9))) {
            handler.value.headTimerFired(bound.value)
        }
    }

    /// Closes the connection if it is still waiting for a head past its deadline; otherwise re-arms for the
    /// current deadline (a request came and went since), or leaves it to the end of the request in progress.
    private func headTimerFired(_ context: ChannelHandlerContext) {
        headTimer = nil
        guard !busy, context.channel.isActive else { return }
        if NIODeadline.now() >= readySince + .nanoseconds(Int64(connections.limits.headTimeout * 1e9)) {
            connections.headTimedOut(context.channel)
            context.close(promise: nil)
        } else {
            armHeadTimer(context)
        }
    }
}
