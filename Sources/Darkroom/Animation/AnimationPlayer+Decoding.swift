import DarkroomImage
import DarkroomSupport

/// The player's decoder, used only by the one decode job that runs at a time.
// @unchecked Sendable: `decoder` is touched only by the decode job, and at most one job runs per player — a job
// starts only after setting `State.decoding` under the player's lock and clears it under the lock as its last
// access, so every access is ordered by that lock's handoff.
final class DecoderBox: @unchecked Sendable {
    var decoder: (any AnimationFrameSource)?
}

extension AnimationPlayer {
    /// Marks the decode job running when there is work for it (a frame due or room in the buffer) and none runs;
    /// returns whether the caller must start it.
    static func claimDecoding(_ s: inout State) -> Bool {
        guard !s.decoding, !s.stopped, s.decodeNext <= s.decodeEnd else { return false }
        s.decoding = true
        return true
    }

    func kickIfNeeded(_ kick: Bool) {
        guard kick else { return }
        queue.enqueue(priority: .normal) { [self] _ in runDecoding() }
    }

    /// Decodes frames in order until the buffer is full, the animation ends or the player stops. Frames whose
    /// time has passed are composited without resampling (skipped).
    private func runDecoding() {
        while true {
            let next = state.withLock { s -> (sequence: Int, skip: Bool)? in
                guard !s.stopped, s.decodeNext <= s.decodeEnd else {
                    decoder.decoder = nil  // nothing left to decode: free the canvas
                    s.decoding = false
                    return nil
                }
                let behind = !s.keepsAll && s.decodeNext < s.playhead
                guard behind || s.frames.count * frameBytes + frameBytes <= s.budget else {
                    s.decoding = false
                    return nil
                }
                defer { s.decodeNext += 1 }
                return (s.decodeNext, behind)
            }
            guard let next else { return }
            do throws(DarkroomImageError) {
                guard let frame = try produce(next.sequence, skip: next.skip) else {
                    // The decoder ran out of frames early (a truncated file): the animation is that long.
                    state.withLock { s in
                        s.decodeEnd = min(s.decodeEnd, next.sequence - 1)
                        s.decoding = false
                    }
                    return
                }
                guard let frame = frame else { continue }
                state.withLock { s in
                    s.statistics.framesDecoded += 1
                    guard s.keepsAll || next.sequence >= s.playhead else { return }  // overtaken while decoding
                    s.frames[key(next.sequence, s)] = frame
                    s.statistics.bufferedBytes = s.frames.count * frameBytes
                    s.statistics.peakBufferedBytes = max(s.statistics.peakBufferedBytes, s.statistics.bufferedBytes)
                }
            } catch {
                state.withLock { s in
                    s.statistics.error = error
                    s.decodeEnd = min(s.decodeEnd, next.sequence - 1)
                    s.decoding = false
                }
                return
            }
        }
    }

    /// Brings the decoder to frame `sequence % frameCount` (rewinding at a loop's end), then composites it, and
    /// resamples it unless `skip`. nil when the decoder has no such frame; `.some(nil)` for a skipped frame.
    private func produce(_ sequence: Int, skip: Bool) throws(DarkroomImageError) -> AnimatedFrame?? {
        let index = sequence % timeline.frameCount
        let decoder: any AnimationFrameSource
        if let existing = self.decoder.decoder {
            decoder = existing
        } else {
            decoder = try makeSource()
            self.decoder.decoder = decoder
        }
        if decoder.nextIndex > index { try decoder.rewind() }
        while decoder.nextIndex < index {
            guard try decoder.skipFrame() else { return nil }
        }
        if skip {
            guard try decoder.skipFrame() else { return nil }
            return .some(nil)
        }
        guard let frame = try decoder.nextFrame() else { return nil }
        return .some(frame)
    }
}
