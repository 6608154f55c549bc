import CSDL2
import DarkroomImage

/// The one window and its renderer: everything the viewer asks of SDL2 (a window, textures, rectangles, a present,
/// a read-back for screenshots, and input translated into ``InputEvent``s).
///
/// Not thread-safe: SDL's video calls belong to the thread that created the window, which is the viewer's
/// drawing thread. Textures are created and updated only there; what other threads produce reaches it as bitmaps.
final class SDLWindow {
    private let window: OpaquePointer
    private let renderer: OpaquePointer
    /// The renderer SDL chose (`software`, `opengl`, …), for the frame record.
    let rendererName: String
    /// The textures' pixel format: the window's when it is 32-bit BGRX (premultiplied BGRA with the alpha byte
    /// ignored), else BGRA.
    private let textureFormat: UInt32

    /// Opens a resizable window of `width` × `height` points. `renderer` names an SDL render driver (`software`,
    /// `opengl`; nil lets SDL choose). Presents are never synchronised to a vertical blank: the viewer paces its
    /// own frames, so a frame's time is the drawing thread's work, not a wait.
    /// - Throws: ``ViewerError`` `sdl` with SDL's message when there is no display or no renderer.
    init(title: String, width: Int, height: Int, renderer driver: String?, hidden: Bool = false) throws(ViewerError) {
        if let driver { SDL_SetHint(SDL_HINT_RENDER_DRIVER, driver) }
        SDL_SetHint(SDL_HINT_RENDER_VSYNC, "0")
        SDL_SetHint(SDL_HINT_VIDEO_X11_NET_WM_BYPASS_COMPOSITOR, "0")
        // The software renderer draws into the window's surface; with framebuffer acceleration SDL would upload that
        // surface through OpenGL each frame (Mesa's software GL under Xvfb: ~4 ms a frame at 1280×800), without it
        // the surface goes to the X server as shared memory (0.8 ms).
        SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0")
        guard SDL_Init(SDL_INIT_VIDEO) == 0 else { throw ViewerError(.sdl, "SDL_Init: \(Self.lastError)") }
        var flags = SDL_WINDOW_RESIZABLE.rawValue | SDL_WINDOW_ALLOW_HIGHDPI.rawValue
        if hidden { flags |= SDL_WINDOW_HIDDEN.rawValue }
        let position = darkroom_sdl_windowpos_undefined()
        guard
            let window = SDL_CreateWindow(
                title, position, position, Int32(clamping: width), Int32(clamping: height), flags)
        else {
            let message = Self.lastError
            SDL_Quit()
            throw ViewerError(.sdl, "SDL_CreateWindow: \(message)")
        }
        guard let renderer = SDL_CreateRenderer(window, -1, 0) else {
            let message = Self.lastError
            SDL_DestroyWindow(window)
            SDL_Quit()
            throw ViewerError(.sdl, "SDL_CreateRenderer: \(message)")
        }
        self.window = window
        self.renderer = renderer
        // Premultiplied BGRA drawn without blending is, byte for byte, the B, G, R, X layout of a 32-bit X visual:
        // textures in the window's own format make every draw a row copy instead of a per-pixel conversion
        // (SDL's generic blitter: most of the software renderer's time, measured).
        let windowFormat = SDL_GetWindowPixelFormat(window)
        textureFormat =
            windowFormat == darkroom_sdl_pixelformat_bgrx() ? windowFormat : darkroom_sdl_pixelformat_bgra()
        var info = SDL_RendererInfo()
        SDL_GetRendererInfo(renderer, &info)
        rendererName =
            (info.name.map { String(cString: $0) } ?? "unknown") + " "
            + String(cString: SDL_GetPixelFormatName(windowFormat)) + "/"
            + String(cString: SDL_GetPixelFormatName(textureFormat))
    }

    deinit {
        SDL_DestroyRenderer(renderer)
        SDL_DestroyWindow(window)
        SDL_Quit()
    }

    static var lastError: String { String(cString: SDL_GetError()) }

