/// Motion Photos and Live Photos in every layout phones write, and the 2 s clip they hold (320 × 240 H.264 at 30 fps,
/// a pan across a real photo; `portrait.mp4` the same stored turned), made once per test process by
/// `scripts/make-motion-photos.py`, which lists the files.
package enum MotionPhotoSamples {
    private static let directory = PythonReference.folder(
        "motion-photos", madeBy: "scripts/make-motion-photos.py",
        runs: [[SamplePhotos.path("jpeg/kite-2560x1600.jpg")]])

    /// The path of the sample `name` (`clip.mp4`, `google.jpg`, `live/IMG_0001.HEIC`, …). Throws when the samples
    /// could not be made.
    package static func path(_ name: String) throws -> String { try directory.get() + "/" + name }
}
