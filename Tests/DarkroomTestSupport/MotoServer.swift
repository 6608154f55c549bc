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

    /// Starts moto and waits (up to 60 s) until it answers. The port is drawn below Linux's ephemeral range
    /// (32768–60999, where the kernel numbers the client side of every loopback connection the tests open), and a
    /// moto that exits at once (its port taken after all) is started again on another, up to three times.
    package init() throws {
        var started: (port: Int, pid: pid_t)?
        for _ in 0..<3 where started == nil {
            started = try Self.start(port: Int.random(in: 20_000..<32_768))
        }
        guard let started else {
            throw TestSupportError("moto did not start (scripts/install-pydeps.sh installs moto[server])")
        }
        (port, pid) = started
    }

    /// moto on `port`: its pid once it answers; nil when it exited before answering (the port taken, or moto
    /// missing: the caller's next try tells which).
    /// - Throws: when it neither answered nor exited within 60 s (killed and reaped first).
    private static func start(port: Int) throws -> (port: Int, pid: pid_t)? {
        let arguments = ["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var pid: pid_t = 0
        guard posix_spawnp(&pid, "python3", &actions, nil, &argv, environ) == 0 else {
            throw TestSupportError("could not start python3 for moto")
        }
        let deadline = Date().addingTimeInterval(60)
        var status: Int32 = 0
        while Date() < deadline {
            if listening(port) { return (port, pid) }
            if waitpid(pid, &status, WNOHANG) == pid { return nil }
            usleep(100_000)
        }
        kill(pid, SIGKILL)
        waitpid(pid, &status, 0)
        throw TestSupportError("moto did not answer on port \(port) within 60 s")
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