    /// The window's size in points.
    var pointSize: (width: Int, height: Int) {
        var w: Int32 = 0
        var h: Int32 = 0
        SDL_GetWindowSize(window, &w, &h)
        return (Int(w), Int(h))
    }

    /// The drawable's size in pixels (points × the display's scale on high-DPI displays).
    var pixelSize: (width: Int, height: Int) {
        var w: Int32 = 0
        var h: Int32 = 0
        SDL_GetRendererOutputSize(renderer, &w, &h)
        return (Int(w), Int(h))
    }

    /// The refresh rate of the display the window is on, Hz (nil when the display does not say; Xvfb's is 0).
    var displayRefreshRate: Double? {
        var mode = SDL_DisplayMode()
        guard SDL_GetWindowDisplayMode(window, &mode) == 0, mode.refresh_rate > 0 else { return nil }
        return Double(mode.refresh_rate)
    }

    /// Sets the title bar's text.
    func setTitle(_ title: String) { SDL_SetWindowTitle(window, title) }

    /// Resizes the window (as a user dragging its corner would; a `resized` event follows).
    func resize(width: Int, height: Int) { SDL_SetWindowSize(window, Int32(width), Int32(height)) }

    // MARK: Textures

    /// A streaming BGRA texture of `width` × `height` pixels (premultiplied bytes drawn without blending, so a
    /// transparent pixel shows the black background — premultiplied over black is the bytes themselves).
    func makeTexture(width: Int, height: Int) throws(ViewerError) -> OpaquePointer {
        guard
            let texture = SDL_CreateTexture(
                renderer, textureFormat, Int32(SDL_TEXTUREACCESS_STREAMING.rawValue),
                Int32(width), Int32(height))
        else { throw ViewerError(.sdl, "SDL_CreateTexture \(width)×\(height): \(Self.lastError)") }
        SDL_SetTextureBlendMode(texture, SDL_BLENDMODE_NONE)
        return texture
    }

    /// Scales `texture` with a linear filter when drawn larger (placeholders), instead of nearest-neighbour blocks.
    func setLinearScaling(_ texture: OpaquePointer) { SDL_SetTextureScaleMode(texture, SDL_ScaleModeLinear) }

    /// Frees a texture.
    func destroy(_ texture: OpaquePointer) { SDL_DestroyTexture(texture) }

    /// Copies `bitmap`'s rows (BGRA8, premultiplied or opaque) into the top-left of `texture`. Cost: one copy of
    /// the bitmap.
    func upload(_ bitmap: Bitmap, to texture: OpaquePointer) {
        var rect = SDL_Rect(x: 0, y: 0, w: Int32(bitmap.width), h: Int32(bitmap.height))
        _ = SDL_UpdateTexture(texture, &rect, bitmap.row(0), Int32(bitmap.bytesPerRow))
    }

    // MARK: Drawing

    /// Fills the whole drawable with a colour.
    func clear(_ color: Color) {
        SDL_SetRenderDrawColor(renderer, color.r, color.g, color.b, 255)
        SDL_RenderClear(renderer)
    }

    /// Fills a rectangle (pixels).
    func fill(_ rect: PixelRect, _ color: Color) {
        var r = rect.sdl
        SDL_SetRenderDrawColor(renderer, color.r, color.g, color.b, 255)
        SDL_RenderFillRect(renderer, &r)
    }

    /// Draws `source` of `texture` (its top-left `width` × `height`) into `destination`, scaling when they differ.
    func draw(_ texture: OpaquePointer, sourceWidth: Int, sourceHeight: Int, into destination: PixelRect) {
        var s = SDL_Rect(x: 0, y: 0, w: Int32(sourceWidth), h: Int32(sourceHeight))
        var d = destination.sdl
        SDL_RenderCopy(renderer, texture, &s, &d)
    }

    /// Shows the frame.
    func present() { SDL_RenderPresent(renderer) }

