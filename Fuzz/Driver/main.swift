import DarkroomFuzzing
import Foundation

// The libFuzzer driver. The target comes from DARKROOM_FUZZ_TARGET (scripts/fuzz.sh sets it); with
// DARKROOM_FUZZ_SEEDS=DIR it writes that target's seed corpus into DIR (photos from DARKROOM_PHOTOS) and exits
// instead of fuzzing. Otherwise libFuzzer runs with the command line's flags (LLVMFuzzerRunDriver: SwiftPM gives
// an executable its own `main`, so libFuzzer's is not used).

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzer(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The target chosen before fuzzing starts; read-only afterwards (libFuzzer calls back from one thread).
nonisolated(unsafe) var selected: FuzzTarget?

let environment = ProcessInfo.processInfo.environment
let name = environment["DARKROOM_FUZZ_TARGET"] ?? ""
guard let target = FuzzTarget.named(name) else {
    let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
    FileHandle.standardError.write(Data("darkroom-fuzz: set DARKROOM_FUZZ_TARGET to one of: \(names)\n".utf8))
    exit(2)
}
if let directory = environment["DARKROOM_FUZZ_SEEDS"] {
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let seeds = FuzzSeeds.seeds(for: name, photos: environment["DARKROOM_PHOTOS"])
    for (file, bytes) in seeds {
        _ = FileManager.default.createFile(atPath: directory + "/" + file, contents: Data(bytes))
    }
    print("darkroom-fuzz: \(seeds.count) seeds for \(name) in \(directory)")
    exit(seeds.isEmpty ? 1 : 0)
}
selected = target
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = CommandLine.unsafeArgv
exit(
    runFuzzer(&argc, &argv) { data, size in
        selected?.run(UnsafeRawBufferPointer(start: data, count: size))
        return 0
    })
