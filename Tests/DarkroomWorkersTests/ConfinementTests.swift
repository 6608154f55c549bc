import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomWorkers

/// The confinement a decode worker applies, proved from inside a confined child: every forbidden attempt is refused
/// or ends the child, nothing is read or written, and a confined process still runs.
@Suite struct ConfinementTests {
    static func check(
        _ attempt: ConfinementCheck.Attempt, _ confinement: Confinement = .default, path: String = "",
        descriptor: Int32 = -1
    ) throws -> ConfinementCheck.Outcome {
        let outcome = try ConfinementCheck.run(attempt, confinement: confinement, path: path, descriptor: descriptor)
        // Every child confines itself before its attempt
        #expect(outcome.confined, "\(attempt): \(outcome)")
        return outcome
    }

    @Test func theFontsAndNothingElseOfTheirFoldersCanBeRead() throws {
        // Given a font file and fontconfig's configuration
        let font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
        try #require(FileManager.default.fileExists(atPath: font), "fonts-dejavu-core is installed")
        // When a confined child opens each, and creates a file beside the font
        let fontRead = try Self.check(.open, path: font)
        let configRead = try Self.check(.open, path: "/etc/fonts/fonts.conf")
        let created = try Self.check(.create, path: "/usr/share/fonts/darkroom-test")
        // Then with the namespaces both are read and nothing is created; without them neither is opened
        if fontRead.namespaces {
            #expect(fontRead.result == 1 && configRead.result == 1, "\(fontRead) \(configRead)")
        } else {
            #expect(fontRead.result == -1 && fontRead.error == EPERM, "\(fontRead)")
        }
        #expect(created.attempted && created.result == -1, "\(created)")
        #expect(!FileManager.default.fileExists(atPath: "/usr/share/fonts/darkroom-test"))
    }

    @Test func aConfinedProcessRuns() throws {
        // Given the filter, When a confined child does nothing, Then it exits normally
        #expect(try SeccompFilter.shared.get().instructionCount > 20)
        let outcome = try Self.check(.nothing)
        #expect(outcome.attempted && outcome.signal == 0 && outcome.exitStatus == 0, "\(outcome)")
        print("namespaces applied: \(outcome.namespaces)")
    }

    @Test func filesCannotBeOpenedOrCreated() throws {
        let directory = try TemporaryDirectory("confinement")
        defer { directory.remove() }
        // Given a readable file, When a confined child opens it, Then it is refused and nothing is read
        let secret = directory.file("secret")
        try Data("secret".utf8).write(to: URL(fileURLWithPath: secret))
        // (refused by the filter without the namespaces; with them, not there: the root holds only the fonts)
        for path in [secret, "/etc/passwd"] {
            let opened = try Self.check(.open, path: path)
            #expect(
                opened.attempted && opened.result == -1 && opened.error == (opened.namespaces ? ENOENT : EPERM),
                "\(path): \(opened)")
        }
        // And a new file cannot be created, so none appears
        let created = directory.file("created")
        let creating = try Self.check(.create, path: created)
        #expect(creating.attempted && creating.result == -1 && creating.error == EPERM, "\(creating)")
        #expect(!FileManager.default.fileExists(atPath: created))
    }

    @Test func aFileHandedOverCannotBeWritten() throws {
        let directory = try TemporaryDirectory("confinement-write")
        defer { directory.remove() }
        // Given a file opened for writing before the confinement (as a worker's inherited descriptors might be)
        let path = directory.file("out")
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        // When the confined child writes to it, Then the file size limit of 0 refuses it and the file stays empty
        let outcome = try Self.check(.write, descriptor: fd)
        #expect(outcome.attempted && outcome.result == -1 && outcome.error == EFBIG, "\(outcome)")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == 0)
    }

    @Test func noSocketsNoProgramsNoTracing() throws {
        // Given a confined child, When it opens a socket, Then it is refused
        let socket = try Self.check(.socket)
        #expect(socket.attempted && socket.result == -1 && socket.error == EPERM, "\(socket)")
        // And running a program or asking to be traced ends it (SIGSYS) before the call returns
        for attempt in [ConfinementCheck.Attempt.exec, .ptrace] {
            let outcome = try Self.check(attempt, path: "/bin/true")
            #expect(!outcome.attempted && outcome.signal == SIGSYS, "\(attempt): \(outcome)")
        }
    }

    @Test func allocationsPastTheLimitFail() throws {
        // Given a limit of 1 GiB of address space beyond what the forked child already maps
        let mapped = try Self.mappedBytes()
        let confinement = Confinement(addressSpaceBytes: mapped + (1 << 30))
        // When the child maps twice the limit, Then the mapping fails and the child is unharmed
        let outcome = try Self.check(.allocate, confinement)
        #expect(outcome.attempted && outcome.result == -1 && outcome.error == ENOMEM, "\(outcome)")
        #expect(outcome.signal == 0 && outcome.exitStatus == 0)
    }

    @Test func withoutNamespacesTheFilterStillHolds() throws {
        // Given confinement without namespaces (as where the kernel does not allow them)
        let plain = Confinement(namespaces: false)
        // When the child opens a file, Then the filter alone refuses it
        let outcome = try Self.check(.open, plain, path: "/etc/passwd")
        #expect(!outcome.namespaces && outcome.attempted && outcome.result == -1 && outcome.error == EPERM)
    }

    /// The address space this process maps now (the child starts with the same).
    static func mappedBytes() throws -> Int {
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        return maps.split(separator: "\n").reduce(0) { total, line in
            let range = line.prefix { $0 != " " }.split(separator: "-").compactMap { Int($0, radix: 16) }
            return range.count == 2 ? total + range[1] - range[0] : total
        }
    }
}