    /// What the drawable shows now, as an opaque BGRA bitmap (for screenshots; call before ``present()``'s
    /// next clear).
    func readPixels() throws(ViewerError) -> Bitmap {
        let (w, h) = pixelSize
        do {
            let bitmap = try Bitmap(width: w, height: h, format: .bgra8Premultiplied, isOpaque: true)
            guard
                SDL_RenderReadPixels(
                    renderer, nil, darkroom_sdl_pixelformat_bgra(), bitmap.row(0), Int32(bitmap.bytesPerRow)) == 0
            else { throw ViewerError(.sdl, "SDL_RenderReadPixels: \(Self.lastError)") }
            for y in 0..<h {  // X servers leave the alpha byte undefined: the window is opaque
                let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<w { row[4 * x + 3] = 255 }
            }
            return bitmap
        } catch let error as ViewerError {
            throw error
        } catch {
            throw ViewerError(.sdl, "screenshot bitmap \(w)×\(h)", underlying: error)
        }
    }

    // MARK: Input

    /// The events waiting, translated (events the viewer does not use are dropped).
    func pollEvents() -> [InputEvent] {
        var events: [InputEvent] = []
        var event = SDL_Event()
        while SDL_PollEvent(&event) != 0 {
            if let translated = Self.translate(event) { events.append(translated) }
        }
        return events
    }

    private static func translate(_ event: SDL_Event) -> InputEvent? {
        switch SDL_EventType(event.type) {
        case SDL_QUIT: return .quit
        case SDL_WINDOWEVENT:
            let kind = SDL_WindowEventID(UInt32(event.window.event))
            return kind == SDL_WINDOWEVENT_SIZE_CHANGED || kind == SDL_WINDOWEVENT_RESIZED ? .resized : nil
        case SDL_MOUSEWHEEL:
            let flipped = event.wheel.direction == SDL_MOUSEWHEEL_FLIPPED.rawValue
            let dy = Double(event.wheel.preciseY) * (flipped ? -1 : 1)
            return .wheel(dy: dy)
        case SDL_KEYDOWN:
            return Key(sdl: event.key.keysym.sym).map { .key($0) }
        case SDL_MOUSEBUTTONDOWN:
            guard event.button.button == UInt8(SDL_BUTTON_LEFT) else { return nil }
            return .mouseDown(x: Double(event.button.x), y: Double(event.button.y), clicks: Int(event.button.clicks))
        case SDL_MOUSEBUTTONUP:
            guard event.button.button == UInt8(SDL_BUTTON_LEFT) else { return nil }
            return .mouseUp(x: Double(event.button.x), y: Double(event.button.y))
        case SDL_MOUSEMOTION:
            return .mouseMoved(x: Double(event.motion.x), y: Double(event.motion.y))
        default: return nil
        }
    }
}

/// An opaque colour.
struct Color: Sendable, Hashable {
    var r: UInt8
    var g: UInt8
    var b: UInt8
}

/// A rectangle in drawable pixels.
struct PixelRect: Sendable, Hashable {
    var x: Int
    var y: Int
    var width: Int
    var height: Int

    var sdl: SDL_Rect { SDL_Rect(x: Int32(x), y: Int32(y), w: Int32(width), h: Int32(height)) }

    func contains(x px: Double, y py: Double) -> Bool {
        px >= Double(x) && px < Double(x + width) && py >= Double(y) && py < Double(y + height)
    }
}

extension Key {
    init?(sdl sym: SDL_Keycode) {
        switch Int(sym) {
        case Int(SDLK_UP.rawValue): self = .up
        case Int(SDLK_DOWN.rawValue): self = .down
        case Int(SDLK_LEFT.rawValue): self = .left
        case Int(SDLK_RIGHT.rawValue): self = .right
        case Int(SDLK_PAGEUP.rawValue): self = .pageUp
        case Int(SDLK_PAGEDOWN.rawValue): self = .pageDown
        case Int(SDLK_HOME.rawValue): self = .home
        case Int(SDLK_END.rawValue): self = .end
        case Int(SDLK_RETURN.rawValue), Int(SDLK_KP_ENTER.rawValue): self = .enter
        case Int(SDLK_ESCAPE.rawValue): self = .escape
        case Int(SDLK_q.rawValue): self = .quit
        default: return nil
        }
    }
}
