import CDispatch  // `stat`'s fields are attributed to this module (MemberImportVisibility)
import Foundation
import Testing

@testable import DarkroomServer

@Suite("ResolvedPathCache")
struct ResolvedPathCacheTests {
    @Test("a directory swapped for a symlink out of the root is not followed, even while the entry is fresh")
    func swappedDirectory() throws {
        // Given root/dir/a.jpg resolved once through a cache that trusts entries for an hour, and outside/a.jpg
        let base = ServerHarness.temporaryDirectory("paths")
        let fm = FileManager.default
        try fm.createDirectory(atPath: base + "/root/dir", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: base + "/outside", withIntermediateDirectories: true)
        ServerHarness.write(base + "/root/dir/a.jpg", Array("inside".utf8))
        ServerHarness.write(base + "/outside/a.jpg", Array("outside".utf8))
        let root = try RootDirectory(base + "/root")
        let cache = ResolvedPathCache(ttl: 3600)
        let first = try cache.resolve("dir/a.jpg", in: root)
        #expect(first.path == root.path + "/dir/a.jpg" && first.info.st_size == 6)
        // When root/dir is replaced by a symlink to outside
        try fm.moveItem(atPath: base + "/root/dir", toPath: base + "/root/dir-old")
        try fm.createSymbolicLink(atPath: base + "/root/dir", withDestinationPath: base + "/outside")
        // Then the remembered path is re-checked and the request refused as leaving the root
        #expect(code { _ = try cache.resolve("dir/a.jpg", in: root) } == .pathOutsideRoot)
        // And a file swapped for a symlink inside the root resolves to the link's canonical target instead
        try fm.removeItem(atPath: base + "/root/dir")
        try fm.moveItem(atPath: base + "/root/dir-old", toPath: base + "/root/dir")
        ServerHarness.write(base + "/root/b.jpg", Array("bee".utf8))
        #expect(try cache.resolve("dir/a.jpg", in: root).path == root.path + "/dir/a.jpg")
        try fm.removeItem(atPath: base + "/root/dir/a.jpg")
        try fm.createSymbolicLink(atPath: base + "/root/dir/a.jpg", withDestinationPath: base + "/root/b.jpg")
        let relinked = try cache.resolve("dir/a.jpg", in: root)
        #expect(relinked.path == root.path + "/b.jpg" && relinked.info.st_size == 3)
        // And a vanished file is not found
        try fm.removeItem(atPath: base + "/root/b.jpg")
        #expect(code { _ = try cache.resolve("dir/a.jpg", in: root) } == .notFound)
    }

    @Test("plainFile accepts only symlink-free paths to regular files below the root")
    func plainFile() throws {
        // Given root/d/f and root/l -> root/d
        let base = ServerHarness.temporaryDirectory("plain")
        try FileManager.default.createDirectory(atPath: base + "/d", withIntermediateDirectories: true)
        ServerHarness.write(base + "/d/f", [1])
        try FileManager.default.createSymbolicLink(atPath: base + "/l", withDestinationPath: base + "/d")
        let root = try RootDirectory(base)
        // Then
        #expect(ResolvedPathCache.plainFile(root.path + "/d/f", below: root) != nil)
        #expect(ResolvedPathCache.plainFile(root.path + "/l/f", below: root) == nil)
        #expect(ResolvedPathCache.plainFile(root.path + "/d", below: root) == nil)
        #expect(ResolvedPathCache.plainFile(root.path + "/d/missing", below: root) == nil)
        #expect(ResolvedPathCache.plainFile(root.path, below: root) == nil)
    }
}
