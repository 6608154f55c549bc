import DarkroomImage

/// An animation's frames made in a decode worker: the worker decodes and resamples each frame (the decoder held
/// there between frames, beside other animations') and this side copies it out of the worker's output memory file.
///
/// Holds no worker between frames: each step waits for a pool slot and for its own worker to be idle, so many
/// animations can play from a few workers. A fault in the worker ends the animation with a typed error at the frame
/// that caused it, and ends the other animations that worker held at their next step (`.decoderCrashed`); the worker
/// is replaced, not reused. Not thread-safe: one thread at a time, as every frame source.
final class WorkerAnimation: AnimationFrameSource {
    let info: AnimationInfo
    let frameCount: Int
    let outputWidth: Int
    let outputHeight: Int
    private(set) var nextIndex = 0
    private let pool: DecodeWorkerPool
    private let worker: WorkerProcess
    private let id: Int
    private let timeout: Double

    /// Wraps animation `id`, open in `worker` as `header` says; it is closed there after this source goes (by the
    /// worker's next request: releasing a source never blocks).
    init(
        pool: DecodeWorkerPool, worker: WorkerProcess, id: Int, header: WorkerReply.AnimationHeader, timeout: Double
    ) {
        self.pool = pool
        self.worker = worker
        self.id = id
        self.timeout = timeout
        info = header.info
        frameCount = header.frameCount
        outputWidth = header.outputWidth
        outputHeight = header.outputHeight
    }

    deinit {
        pool.closeAnimation(id, in: worker)
    }

    func nextFrame(allocate: BitmapAllocator) throws(DarkroomImageError) -> AnimatedFrame? {
        let expected = nextIndex
        let frame = try step(.nextFrame) { worker, reply throws(DarkroomImageError) -> AnimatedFrame? in
            guard let index = reply.frameIndex else { return nil }
            // The worker's word is checked: the frame it says comes next, at the size it opened with
            guard index == expected, index < frameCount, reply.width == outputWidth, reply.height == outputHeight
            else { throw DarkroomImageError(.decoderCrashed, "the decode worker described an impossible frame") }
            // Copied out while the worker is this source's: the next request overwrites its output
            let bitmap = try worker.output(reply, allocate: allocate).bitmap
            return AnimatedFrame(index: index, bitmap: bitmap, duration: max(0, reply.frameDuration))
        }
        if frame != nil { nextIndex += 1 }
        return frame
    }

    func skipFrame() throws(DarkroomImageError) -> Bool {
        let skipped = try step(.skipFrame) { _, reply throws(DarkroomImageError) in reply.skipped }
        if skipped { nextIndex += 1 }
        return skipped
    }

    func rewind() throws(DarkroomImageError) {
        try step(.rewind) { _, _ throws(DarkroomImageError) in }
        nextIndex = 0
    }

    /// One step of this animation in its worker, and what `read` makes of the reply while the worker is still held.
    private func step<Result>(
        _ step: WorkerRequest.Step, _ read: (WorkerProcess, WorkerReply) throws(DarkroomImageError) -> Result
    ) throws(DarkroomImageError) -> Result {
        try pool.withHome(worker) { worker throws(DarkroomImageError) in
            do throws(DarkroomImageError) {
                let reply = try worker.exchange(WorkerRequest(step: step, animationID: id), timeout: timeout)
                return try read(worker, reply)
            } catch {
                // A worker that broke the protocol is not trusted with another request
                if error.code == .decoderCrashed, worker.isRunning { worker.terminate() }
                throw error
            }
        }
    }
}
