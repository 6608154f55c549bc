import DarkroomImage

/// An animation's frames made in a decode worker: the worker decodes and resamples each frame (the decoder held
/// there between frames) and this side copies it out of the worker's output memory file.
///
/// Holds its worker (and so one of the pool's slots) from opening until it is released, so a caller encodes one
/// animation per thread at a time. A fault in the worker ends the animation with a typed error at the frame that
/// caused it; the worker is replaced, not reused. Not thread-safe: one thread at a time, as every frame source.
final class WorkerAnimation: AnimationFrameSource {
    let info: AnimationInfo
    let frameCount: Int
    let outputWidth: Int
    let outputHeight: Int
    private(set) var nextIndex = 0
    private let worker: WorkerProcess
    private let timeout: Double
    private let release: (WorkerProcess, DarkroomImageError?) -> Void
    private var failure: DarkroomImageError?

    /// Wraps `worker`, whose animation is open as `header` says; `release` takes the worker back (with the failure
    /// that ended it, if any) when this source goes.
    init(
        worker: WorkerProcess, header: WorkerReply.AnimationHeader, timeout: Double,
        release: @escaping (WorkerProcess, DarkroomImageError?) -> Void
    ) {
        self.worker = worker
        self.timeout = timeout
        self.release = release
        info = header.info
        frameCount = header.frameCount
        outputWidth = header.outputWidth
        outputHeight = header.outputHeight
    }

    deinit {
        if worker.isRunning { _ = try? worker.exchange(WorkerRequest(step: .closeAnimation), timeout: timeout) }
        worker.releaseLargeInput()
        release(worker, failure)
    }

    func nextFrame(allocate: BitmapAllocator) throws(DarkroomImageError) -> AnimatedFrame? {
        let reply = try step(.nextFrame)
        guard let index = reply.frameIndex else { return nil }
        // The worker's word is checked: the frame it says comes next, at the size it opened with
        guard index == nextIndex, index < frameCount, reply.width == outputWidth, reply.height == outputHeight else {
            throw fail(DarkroomImageError(.decoderCrashed, "the decode worker described an impossible frame"))
        }
        let bitmap: Bitmap
        do throws(DarkroomImageError) {
            bitmap = try worker.output(reply, allocate: allocate).bitmap
        } catch {
            throw fail(error)
        }
        nextIndex += 1
        return AnimatedFrame(index: index, bitmap: bitmap, duration: max(0, reply.frameDuration))
    }

    func skipFrame() throws(DarkroomImageError) -> Bool {
        let skipped = try step(.skipFrame).skipped
        if skipped { nextIndex += 1 }
        return skipped
    }

    func rewind() throws(DarkroomImageError) {
        _ = try step(.rewind)
        nextIndex = 0
    }

    private func step(_ step: WorkerRequest.Step) throws(DarkroomImageError) -> WorkerReply {
        do throws(DarkroomImageError) {
            return try worker.exchange(WorkerRequest(step: step), timeout: timeout)
        } catch {
            throw fail(error)
        }
    }

    /// Records a failure that ended the worker (for the pool's counts) and passes it on.
    private func fail(_ error: DarkroomImageError) -> DarkroomImageError {
        // A worker that broke the protocol is not trusted with another request
        if error.code == .decoderCrashed, worker.isRunning { worker.terminate() }
        if !worker.isRunning { failure = error }
        return error
    }
}
