import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomCache

/// Kills a writer process (`darkroom cache torture`) with SIGKILL at random moments, round after round, and checks
/// that every key then reads as absent or as exactly one whole value it wrote. Rounds: `$DARKROOM_CRASH_ROUNDS`
/// (default 100). The writer binary: `$DARKROOM_BIN`, else `darkroom` beside the test bundle in the build products
/// directory (`swift build --build-tests` builds it); the test fails if it is missing.
@Suite("DiskCache crash safety")
struct DiskCacheCrashTests {
    static var rounds: Int { ProcessInfo.processInfo.environment["DARKROOM_CRASH_ROUNDS"].flatMap(Int.init) ?? 100 }

    @Test("kill -9 at random moments: every key reads absent or as one whole value written")
    func killedWriters() throws {
        let binary = try SamplePhotos.darkroomBinary()
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        var rng = SplitMix64(state: 2024)
        var torn = 0
        var present = 0
        var absent = 0
        var killed = 0
        let started = Date()
        for round in 0..<Self.rounds {
            // Given a writer running for a random time (some rounds die while it opens the cache)
            let writer = try KilledProcess.start(
                binary,
                [
                    "cache", "torture", "--dir", dir, "--seed", String(round + 1),
                    "--parent", String(ProcessInfo.processInfo.processIdentifier),
                ])
            usleep(UInt32(5_000 + rng.next() % 250_000))
            // When it is killed with SIGKILL
            if KilledProcess.kill(writer) { killed += 1 }
            #expect(
                writer.terminationReason == .uncaughtSignal,
                "round \(round): writer exited by itself (\(writer.terminationStatus))")
            // Then every key reads as absent or as one whole value
            let cache = try DiskCache(
                directory: dir, configuration: DiskCacheConfiguration(sizeLimit: .max, orphanGracePeriod: .zero))
            for k in 0..<40 {
                guard let value = cache.data(forKey: "k\(k)") else {
                    absent += 1
                    continue
                }
                present += 1
                if !CheckedValue.isWhole(value, key: "k\(k)") {
                    torn += 1
                    Issue.record("round \(round): k\(k) is torn or foreign (\(value.count) bytes)")
                }
            }
            // And orphans left by the kill are reconciled (no temporary files survive a reap)
            cache.reapOrphans()
            #expect(!POSIX.list(dir + "/data").contains { $0.name.hasPrefix("tmp-") })
        }
        let seconds = Date().timeIntervalSince(started)
        print(
            "crash test: \(Self.rounds) rounds, \(killed) writers killed, \(present) values read whole, "
                + "\(absent) absent, \(torn) torn, \(String(format: "%.1f", seconds)) s")
        #expect(torn == 0)
        #expect(killed == Self.rounds)
        #expect(present > 0)
    }

    @Test("a writer whose parent dies (a crashed test process) ends within a second instead of running on")
    func orphanedWriterEnds() throws {
        let binary = try SamplePhotos.darkroomBinary()
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        // Given a writer started by a shell that lives 0.6 s more, told the shell's pid
        let pidFile = dir + "/writer.pid"
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = [
            "-c", "\"$0\" cache torture --dir \"$1\" --parent $$ >/dev/null 2>&1 & echo $! > \"$2\"; sleep 0.6",
            binary, dir, pidFile,
        ]
        try shell.run()
        var text = ""
        for _ in 0..<200 where text.isEmpty {
            usleep(10_000)
            text = (try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? ""
        }
        let pid = try #require(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        defer { kill(pid, SIGKILL) }
        func running() -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            return !stat[close...].hasPrefix(") Z")
        }
        // Then it runs while the shell lives
        usleep(200_000)
        #expect(running(), "writer \(pid) ended while its parent was alive")
        // When the shell ends, Then within 3 s the writer has ended by itself (gone, or a zombie not yet reaped)
        shell.waitUntilExit()
        let deadline = Date().addingTimeInterval(3)
        while running() && Date() < deadline { usleep(20_000) }
        #expect(!running(), "writer \(pid) still running 3 s after its parent ended")
    }
}
