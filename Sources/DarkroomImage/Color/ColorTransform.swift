import CLCMS2
import DarkroomSupport

/// The pixel layouts colour transforms read and write.
enum ColorLayout: Sendable, Hashable {
    /// Opaque BGRA8.
    case bgra
    /// BGRA8 with premultiplied alpha.
    case bgraPremultiplied
    /// One gray byte.
    case gray
    /// C, M, Y, K bytes (inverted, as Adobe writes them, when `inverted`), converted to opaque BGRA8.
    case cmyk(inverted: Bool)

    /// lcms2's format word for the input side.
    var inputFormat: UInt32 {
        switch self {
        case .bgra: LCMSFormat.bgra8
        case .bgraPremultiplied: LCMSFormat.bgra8Premultiplied
        case .gray: LCMSFormat.gray8
        case .cmyk(let inverted): inverted ? LCMSFormat.cmyk8Inverted : LCMSFormat.cmyk8
        }
    }

    /// lcms2's format word for the output side.
    var outputFormat: UInt32 {
        switch self {
        case .bgra, .cmyk: LCMSFormat.bgra8
        case .bgraPremultiplied: LCMSFormat.bgra8Premultiplied
        case .gray: LCMSFormat.gray8
        }
    }

    /// lcms2's rendering intent: perceptual for CMYK (the press profile's screen rendering, as browsers and
    /// Pillow use), relative colorimetric otherwise (identical for matrix/TRC profiles).
    var renderingIntent: UInt32 {
        switch self {
        case .cmyk: UInt32(INTENT_PERCEPTUAL)
        case .bgra, .bgraPremultiplied, .gray: UInt32(INTENT_RELATIVE_COLORIMETRIC)
        }
    }

    /// The profile colour space the input must be described in.
    var profileSpace: cmsColorSpaceSignature {
        switch self {
        case .bgra, .bgraPremultiplied: cmsSigRgbData
        case .gray: cmsSigGrayData
        case .cmyk: cmsSigCmykData
        }
    }
}

/// lcms2's `TYPE_*` format words, which Swift cannot import (they are function-like macros in lcms2.h).
enum LCMSFormat {
    private static func word(
        space: UInt32, channels: UInt32, extra: UInt32 = 0, doSwap: UInt32 = 0,
        swapFirst: UInt32 = 0, flavor: UInt32 = 0, premultiplied: UInt32 = 0
    ) -> UInt32 {
        (premultiplied << 23) | (space << 16) | (swapFirst << 14) | (flavor << 13) | (doSwap << 10) | (extra << 7)
            | (channels << 3) | 1
    }
    static let bgra8 = word(space: 4, channels: 3, extra: 1, doSwap: 1, swapFirst: 1)  // TYPE_BGRA_8
    static let bgra8Premultiplied = word(space: 4, channels: 3, extra: 1, doSwap: 1, swapFirst: 1, premultiplied: 1)
    static let gray8 = word(space: 3, channels: 1)  // TYPE_GRAY_8
    static let cmyk8 = word(space: 6, channels: 4)  // TYPE_CMYK_8
    static let cmyk8Inverted = word(space: 6, channels: 4, flavor: 1)  // TYPE_CMYK_8_REV
}

/// A built lcms2 transform from an embedded description to sRGB (or to gray with the sRGB curve).
///
/// `@unchecked Sendable`: the handle is created with `cmsFLAGS_NOCACHE`, which lcms2 documents as the condition
/// for calling `cmsDoTransform` on one transform from several threads at once; nothing mutates the handle after
/// `init`, and `deinit` runs only when no thread holds the object.
final class ColorTransform: @unchecked Sendable {
    private let handle: cmsHTRANSFORM
    let layout: ColorLayout
    /// How much the transform magnifies a one-level step of its input, at most (over a grid of test colours):
    /// wide-gamut 8-bit encodings (ProPhoto, Adobe RGB) turn small decoding errors into larger sRGB ones.
    private(set) var amplification = 1.0
    /// The specialised arithmetic for opaque BGRA from an RGB matrix/TRC profile (nil: lcms2 does it all).
    let kernel: MatrixShaperKernel?

