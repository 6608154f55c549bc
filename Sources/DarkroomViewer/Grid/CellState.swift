import Darkroom
import DarkroomImage

/// A grid cell as the drawing thread sees it: which image it is bound to, the binding's generation, its textures
/// and its animation. Only the drawing thread touches it.
final class CellState {
    let cell: GridCell
    var index = -1
    var item: LibraryItem?
    /// The generation the pipeline gave this binding; deliveries with another are stale.
    var generation: UInt64 = 0
    var task: ImageTask?

    /// The thumbnail (its texture made once per cell at the grid's side).
    var image = ImageTexture()
    /// Whether ``image`` holds a preview (the file's embedded thumbnail) that the thumbnail will replace.
    var showsPreview = false
    var failed = false

    /// The ThumbHash placeholder (a 32 px texture).
    var placeholder = ImageTexture()

    /// When this binding was first drawn as a placeholder (frame-record seconds).
    var placeholderSince: Double?
    var imageDrawn = false

    /// The animation's request and player, for animated images.
    var animationTask: ImageTask?
    var player: AnimationPlayer?
    var frameShown = -1

    init(cell: GridCell) { self.cell = cell }

    /// Forgets the binding (textures are kept for the next one).
    func reset() {
        index = -1
        item = nil
        task = nil
        image.forget()
        showsPreview = false
        failed = false
        placeholder.forget()
        placeholderSince = nil
        imageDrawn = false
        animationTask?.cancel()
        animationTask = nil
        player?.stop()
        player = nil
        frameShown = -1
    }

    func destroyTextures(_ window: SDLWindow) {
        image.destroy(window)
        placeholder.destroy(window)
    }
}
