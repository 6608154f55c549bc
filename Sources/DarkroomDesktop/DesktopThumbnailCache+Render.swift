import DarkroomImage

extension DesktopThumbnailCache {
    /// What ``render(_:size:decoder:buffer:)`` did for one file.
    package enum Outcome: Sendable {
        /// A valid thumbnail was there already (its path): nothing decoded.
        case valid(String)
        /// A failure of this version is recorded for the file as it is now: not tried again.
        case knownFailure
        /// Decoded and written (its path).
        case rendered(String)
        /// The file could not be thumbnailed. A failure of its content (not readable as an image, too large) is
        /// recorded under `fail/`; one of the file system (missing, unreadable) or of the cache's folder is not,
        /// since it may pass without the file changing.
        case failed(DarkroomImageError)
        /// Decoded, but the thumbnail could not be written to the cache.
        case notSaved(DarkroomImageError)
    }

    /// The thumbnail of `file` (an absolute path) at `size`: looked up first, else decoded at the size by `decoder`
    /// (in its confined workers when it has them) and written. Cost: a `stat` and a header read when valid;
    /// otherwise one display-size decode and a PNG encode. Blocks: call on the caller's own threads.
    package func render(_ file: String, size: Size, decoder: ImageDecoder, buffer: FileReadBuffer? = nil) -> Outcome {
        do {
            switch try lookup(file, size: size) {
            case .valid(let path): return .valid(path)
            case .failed: return .knownFailure
            case .stale, .missing: break
            }
        } catch {
            return .failed(error)
        }
        let image: DecodedImage
        do {
            image = try decoder.decode(
                fileAt: file, options: DecodeOptions(size: .maxPixelSize(size.pixels)), reading: buffer)
        } catch {
            if Self.isFailureOfContent(error.code) { try? storeFailure(for: file) }
            return .failed(error)
        }
        do {
            return .rendered(try store(image.bitmap, for: file, size: size, mimeType: Self.mimeType(of: image.probe)))
        } catch {
            return .notSaved(error)
        }
    }

    /// Whether a decode's failure says something about the file's content (recorded) rather than about reaching it.
    static func isFailureOfContent(_ code: DarkroomImageError.Code) -> Bool {
        switch code {
        case .notFound, .io, .invalidArgument, .outOfMemory: false
        default: true
        }
    }
}