    init(handle: cmsHTRANSFORM, layout: ColorLayout, kernel: MatrixShaperKernel? = nil) {
        self.handle = handle
        self.layout = layout
        self.kernel = layout == .bgra ? kernel : nil
    }

    /// Sets ``amplification`` (only while building, before the transform is shared).
    func measured(amplification: Double) -> ColorTransform {
        self.amplification = amplification
        return self
    }

    deinit { cmsDeleteTransform(handle) }

    /// Converts `count` pixels from `source` to `destination` (which must not overlap).
    func convert(_ source: UnsafeRawPointer, _ destination: UnsafeMutableRawPointer, count: Int) {
        cmsDoTransform(handle, source, destination, UInt32(count))
    }

    /// Converts every row of `bitmap` in place, in one lcms2 call. In place is exact for layouts whose input
    /// and output pixels have the same size (every layout but CMYK): lcms2 reads each pixel before it writes it
    /// (a test compares it with a separate output buffer).
    func convertInPlace(_ bitmap: Bitmap) {
        precondition(layout != .cmyk(inverted: false) && layout != .cmyk(inverted: true))
        if let kernel {
            kernel.convert(bitmap)
            return
        }
        convertWithLCMS(bitmap)
    }

    /// ``convertInPlace(_:)`` always through lcms2 (for comparisons with the kernel).
    func convertWithLCMS(_ bitmap: Bitmap) {
        let base = bitmap.storage.baseAddress
        cmsDoTransformLineStride(
            handle, base, base, UInt32(bitmap.width), UInt32(bitmap.height),
            UInt32(bitmap.bytesPerRow), UInt32(bitmap.bytesPerRow), 0, 0)
    }
}

/// What the transform cache holds for one description and layout.
enum ColorConversion: Sendable {
    /// The description is sRGB to within one level: leave the pixels alone.
    case identity
    /// Convert with this transform.
    case transform(ColorTransform)
    /// lcms2 could not use the description: the image is treated as sRGB, for this reason.
    case unusable(String)
}

/// Built transforms, keyed by the description (profile bytes compared in full) and layout. Building one costs
/// about a millisecond (a LUT profile more); a hit costs a hash of the profile bytes. Bounded: the least
/// recently used entry goes past ``capacity``.
final class ColorTransformCache: Sendable {
    struct Key: Hashable, Sendable {
        var color: EmbeddedColor
        var layout: ColorLayout
    }

    private struct Entry {
        var conversion: ColorConversion
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var clock: UInt64 = 0
    }

    /// The process-wide cache the decoder uses.
    static let shared = ColorTransformCache(capacity: 32)

    let capacity: Int
    private let state = Locked(State())
    /// Transforms built so far (for tests that check the cache is used).
    private let builds = Locked(0)

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// How many transforms this cache has built.
    var buildCount: Int { builds.withLock { $0 } }

    /// The conversion for `color` in `layout`, built on first use.
    func conversion(for color: EmbeddedColor, layout: ColorLayout) -> ColorConversion {
        let key = Key(color: color, layout: layout)
        if let hit = state.withLock({ state -> ColorConversion? in
            state.clock += 1
            guard var entry = state.entries[key] else { return nil }
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.conversion
        }) {
            return hit
        }
        // Built outside the lock: two threads may build the same transform once each; one copy is kept.
        let built = ColorTransformBuilder.build(color, layout: layout)
        builds.withLock { $0 += 1 }
        return state.withLock { state in
            state.clock += 1
            if let existing = state.entries[key] { return existing.conversion }
            if state.entries.count >= capacity,
                let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
            {
                state.entries[oldest] = nil
            }
            state.entries[key] = Entry(conversion: built, lastUse: state.clock)
            return built
        }
    }
}
