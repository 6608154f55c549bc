import DarkroomSupport
import Foundation
import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import UnixSignals

/// `darkroom serve`: the pipeline over HTTP, safe to put on the internet.
///
/// Routes: `GET /v1/thumb` (a thumbnail, cached in memory and on disk, `ETag`/304, `format=auto` negotiated
/// from `Accept`), `GET /v1/info` (the probe as JSON), `GET /health`, `GET /metrics` (Prometheus text, when a
/// registry is given), `GET /` (a gallery of the images under the root) and `GET /view`.
/// Safety: paths stay inside the root, remote hosts must be allowed and resolve to public addresses (checked on
/// every redirect, connections pinned to the checked address), `sig` is required with a key, decode limits
/// apply to every source, a bounded render queue answers 429, every request has a deadline, a render whose
/// clients all left is cancelled, and connections are bounded in all and per client address.
///
/// Runs on Hummingbird 2 (SwiftNIO) under a swift-service-lifecycle `ServiceGroup` that shuts down gracefully
/// on SIGTERM and SIGINT: the listener closes, requests in flight finish, then the HTTP client pool closes.
public final class ThumbnailServer: Sendable {
    /// The configuration in force.
    public let configuration: ServerConfiguration
    let service: ThumbnailRenderer
    let registry: PrometheusCollectorRegistry?
    /// The client connections: their limits, and who is still there.
    let connections: ConnectionGuard

    /// Opens the caches and builds the pipeline; binds nothing until ``run(onRunning:)``.
    /// - Parameters:
    ///   - configuration: the root, caches, limits and policies it serves with.
    ///   - registry: where `/metrics` reads from; bootstrap swift-metrics with a `PrometheusMetricsFactory` on the
    ///     same registry so the pipeline's and the server's instruments land there. `nil`: `/metrics` is empty.
    /// - Throws: ``ServerError`` when the root is not a directory or a cache directory cannot be opened.
    public convenience init(configuration: ServerConfiguration, registry: PrometheusCollectorRegistry? = nil)
        throws(ServerError)
    {
        try self.init(configuration: configuration, registry: registry, resolver: SystemHostResolver())
    }

    /// The same, resolving remote hosts with `resolver` (tests inject one).
    init(
        configuration: ServerConfiguration, registry: PrometheusCollectorRegistry?,
        resolver: any HostResolving
    ) throws(ServerError) {
        self.configuration = configuration
        self.registry = registry
        service = try ThumbnailRenderer(configuration: configuration, resolver: resolver)
        let descriptorLimit = ConnectionGuard.descriptorLimit()
        let limits = ConnectionGuard.Limits(
            maxConnections: ConnectionGuard.maxConnections(
                configuration.maxConnections, descriptorLimit: descriptorLimit,
                reserve: configuration.descriptorReserve),
            maxPerClient: max(0, configuration.maxConnectionsPerClient), headTimeout: configuration.idleTimeout)
        if limits.maxConnections < configuration.maxConnections {
            configuration.logger.notice(
                "fewer connections than configured: the descriptor limit is low",
                metadata: [
                    "max_connections": "\(limits.maxConnections)", "configured": "\(configuration.maxConnections)",
                    "descriptor_limit": "\(descriptorLimit.map(String.init) ?? "none")",
                ])
        }
        connections = ConnectionGuard(limits: limits, logger: configuration.logger)
    }

    /// The Hummingbird application (for tests and for embedding in a larger service group).
    /// `onRunning` gets the bound port once the listener is up.
    public func makeApplication(onRunning: @escaping @Sendable (Int) async -> Void = { _ in })
        -> some ApplicationProtocol
    {
        let routes = ServerRoutes(
            renderer: service,
            gallery: GalleryPage(
                signer: service.signer, pageSize: configuration.galleryPageSize, placeholders: service.placeholders),
            registry: registry, connections: connections)
        let connections = connections
        return Application(
            router: routes.router(),
            server: .http1(
                // No Hummingbird idle timeout: the guard's head timeout closes idle connections and slow senders
                // alike, with one timer per connection rather than one per response
                configuration: .init(additionalChannelHandlers: [ConnectionGuardHandler(connections)], idleTimeout: nil)
            ),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port),
                serverName: "Darkroom", backlog: 1024),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: configuration.logger)
    }

    /// Serves until SIGTERM or SIGINT, then shuts down gracefully. `onRunning` gets the bound port.
    public func run(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let app = makeApplication(onRunning: onRunning)
        let group = ServiceGroup(
            configuration: .init(
                services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: configuration.logger))
        do {
            try await group.run()
        } catch {
            await shutdown()
            throw error
        }
        await shutdown()
    }

    /// Closes the remote-fetch connection pools. Call after the application stops (``run(onRunning:)`` does).
    public func shutdown() async {
        await service.loader.shutdown()
    }

    /// Renders started, requests that joined a render already in flight, and renders cancelled because every
    /// request waiting for them left (for tests and benchmarks).
    public var renderCounts: (started: UInt64, joined: UInt64, abandoned: UInt64) { service.renders.counts }
    /// The connection limits in force (``ServerConfiguration/maxConnections`` lowered to the descriptor limit).
    public var connectionLimits: (maxConnections: Int, maxPerClient: Int) {
        (connections.limits.maxConnections, connections.limits.maxPerClient)
    }
    /// Client connections open now.
    public var openConnections: Int { connections.openCount }
    /// Thumbnails rendered whose disk-cache write is still queued (written after the answer, at low priority).
    public var pendingDiskWrites: Int { service.pendingDiskWrites.withLock { $0 } }
}
