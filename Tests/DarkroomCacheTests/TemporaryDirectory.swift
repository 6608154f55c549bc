import Foundation
@testable import DarkroomCache

/// Fresh directories under the system temporary directory for tests.
enum TemporaryDirectory {
    static func make() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("darkroom-cache-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func remove(_ path: String) { try? FileManager.default.removeItem(atPath: path) }
}

