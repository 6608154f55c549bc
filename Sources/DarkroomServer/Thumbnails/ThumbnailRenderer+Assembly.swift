import Darkroom
import DarkroomCache
import DarkroomImage
import DarkroomVideo
import DarkroomWorkers
import Logging

/// Assembly: everything the service answers with, built from a ``ServerConfiguration`` — the root and its gallery,
/// the signer, the guarded loader (S3 too), the thumbnail and original caches (memory only when the disk ones cannot
/// open), the pipeline and admission. Answering requests is the rest of ``ThumbnailRenderer``.
extension ThumbnailRenderer {
    /// The parts ``assemble(_:resolver:)`` builds.
    struct Parts: Sendable {
        var root: RootDirectory?
        var gallery: GalleryIndex?
        var signer: RequestSigner?
        var loader: GuardedDataLoader
        var cache: ThumbnailCache
        /// Why the disk caches could not be opened, when they could not.
        var diskCacheProblem: String?
        var pipeline: ImagePipeline
        /// The decode workers the pipeline decodes in; nil when it decodes in this process.
        var decodeWorkers: DecodeWorkerPool?
        var admission: AdmissionController
    }

    /// Builds the service's parts from `configuration` and starts it.
    /// - Throws: ``ServerError`` when the root cannot be opened.
    convenience init(
        configuration: ServerConfiguration, resolver: any HostResolving = SystemHostResolver(),
        stepObserver: (@Sendable (_ step: String) -> Void)? = nil
    ) throws(ServerError) {
        self.init(
            configuration: configuration, parts: try Self.assemble(configuration, resolver: resolver),
            stepObserver: stepObserver)
    }

    /// Opens the root, the caches and the pipeline for `configuration`. Cost: opening the disk caches (their
    /// SQLite manifests) and the root directory; nothing is listed or rendered yet.
    /// - Throws: ``ServerError`` when the root cannot be opened or the decode worker executable is missing.
    static func assemble(_ configuration: ServerConfiguration, resolver: any HostResolving) throws(ServerError)
        -> Parts
    {
        let root = try configuration.root.map { path throws(ServerError) in try RootDirectory(path) }
        let gallery = root.map {
            GalleryIndex(
                root: $0, refreshInterval: configuration.galleryRefreshSeconds,
                maxImages: configuration.galleryMaxImages)
        }
        var http = HTTPDataLoader.Configuration()
        http.maxResponseBytes = Int64(configuration.limits.maxSourceBytes)
        http.totalTimeout = configuration.requestTimeout
        let loader = GuardedDataLoader(
            policy: configuration.remote, resolver: resolver, http: http, logger: configuration.logger,
            s3: configuration.s3.map { S3DataLoader(configuration: $0, http: http, logger: configuration.logger) })
        let workers = try configuration.decodeWorkers.map { workers throws(ServerError) in
            do throws(WorkerError) {
                try workers.checkExecutable()
            } catch {
                throw ServerError(.internalError, error.message + "; ServerConfiguration.decodeWorkers = nil")
            }
            return DecodeWorkerPool(configuration: workers)
        }
        let (cache, originals, problem) = openCaches(configuration)
        return Parts(
            root: root, gallery: gallery, signer: configuration.signingKey.map { RequestSigner(key: $0) },
            loader: loader, cache: cache, diskCacheProblem: problem,
            pipeline: makePipeline(configuration, loader: loader, originals: originals, workers: workers),
            decodeWorkers: workers,
            admission: AdmissionController(
                maxRunning: configuration.maxRenders, maxQueued: configuration.maxQueued,
                memoryBudget: configuration.renderMemoryBudget))
    }

    /// The thumbnail cache and the originals' disk cache. A disk that cannot be opened (full, read-only,
    /// permissions) leaves memory caches only and says why: `/health` then reports `degraded` rather than the server
    /// refusing to start, so a restart during a disk-full spell does not take the service down.
    private static func openCaches(_ configuration: ServerConfiguration)
        -> (ThumbnailCache, DiskCache?, problem: String?)
    {
        let memoryOnly = {
            ThumbnailCache(
                memoryBytes: configuration.memoryCacheBytes, remoteMaxAge: Double(configuration.cacheMaxAge))
        }
        guard let cacheDir = configuration.cacheDirectory else { return (memoryOnly(), nil, nil) }
        do {
            let disk = DiskCacheConfiguration(
                sizeLimit: configuration.diskCacheBytes, minFreeDiskSpace: configuration.minFreeDiskBytes)
            let thumbnails = try ThumbnailCache(
                memoryBytes: configuration.memoryCacheBytes, directory: cacheDir + "/thumbnails", disk: disk,
                remoteMaxAge: Double(configuration.cacheMaxAge))
            return (thumbnails, try DiskCache(directory: cacheDir + "/originals", configuration: disk), nil)
        } catch {
            let problem = "cannot open the disk caches in \(cacheDir): \(error)"
            configuration.logger.error("running on memory caches only", metadata: ["problem": "\(problem)"])
            return (memoryOnly(), nil, problem)
        }
    }

    /// The pipeline renders run on: at most ``ServerConfiguration/maxRenders`` decodes at once, the decode limits,
    /// colour and chroma policy of the configuration, originals kept in `originals`, decodes in `workers` if any.
    private static func makePipeline(
        _ configuration: ServerConfiguration, loader: GuardedDataLoader, originals: DiskCache?,
        workers: DecodeWorkerPool?
    ) -> ImagePipeline {
        var pipelineConfiguration = ImagePipeline.Configuration(
            imageCache: MemoryCache<ImageCacheKey, ImageContainer>(
                limits: MemoryCacheLimits(costLimit: max(1 << 20, configuration.decodedCacheBytes))),
            dataCache: originals, dataLoader: loader)
        pipelineConfiguration.diskCachePolicy = .storeOriginalData
        if configuration.s3 != nil { pipelineConfiguration.loaderSchemes = ["s3"] }
        pipelineConfiguration.processingLimit = configuration.maxRenders
        pipelineConfiguration.maxResponseBytes = configuration.limits.maxSourceBytes
        pipelineConfiguration.decodeOptions.limits = configuration.limits.decode
        pipelineConfiguration.decoder = VideoDecoder.imageDecoder  // videos: the poster frame, or the one at time=
        pipelineConfiguration.decoder.isolation = workers
        pipelineConfiguration.decodeOptions.chromaFromDC = !configuration.exactChroma
        pipelineConfiguration.decodeOptions.colorSpace = configuration.keepColorProfile ? .original : .sRGB
        pipelineConfiguration.logger = configuration.logger
        pipelineConfiguration.metricsPrefix = "darkroom_server_pipeline"
        return ImagePipeline(configuration: pipelineConfiguration)
    }
}
