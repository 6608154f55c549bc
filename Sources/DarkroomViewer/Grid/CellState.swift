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
    var isVisible = false

    /// The thumbnail's texture (created once per cell at the grid's side) and what it holds.
    var texture: OpaquePointer?
    var textureSide = 0
    var imageWidth = 0
    var imageHeight = 0
    var hasImage = false
    var failed = false

    /// The ThumbHash placeholder's texture (32 px) and whether it holds this binding's placeholder.
    var placeholderTexture: OpaquePointer?
    var placeholderWidth = 0
    var placeholderHeight = 0
    var hasPlaceholder = false

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
        isVisible = false
        hasImage = false
        failed = false
        hasPlaceholder = false
        placeholderSince = nil
        imageDrawn = false
        animationTask?.cancel()
        animationTask = nil
        player?.stop()
        player = nil
        frameShown = -1
    }

    func destroyTextures(_ window: SDLWindow) {
        if let texture { window.destroy(texture) }
        if let placeholderTexture { window.destroy(placeholderTexture) }
        texture = nil
        placeholderTexture = nil
        textureSide = 0
    }
}
