import Foundation
import Testing

@testable import DarkroomServer

/// A scratch tree for path tests:
///
///     base/root/{Z.GIF, a.jpg, notes.txt, .hidden.jpg, .cache/x.jpg, sub/b.png, sub/deep/c.WEBP}
///     base/root/link-in.jpg -> base/root/sub/b.png        base/root/linkdir-in -> base/root/sub
///     base/root/link-out.jpg -> base/outside/secret.jpg   base/root/linkdir-out -> base/outside
///     base/root/link-root2.jpg -> base/root2/secret.jpg   base/rootlink -> base/root
///     base/root/link-hidden.jpg -> base/root/.hidden.jpg  base/root/link-cache -> base/root/.cache
///     base/outside/secret.jpg   base/root2/secret.jpg
private final class Tree {
    let base: String
    var root: String { base + "/root" }

    init() throws {
        let template = NSTemporaryDirectory() + "/darkroom-root-XXXXXX"
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw CocoaError(.fileWriteUnknown) }
        base = String(cString: made)
        let fm = FileManager.default
        for dir in ["root/sub/deep", "root/.cache", "outside", "root2"] {
            try fm.createDirectory(atPath: base + "/" + dir, withIntermediateDirectories: true)
        }
        for file in [
            "root/Z.GIF", "root/a.jpg", "root/notes.txt", "root/.hidden.jpg", "root/.cache/x.jpg",
            "root/sub/b.png", "root/sub/deep/c.WEBP", "outside/secret.jpg", "root2/secret.jpg",
        ] {
            #expect(fm.createFile(atPath: base + "/" + file, contents: Data("x".utf8)))
        }
        let links = [
            ("root/link-in.jpg", "root/sub/b.png"), ("root/linkdir-in", "root/sub"),
            ("root/link-out.jpg", "outside/secret.jpg"), ("root/linkdir-out", "outside"),
            ("root/link-root2.jpg", "root2/secret.jpg"), ("rootlink", "root"),
            ("root/link-hidden.jpg", "root/.hidden.jpg"), ("root/link-cache", "root/.cache"),
        ]
        for (link, target) in links {
            try fm.createSymbolicLink(atPath: base + "/" + link, withDestinationPath: base + "/" + target)
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: base) }
}

@Suite("RootDirectory")
struct RootDirectoryTests {
    @Test(
        "lexically bad paths are outside the root, whatever exists on disk",
        arguments: [
            "", "..", "../../etc/passwd", "a/../../x", "sub/../a.jpg", "sub/..", "/etc/passwd",
            "/", "a.jpg\0.png", "sub\\b.png", "..\\a.jpg", "./../root/a.jpg",
        ])
    func lexicalEscapes(path: String) throws {
        // Given a root with files in it
        let tree = try Tree()
        let root = try RootDirectory(tree.root)
        // When / Then the path is refused before touching the disk
        #expect(code { _ = try root.resolve(path) } == .pathOutsideRoot)
    }

    @Test(
        "symlinks leading out of the root are refused, files and directories alike",
        arguments: ["link-out.jpg", "linkdir-out/secret.jpg", "link-root2.jpg"])
    func symlinkEscapes(path: String) throws {
        // Given links inside the root to base/outside and to base/root2 (a sibling sharing the root's prefix)
        let tree = try Tree()
        let root = try RootDirectory(tree.root)
        // When / Then
        #expect(code { _ = try root.resolve(path) } == .pathOutsideRoot)
    }

    @Test("files inside the root resolve to canonical paths, through symlinks that stay inside")
    func insideResolves() throws {
        // Given a root reached through a symlinked path
        let tree = try Tree()
        let root = try RootDirectory(tree.base + "/rootlink")
        let real = try #require(
            realpath(tree.root, nil).map { p in
                defer { free(p) }
                return String(cString: p)
            })
        // Then the root's path is canonical
        #expect(root.path == real)
        // When resolving plain and symlinked paths, Then each lands on the canonical target
        #expect(try root.resolve("a.jpg") == real + "/a.jpg")
        #expect(try root.resolve("sub//deep/./c.WEBP") == real + "/sub/deep/c.WEBP")
        #expect(try root.resolve("link-in.jpg") == real + "/sub/b.png")
        #expect(try root.resolve("linkdir-in/b.png") == real + "/sub/b.png")
    }

    @Test(
        "missing files and directories are not found",
        arguments: [
            "missing.jpg", "sub/nope.png", "sub", ".",
            "a.jpg/x", "sub/deep/",
        ])
    func notFound(path: String) throws {
        // Given a root
        let tree = try Tree()
        let root = try RootDirectory(tree.root)
        // When / Then
        #expect(code { _ = try root.resolve(path) } == .notFound)
    }

    @Test(
        "hidden files and folders are not served, named directly or through a symlink",
        arguments: [".hidden.jpg", ".cache/x.jpg", "sub/../.hidden.jpg", "link-hidden.jpg", "link-cache/x.jpg"])
    func hiddenNotFound(path: String) throws {
        // Given a root holding .hidden.jpg and .cache/x.jpg (regular files) and links to them
        let tree = try Tree()
        let root = try RootDirectory(tree.root)
        // When / Then each is answered as missing (".." is refused first, as outside the root)
        #expect(code { _ = try root.resolve(path) } == (path.contains("..") ? .pathOutsideRoot : .notFound))
    }

    @Test("hidden components are names starting with a dot, not the . component")
    func hiddenComponents() {
        #expect(RootDirectory.hasHiddenComponent(".env".utf8))
        #expect(RootDirectory.hasHiddenComponent("a/.git/config".utf8))
        #expect(RootDirectory.hasHiddenComponent("a/b/.x".utf8))
        #expect(!RootDirectory.hasHiddenComponent("./a.jpg".utf8))
        #expect(!RootDirectory.hasHiddenComponent("sub//deep/./c.WEBP".utf8))
        #expect(!RootDirectory.hasHiddenComponent("a.b/c.jpg".utf8))
        #expect(!RootDirectory.hasHiddenComponent("".utf8))
    }

    @Test("a missing or non-directory root is refused")
    func badRoot() throws {
        // Given a tree, When the root is a missing path or a file, Then init throws notFound
        let tree = try Tree()
        #expect(code { _ = try RootDirectory(tree.base + "/nope") } == .notFound)
        #expect(code { _ = try RootDirectory(tree.root + "/a.jpg") } == .notFound)
    }

    @Test(
        "scan: sorted images only, per folder, no hidden entries, no symlinked directories, links leaving the root skipped"
    )
    func listing() throws {
        // Given the scratch tree
        let tree = try Tree()
        let root = try RootDirectory(tree.root)
        // When scanning
        let folders = root.scan(maxImages: 100)
        // Then each folder lists its own images and its subfolders holding images, with totals
        #expect(folders[""]?.images == ["Z.GIF", "a.jpg", "link-in.jpg"])
        #expect(folders[""]?.folders == ["sub"] && folders[""]?.totalImages == 5)
        #expect(folders["sub"]?.images == ["b.png"] && folders["sub"]?.folders == ["deep"])
        #expect(folders["sub/deep"]?.images == ["c.WEBP"] && folders["sub/deep"]?.totalImages == 1)
        #expect(Set(folders.keys) == ["", "sub", "sub/deep"])
        // And the image budget stops the scan early
        #expect(root.scan(maxImages: 2)[""]?.totalImages == 2)
        #expect(root.scan(maxImages: 0)[""]?.totalImages == 0)
    }
}
