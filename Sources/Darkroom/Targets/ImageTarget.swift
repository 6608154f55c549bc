import DarkroomCache
import DarkroomImage
import DarkroomSupport

/// Anything that shows an image: a cell, a view model, a test double.
///
/// ``ImagePipeline/setImage(with:on:placeholder:failureImage:)`` binds a request to the target; each binding
/// bumps the target's generation, and a result is displayed only if its generation is still current — checked
/// and displayed under the target's display lock, so a late result from an earlier binding can never overwrite a
/// newer one. ``display(_:)`` runs on a pipeline thread (or the caller's, for placeholders and memory hits);
/// it must not call `setImage` on the same target synchronously.
public protocol ImageTarget: AnyObject, Sendable {
    /// Per-target storage the pipeline uses; return the same instance every time (`let darkroom = ImageTargetState()`).
    var darkroom: ImageTargetState { get }
    /// Shows a placeholder, an image, or a failure image.
    func display(_ content: ImageTargetContent)
}

/// What a target is asked to show.
public enum ImageTargetContent: Sendable {
    /// The binding started: show this placeholder (or clear, when `nil`).
    case placeholder(Bitmap?)
    /// The image arrived, or a preview of it (``ImageContainer/isPreview``: a request's progressive or
    /// embedded-thumbnail previews) that the final image replaces; a preview never follows the final image.
    case image(ImageResponse)
    /// The request failed: show this failure image (or keep the placeholder, when `nil`).
    case failure(DarkroomError, Bitmap?)
}

/// A target's binding state: its generation counter (the seeds' sentinel) and current task.
public final class ImageTargetState: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var task: ImageTask?
        /// Whether the binding's final image (or failure) has been displayed: a preview must not replace it.
        var finalShown = false
    }

    private let state = Locked(State())
    /// Serialises check-and-display so a stale result cannot slip in between the check and the display.
    private let displayLock = Locked(())

    /// Creates empty state.
    public init() {}

    /// The current binding's generation.
    public var generation: UInt64 { state.withLock { $0.generation } }

    /// Starts a new binding: bumps the generation and returns it with the previous task to cancel. Taken under
    /// the display lock, so a display of the previous binding is either finished before this returns or never
    /// happens.
    func rebind() -> (UInt64, ImageTask?) {
        displayLock.withLock { _ in
            state.withLock { s in
                s.generation &+= 1
                s.finalShown = false
                let previous = s.task
                s.task = nil
                return (s.generation, previous)
            }
        }
    }

    func attach(_ task: ImageTask, generation: UInt64) {
        let stale: Bool = state.withLock { s in
            guard s.generation == generation else { return true }
            s.task = task
            return false
        }
        if stale { task.cancel() }
    }

    /// What a display shows, for the order between them.
    enum DisplayKind { case placeholder, preview, final }

    /// Runs `display` only if `generation` is still current, atomically with the check; a preview only while the
    /// binding's final image has not been shown (a preview's delivery can race the final one's).
    func displayIfCurrent(_ generation: UInt64, _ kind: DisplayKind = .final, _ display: () -> Void) -> Bool {
        displayLock.withLock { _ in
            let current = state.withLock { s in
                guard s.generation == generation, !(kind == .preview && s.finalShown) else { return false }
                if kind == .final { s.finalShown = true }
                return true
            }
            guard current else { return false }
            display()
            return true
        }
    }

    /// Cancels the current binding (the target shows nothing more from it).
    public func cancel() {
        let (_, task) = rebind()
        task?.cancel()
    }
}

extension ImagePipeline {
    /// Binds `request` to `target`: cancels the target's previous request, shows `placeholder`, then any previews
    /// the request asks for, then the image (or `failureImage` on failure) — unless the target has been rebound
    /// since, in which case the result is dropped. A memory-cache hit is displayed synchronously, without a
    /// placeholder. Returns the task (already finished on a hit).
    @discardableResult
    public func setImage(
        with request: ImageRequest, on target: any ImageTarget,
        placeholder: Bitmap? = nil, failureImage: Bitmap? = nil
    ) -> ImageTask {
        let state = target.darkroom
        let (generation, previous) = state.rebind()
        previous?.cancel()
        if cachedImage(for: request) == nil {
            _ = state.displayIfCurrent(generation, .placeholder) { target.display(.placeholder(placeholder)) }
        }
        let task = start(request) { [weak target] event in
            guard let target else { return }
            let result: Result<ImageResponse, DarkroomError>
            switch event {
            case .progress: return
            case .preview(let response):
                _ = state.displayIfCurrent(generation, .preview) { target.display(.image(response)) }
                return
            case .finished(let r): result = r
            }
            switch result {
            case .success(let response):
                _ = state.displayIfCurrent(generation) { target.display(.image(response)) }
            case .failure(let error) where error.code == .cancelled:
                break
            case .failure(let error):
                _ = state.displayIfCurrent(generation) { target.display(.failure(error, failureImage)) }
            }
        }
        state.attach(task, generation: generation)
        return task
    }
}
