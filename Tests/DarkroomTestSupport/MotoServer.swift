import Foundation

/// An S3 API server on loopback for tests: moto (PyPI `moto[server]`, installed by `scripts/install-pydeps.sh`)
/// started as a child process on a free port, with credentials `testing`/`testing` and region `us-east-1`.
/// ``stop()`` terminates it; a test that cannot start it fails (no silent skip).
package final class MotoServer: Sendable {
    /// The port it listens on.
    package let port: Int
    /// The child's pid. Spawned and reaped with posix_spawn/waitpid: Foundation's `Process.waitUntilExit` can miss
    /// the exit when called from an async test and hang.
    private let pid: pid_t

    /// `http://127.0.0.1:PORT`.
    package var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts moto and waits (up to 30 s) until it answers.
    package init() throws {
        port = Int.random(in: 20_000..<60_000)
        let arguments = ["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var child: pid_t = 0
        guard posix_spawnp(&child, "python3", &actions, nil, &argv, environ) == 0 else {
            throw TestSupportError("could not start python3 for moto")
        }
        pid = child
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if Self.listening(port) { return }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { break }  // exited: moto missing, or the port was taken
            usleep(100_000)
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        throw TestSupportError("moto did not start on port \(port) (scripts/install-pydeps.sh installs moto[server])")
    }

    /// Creates `bucket` and uploads `files` (key → local path) with boto3, each object stored with
    /// `cacheControl` (S3 answers it as the object's `Cache-Control`) when given.
    package func upload(bucket: String, files: [String: String], cacheControl: String? = nil) throws {
        let pairs = files.map { "\($0.key)=\($0.value)" }
        _ = try PythonReference.run(
            """
            import sys, boto3
            s3 = boto3.client("s3", endpoint_url=sys.argv[1], aws_access_key_id="testing",
                              aws_secret_access_key="testing", region_name="us-east-1")
            s3.create_bucket(Bucket=sys.argv[2])
            extra = {"CacheControl": sys.argv[3]} if sys.argv[3] else {}
            for pair in sys.argv[4:]:
                key, path = pair.split("=", 1)
                s3.upload_file(path, sys.argv[2], key, ExtraArgs=extra)
            """, [endpoint.absoluteString, bucket, cacheControl ?? ""] + pairs)
    }

    /// Stops the server (SIGINT, which the development server handles; SIGKILL after 3 s) and reaps it.
    package func stop() {
        kill(pid, SIGINT)
        var status: Int32 = 0
        for _ in 0..<30 {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(100_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    private static func listening(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)  // no child inherits it
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
