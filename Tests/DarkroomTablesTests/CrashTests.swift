import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomTables

/// Runs `darkroom` with `arguments`; returns its exit status and standard output.
@discardableResult
func runDarkroom(_ binary: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// Kills `darkroom table build` (a child process, 2 writer threads, constant eviction) with SIGKILL mid-build,
/// after a random number of commits, round after round on the same table, and checks after every kill that the
/// table serves no torn entry and that every entry it serves equals a fresh decode of its input byte for byte.
///
/// The kills run while every core is kept busy by spinning child processes (`$DARKROOM_TABLE_CRASH_LOAD`, default
/// one per core; 0 for an idle machine): a loaded machine stretches every window between two writes, which is
/// where a kill finds what an idle run misses.
///
/// Rounds: `$DARKROOM_TABLE_CRASH_ROUNDS` (default 20 for `make test`; 200 were run and recorded in
/// docs/history/performance-log-2026-11.md, "Image tables"). The binary: `$DARKROOM_BIN`, else `darkroom` beside the test binary or under
/// `.build/{release,debug}`; the test fails if it is missing.
@Suite("Image table crash safety")
struct CrashTests {
    static var rounds: Int {
        ProcessInfo.processInfo.environment["DARKROOM_TABLE_CRASH_ROUNDS"].flatMap(Int.init) ?? 20
    }
    static let size = 256
    static var loadProcesses: Int {
        ProcessInfo.processInfo.environment["DARKROOM_TABLE_CRASH_LOAD"].flatMap(Int.init)
            ?? ProcessInfo.processInfo.activeProcessorCount
    }

    /// Starts `count` processes that spin on a core each until ``stopLoad(_:)``.
    static func startLoad(_ count: Int) throws -> [Process] {
        try (0..<count).map { _ in
            let spinner = Process()
            spinner.executableURL = URL(fileURLWithPath: "/bin/sh")
            spinner.arguments = ["-c", "while :; do :; done"]
            try spinner.run()
            return spinner
        }
    }

    static func stopLoad(_ spinners: [Process]) {
        for spinner in spinners { _ = KilledProcess.kill(spinner) }
    }

    /// 90 inputs (symlinks with distinct names, so distinct entity ids) over the sample JPEGs, PNGs, WebPs and GIF,
    /// and two images smaller than the entry (64×48, 400×40) that the build must enlarge to the table's size.
    static func makeInputs(in dir: TemporaryDirectory) throws -> [(entity: String, target: String)] {
        try FileManager.default.createDirectory(atPath: dir.file("in"), withIntermediateDirectories: true)
        var small: [String] = []
        for (width, height) in [(64, 48), (400, 40)] {
            let file = dir.file("small-\(width)x\(height).png")
            let bitmap = try TestImages.pattern(
                width: width, height: height, format: .bgra8Premultiplied, seed: UInt32(width), version: 1)
            try TemporaryDirectory.write(ImageEncoder.encode(bitmap, as: .png), to: file)
            small.append(file)
        }
        let photos =
            ["jpeg", "jpeg-12mp", "orientation", "png", "webp", "gif"].flatMap(SamplePhotos.files)
            .filter { !$0.hasSuffix(".md") } + small
        try #require(photos.count >= 20, "sample photos missing under \(SamplePhotos.root)")
        return try (0..<90).map { i in
            let target = photos[i % photos.count]
            let entity = dir.file("in/\(i)-" + (target as NSString).lastPathComponent)
            try FileManager.default.createSymbolicLink(atPath: entity, withDestinationPath: target)
            return (entity, target)
        }
    }

    @Test("kill -9 mid-build, many rounds: zero torn entries served; every entry equals a fresh decode")
    func killedBuilds() throws {
        let binary = try SamplePhotos.darkroomBinary()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let inputs = try Self.makeInputs(in: dir)
        var references: [String: Bitmap] = [:]
        var sources: [String: String] = [:]
        for target in Set(inputs.map(\.target)) {
            references[target] = try TestImages.freshDecode(
                target, width: Self.size, height: Self.size,
                format: .bgra8Premultiplied, mode: .fill, allowsUpscaling: true)
            sources[target] =
                try FileBytes.read(target).withUnsafeBytes { ImageTable.sourceID(hashing: $0) } + "-fill-enlarged"
        }
        let targetOf = Dictionary(uniqueKeysWithValues: inputs.map { ($0.entity, $0.target) })
        let table = dir.file("crash.table")
        func buildArguments(_ table: String, _ order: [String]) -> [String] {
            [
                "table", "build", "--table", table, "--size", "\(Self.size)x\(Self.size)", "--max-count", "16",
                "--jobs", "2", "--index-save-interval", "4", "--progress",
            ] + order
        }

        let spinners = try Self.startLoad(Self.loadProcesses)
        defer { Self.stopLoad(spinners) }
        var rng = SplitMix64(state: 4)
        var killed = 0
        var served = 0
        var tornSlots = 0
        var tornServed = 0
        var missing = 0
        var cliChecks = 0
        let started = Date()
        for round in 0..<Self.rounds {
            // Given a build of all 90 inputs in a new order into a 16-entry table (so nearly every input is
            // written again, evicting others and reusing their slots), 2 writer threads, index saved every 4 commits
            let order = inputs.map(\.entity).shuffled(using: &rng)
            let progress = Pipe()
            let writer = try KilledProcess.start(binary, buildArguments(table, order), output: progress)
            // When it is killed with SIGKILL at a random moment. Three rounds in four: after a random number of
            // commits (0...60 of the at least 74 each build makes, so the kill lands mid-build whatever the
            // machine's load) plus 0-20 ms, which lands inside a decode, a trailer write or an index save. The
            // fourth: 0-400 ms after the start, whatever has happened by then, which lands in the process's start,
            // the open (reconciling the previous round's wreck, clearing torn slots, evicting) or the first writes
            let byClock = rng.next() % 4 == 0
            let commits = byClock ? 0 : Int(rng.next() % 61)
            var seen = 0
            while seen < commits {
                let data = progress.fileHandleForReading.availableData
                if data.isEmpty { break }  // the build ended
                seen += data.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            }
            usleep(UInt32(rng.next() % (byClock ? 400_000 : 20_000)))
            let wasKilled = KilledProcess.kill(writer)
            if wasKilled { killed += 1 }
            #expect(
                wasKilled,
                "round \(round): the build ended by itself (status \(writer.terminationStatus)) after \(seen) commits")

            // Then the table (opened as any reader would) serves no torn entry
            let reader = try ImageTable(readingExisting: table)
            let v = try reader.verify()
            #expect(v.tornServed == 0, "round \(round): \(v.tornServed) torn entries served: \(v.problems)")
            tornServed += v.tornServed
            tornSlots += v.torn
            missing += v.missing
            // And every entry it serves is byte-equal to a fresh decode of its input, with that input's source id
            for entity in reader.entities {
                let target = try #require(targetOf[entity], "round \(round): unknown entity \(entity)")
                let bitmap = try #require(try reader.entry(for: entity))
                #expect(
                    bitmap.width == Self.size && bitmap.height == Self.size,
                    "round \(round): \(entity) is \(bitmap.width)×\(bitmap.height), not the table's size")
                #expect(
                    bitmap.pixelsEqual(references[target]!), "round \(round): \(entity) differs from a fresh decode")
                #expect(reader.sourceID(for: entity) == sources[target])
                served += 1
            }
            try reader.close()
            // And the CLI's verify agrees (every 10th round)
            if round % 10 == 9 {
                let cli = try runDarkroom(binary, ["table", "verify", "--table", table, "--json"])
                let json = try #require(try JSONSerialization.jsonObject(with: Data(cli.output.utf8)) as? [String: Any])
                #expect(cli.status == 0 && json["torn_served"] as? Int == 0 && json["valid"] as? Int == v.valid)
                cliChecks += 1
            }
        }
        // Finally a writable open reconciles: torn slots are cleared, nothing torn remains anywhere
        do {
            let final = try ImageTable(
                path: table,
                format: ImageTableFormat(
                    name: "crash.table", width: Self.size, height: Self.size,
                    maximumCount: 16))
            let v = try final.verify()
            #expect(v.torn == 0 && v.tornServed == 0 && v.valid == final.count)
        }
        let seconds = Date().timeIntervalSince(started)
        print(
            String(
                format:
                    "table crash test: %ld rounds under %ld spinning processes, %ld builds killed, %ld served entries checked against fresh decodes, %ld torn served, %ld torn slots seen (not served), %ld index entries missing after kills, %ld CLI verifies, %.1f s",
                Self.rounds, spinners.count, killed, served, tornServed, tornSlots, missing, cliChecks, seconds))
        #expect(killed == Self.rounds)
        #expect(served > 0)
    }

    @Test("CLI: build, list, get (exit 1 when absent), stats and verify")
    func cli() throws {
        let binary = try SamplePhotos.darkroomBinary()
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let inputs = Array(SamplePhotos.files("orientation").prefix(3)) + Array(SamplePhotos.files("png").prefix(1))
        try #require(inputs.count == 4)
        let table = dir.file("cli.table")
        // Given a gray 100×80 fit table built from 4 inputs
        let build = try runDarkroom(
            binary,
            [
                "table", "build", "--table", table, "--size", "100x80", "--pixel-format", "gray8",
                "--fit", "--json",
            ] + inputs)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(build.output.utf8)) as? [String: Any])
        #expect(build.status == 0 && summary["written"] as? Int == 4 && summary["skipped"] as? Int == 0)
        // When it is built again, Then every input is current and skipped
        let again = try runDarkroom(
            binary,
            [
                "table", "build", "--table", table, "--size", "100x80", "--pixel-format", "gray8",
                "--fit", "--json",
            ] + inputs)
        #expect(
            (try JSONSerialization.jsonObject(with: Data(again.output.utf8)) as? [String: Any])?["skipped"] as? Int == 4
        )
        // Then list prints one entity per line
        let list = try runDarkroom(binary, ["table", "list", "--table", table])
        #expect(list.status == 0 && list.output.split(separator: "\n").map(String.init) == inputs.sorted())
        // And get writes a PNG that decodes to the entry's pixels; an absent entity exits 1
        let png = dir.file("out.png")
        #expect(try runDarkroom(binary, ["table", "get", "--table", table, inputs[0], "--out", png]).status == 0)
        let decoded = try ImageDecoder().decode(
            FileBytes.read(png), options: DecodeOptions(pixelFormat: .exactly(.gray8))
        ).bitmap
        let entry = try #require(try ImageTable(readingExisting: table).entry(for: inputs[0]))
        #expect(decoded.pixelsEqual(entry))
        #expect(try runDarkroom(binary, ["table", "get", "--table", table, "absent.jpg", "--out", png]).status == 1)
        // And stats and verify report JSON with the documented fields
        let stats = try #require(
            try JSONSerialization.jsonObject(
                with: Data(runDarkroom(binary, ["table", "stats", "--table", table, "--json"]).output.utf8))
                as? [String: Any])
        #expect(
            stats["entries"] as? Int == 4 && stats["pixel_format"] as? String == "gray8"
                && stats["width"] as? Int == 100)
        let verify = try #require(
            try JSONSerialization.jsonObject(
                with: Data(runDarkroom(binary, ["table", "verify", "--table", table, "--json"]).output.utf8))
                as? [String: Any])
        #expect(
            verify["valid"] as? Int == 4 && verify["torn"] as? Int == 0 && verify["torn_served"] as? Int == 0
                && verify["missing"] as? Int == 0)
    }
}
