import DarkroomImage
import DarkroomSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Animations in the pool's workers: each opened in a worker that keeps its decoder (several per worker), its frames
/// then made one request at a time in that worker. A frame source holds no worker between frames, so a viewer's grid
/// can play many animations with a pool of a few workers, and a slow consumer (an encoder, a player's clock) holds
/// nothing while it works.
extension DecodeWorkerPool {
    /// The frames of the animation in `bytes`, made in a worker at `options`' size, at most `frameLimit` of them:
    /// the worker opens the animation now (its limits and header checked there, the bytes in a memory file of the
    /// animation's own) and makes each frame when asked. Between frames the worker serves other requests. Blocking.
    /// - Throws: `DarkroomImageError` as ``decode(_:options:)``, and the animation decoder's own errors.
    public func animation(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions, frameLimit: Int?)
        throws(DarkroomImageError) -> any AnimationFrameSource
    {
        let input = try WorkerProcess.memoryFile(holding: bytes)
        defer { close(input) }
        return try animation(file: input, length: bytes.count, options: options, frameLimit: frameLimit)
    }

    /// The frames of the animation in the regular file open at `descriptor` (`length` bytes), made in a worker
    /// that maps the file itself (see ``animation(_:options:frameLimit:)``). The caller keeps `descriptor`.
    public func animation(file descriptor: Int32, length: Int, options: DecodeOptions, frameLimit: Int?)
        throws(DarkroomImageError) -> any AnimationFrameSource
    {
        var request = WorkerRequest(step: .openAnimation, options: options, input: .file, inputLength: length)
        request.frameLimit = frameLimit
        return try openAnimation(request, input: descriptor)
    }

    /// The motion preview of the clip at `range` of the regular file open at `descriptor`, made in a worker that
    /// reads the file by ranges (the clip found by the caller, from headers): the worker opens the video now and
    /// decodes each frame when asked, as an animation's. The caller keeps `descriptor`. Blocking.
    /// - Throws: `DarkroomImageError` as ``decode(_:options:)``, and the video decoder's own errors.
    public func motion(file descriptor: Int32, range: Range<Int64>, options: DecodeOptions, preview: MotionPreview)
        throws(DarkroomImageError) -> any AnimationFrameSource
    {
        var request = WorkerRequest(step: .openMotion, options: options, input: .file, inputLength: Int(range.count))
        request.preview = preview
        request.clipOffset = range.lowerBound
        return try openAnimation(request, input: descriptor)
    }

    /// Opens an animation with `request` in the worker holding the fewest, numbered for the worker, and gives the
    /// worker back at once: the frame source asks for it again for each step.
    private func openAnimation(_ request: WorkerRequest, input: Int32) throws(DarkroomImageError)
        -> any AnimationFrameSource
    {
        var request = request
        request.animationID = state.withLock { state in
            defer { state.nextAnimationID += 1 }
            return state.nextAnimationID
        }
        let worker = try lease(forAnimation: true)
        do throws(DarkroomImageError) {
            guard let header = try worker.exchange(request, input: input, timeout: configuration.timeout).animation
            else {
                worker.terminate()
                throw DarkroomImageError(.decoderCrashed, "the decode worker opened no animation")
            }
            state.withLock { $0.animations[ObjectIdentifier(worker), default: 0] += 1 }
            release(worker, failure: nil)
            return WorkerAnimation(
                pool: self, worker: worker, id: request.animationID, header: header, timeout: configuration.timeout)
        } catch {
            release(worker, failure: error)
            throw error
        }
    }

    /// Runs `body` with `worker`, the one holding an animation: waits for a slot, then for the worker to be idle.
    /// - Throws: `.decoderCrashed` when the worker has ended (its animations cannot go on), and what `body` throws.
    func withHome<Result>(
        _ worker: WorkerProcess, _ body: (WorkerProcess) throws(DarkroomImageError) -> Result
    ) throws(DarkroomImageError) -> Result {
        let key = ObjectIdentifier(worker)
        slots.wait()
        returned.lock()
        var taken = false
        while true {
            let found = state.withLock { state -> Bool? in
                if state.ended.contains(key) { return false }
                guard let index = state.idle.firstIndex(where: { $0 === worker }) else { return nil }
                state.idle.remove(at: index)
                state.busy += 1
                return true
            }
            if let found {
                taken = found
                break
            }
            returned.wait()
        }
        returned.unlock()
        guard taken else {
            slots.signal()
            throw DarkroomImageError(.decoderCrashed, "the decode worker holding this animation ended")
        }
        return try run(body, leased: worker)
    }

    /// Forgets animation `id` of `worker` without waiting for it: the worker closes it before its next request (a
    /// worker that ended forgets its animations when the last goes). Never blocks.
    func closeAnimation(_ id: Int, in worker: WorkerProcess) {
        state.withLock { state in
            let key = ObjectIdentifier(worker)
            let left = (state.animations[key] ?? 1) - 1
            state.animations[key] = left > 0 ? left : nil
            if state.ended.contains(key) {
                if left <= 0 { state.ended.remove(key) }
            } else {
                state.closing[key, default: []].append(id)
            }
        }
    }
}
