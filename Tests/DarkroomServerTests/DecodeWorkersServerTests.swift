import DarkroomImage
import DarkroomTestSupport
import DarkroomWorkers
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import DarkroomServer

/// The server decodes in confined workers by default: the same thumbnails as in this process, the workers' counts in
/// `/health` and `/metrics`, and a file that crashes its decoder costs its own request only.
@Suite("Decode workers in the server")
struct DecodeWorkersServerTests {
    let root = ServerHarness.makeRoot()

    @Test("by default renders decode in workers, pixel for pixel as in this process, counted in health and metrics")
    func workersByDefault() async throws {
        // Given the default configuration, and the same with decoding in this process
        let isolated = ServerHarness.configuration(root: root)
        try #require(isolated.decodeWorkers != nil)
        var inProcess = isolated
        inProcess.decodeWorkers = nil
        let uri = "/v1/thumb?src=photo.jpg&w=120&format=png"

        // When each renders the same thumbnail, and the isolated one is asked for its health and metrics
        let local = try await ServerHarness.withServer(inProcess) { _, client in
            let health = try await client.execute(uri: "/health", method: .get)
            let j = try JSONSerialization.jsonObject(with: Data(health.bytes)) as! [String: Any]
            #expect(j["decoding"] as? String == "in-process" && j["decodeWorkers"] == nil)
            return try await client.execute(uri: uri, method: .get).bytes
        }
        let (bytes, health, metrics) = try await ServerHarness.withServer(isolated) { _, client in
            let bytes = try await client.execute(uri: uri, method: .get).bytes
            let health = try await client.execute(uri: "/health", method: .get)
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            return (bytes, health.bytes, String(buffer: metrics.body))
        }

        // Then the thumbnails are the same bytes, and the worker's decode is counted
        #expect(!bytes.isEmpty && bytes == local)
        let j = try JSONSerialization.jsonObject(with: Data(health)) as! [String: Any]
        let workers = try #require(j["decodeWorkers"] as? [String: Any])
        #expect(j["decoding"] as? String == "workers")
        #expect(workers["decodes"] as? Int == 1 && workers["workersStarted"] as? Int == 1, "\(workers)")
        // (the metrics registry is the process's: other suites' servers add to the same instruments)
        #expect((Self.value(#"darkroom_server_decode_workers_total{event="decodes"}"#, in: metrics) ?? 0) >= 1)
        #expect(Self.value("darkroom_server_decode_workers_running", in: metrics) != nil, "\(metrics)")
    }

    @Test("an animation's frames are made in a worker: the same animated WebP as in this process")
    func animationsInWorkers() async throws {
        // Given an animated GIF under the root, and the server isolated and in this process
        ServerHarness.write(
            root + "/anim.gif", try SamplePhotos.bytes(SamplePhotos.path("animated/disposal-mixed-480x300.gif")))
        let isolated = ServerHarness.configuration(root: root)
        var inProcess = isolated
        inProcess.decodeWorkers = nil
        let uri = "/v1/thumb?src=anim.gif&w=96&format=webp"
        // When each renders its animated thumbnail
        let local = try await ServerHarness.withServer(inProcess) { _, client in
            try await client.execute(uri: uri, method: .get).bytes
        }
        let (bytes, health) = try await ServerHarness.withServer(isolated) { _, client in
            let bytes = try await client.execute(uri: uri, method: .get).bytes
            return (bytes, try await client.execute(uri: "/health", method: .get).bytes)
        }
        // Then the two are the same animation, and a worker made its frames (its requests: the open, every frame
        // and the end; the close goes with the worker's next request)
        let frames = try AnimatedImageDecoder([UInt8](bytes), options: DecodeOptions())
        #expect(frames.frameCount > 1 && bytes == local)
        let j = try JSONSerialization.jsonObject(with: Data(health)) as! [String: Any]
        let workers = try #require(j["decodeWorkers"] as? [String: Any])
        #expect(workers["decodes"] as? Int == frames.frameCount + 2 && workers["crashes"] as? Int == 0, "\(workers)")
        #expect(workers["workersStarted"] as? Int == 1, "\(workers)")
    }

    @Test("hdr=keep and hdr=apply are made in a worker: the same Ultra HDR JPEG and PQ AVIF as in this process")
    func hdrOutputsInWorkers() async throws {
        // Given an Ultra HDR JPEG under the root, and the server isolated and in this process
        ServerHarness.write(
            root + "/ultrahdr.jpg", try GainMapSamples.assembled(from: "jpeg/colorfulcups-2560x1600.jpg").bytes)
        let isolated = ServerHarness.configuration(root: root)
        var inProcess = isolated
        inProcess.decodeWorkers = nil
        let uris = [
            "/v1/thumb?src=ultrahdr.jpg&w=128&format=jpeg&hdr=keep", "/v1/thumb?src=ultrahdr.jpg&w=128&hdr=apply",
        ]
        // When each renders both
        let local = try await ServerHarness.withServer(inProcess) { _, client in
            var answers: [[UInt8]] = []
            for uri in uris { answers.append(try await client.execute(uri: uri, method: .get).bytes) }
            return answers
        }
        let (answers, health) = try await ServerHarness.withServer(isolated) { _, client in
            var answers: [[UInt8]] = []
            for uri in uris { answers.append(try await client.execute(uri: uri, method: .get).bytes) }
            return (answers, try await client.execute(uri: "/health", method: .get).bytes)
        }
        // Then the worker's are the same files (an Ultra HDR JPEG with its gain map, a 10-bit PQ AVIF), and a worker
        // made each
        #expect(answers == local)
        #expect(ImageProber.gainMap(of: answers[0])?.isUsable == true)
        #expect(try ImageProber.probe(answers[1]).hdr?.transfer == "pq")
        let j = try JSONSerialization.jsonObject(with: Data(health)) as! [String: Any]
        let workers = try #require(j["decodeWorkers"] as? [String: Any])
        #expect(workers["decodes"] as? Int == 2 && workers["crashes"] as? Int == 0, "\(workers)")
    }

    @Test("motion=1 is made in a worker that reads the clip by ranges: the same animated WebP as in this process")
    func motionInWorkers() async throws {
        // Given a Motion Photo (its clip inside the still) under the root, and the server isolated and in this process
        ServerHarness.write(root + "/google.jpg", try FileBytes.read(MotionPhotoSamples.path("google.jpg")))
        let isolated = ServerHarness.configuration(root: root)
        var inProcess = isolated
        inProcess.decodeWorkers = nil
        let uri = "/v1/thumb?src=google.jpg&w=96&motion=1&format=webp"
        // When each renders its motion
        let local = try await ServerHarness.withServer(inProcess) { _, client in
            try await client.execute(uri: uri, method: .get).bytes
        }
        let (bytes, health) = try await ServerHarness.withServer(isolated) { _, client in
            let bytes = try await client.execute(uri: uri, method: .get).bytes
            return (bytes, try await client.execute(uri: "/health", method: .get).bytes)
        }
        // Then the two are the same animation, and a worker made it (its requests: the clip's header, the open, 20
        // frames and the end)
        #expect(try AnimatedImageDecoder(bytes, options: DecodeOptions()).frameCount == 20 && bytes == local)
        let j = try JSONSerialization.jsonObject(with: Data(health)) as! [String: Any]
        let workers = try #require(j["decodeWorkers"] as? [String: Any])
        #expect(workers["decodes"] as? Int == 23 && workers["crashes"] as? Int == 0, "\(workers)")
    }

    /// The value of the Prometheus sample named `name` (with its labels) in `text`.
    static func value(_ name: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.dropFirst(name.count + 1)) }
    }

    @Test("a file that crashes its decoder costs its own request: 422 decoder crashed, the others answered")
    func aCrashCostsOneRequest() async throws {
        // Given a server whose workers' decoder segfaults on one file (the test worker), beside a photo
        ServerHarness.write(root + "/crash.png", WorkerMisdeed.crash.input)
        var configuration = ServerHarness.configuration(root: root)
        configuration.decodeWorkers?.executable = try SamplePhotos.builtExecutable("darkroom-test-worker")

        try await ServerHarness.withServer(configuration) { _, client in
            // When the crashing file and the photo are asked for, several times, side by side
            let statuses = try await withThrowingTaskGroup(of: (String, HTTPResponse.Status).self) { group in
                for i in 0..<6 {
                    let src = i % 3 == 0 ? "crash.png" : "photo.jpg"
                    group.addTask {
                        let r = try await client.execute(
                            uri: "/v1/thumb?src=\(src)&w=\(40 + i)&format=png", method: .get)
                        return (src, r.status)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let health = try await client.execute(uri: "/health", method: .get)

            // Then each crash is its own request's 422, every photo is answered, and the crashed workers counted
            for (src, status) in statuses {
                #expect(status == (src == "crash.png" ? .unprocessableContent : .ok), "\(src): \(status)")
            }
            let j = try JSONSerialization.jsonObject(with: Data(health.bytes)) as! [String: Any]
            let workers = try #require(j["decodeWorkers"] as? [String: Any])
            #expect(workers["crashes"] as? Int == 2, "\(workers)")
        }
    }

    @Test("a server whose worker executable is missing refuses to start, naming it and the in-process switch")
    func aMissingWorkerRefusesToStart() throws {
        // Given a configuration naming a worker that does not exist
        var configuration = ServerHarness.configuration(root: root)
        configuration.decodeWorkers?.executable = "/nonexistent/darkroom-worker"

        // When the service is assembled, Then it is refused with a message naming both
        let error = #expect(throws: ServerError.self) { _ = try ThumbnailRenderer(configuration: configuration) }
        #expect(error?.message.contains("/nonexistent/darkroom-worker") == true)
        #expect(error?.message.contains("--in-process") == true)
    }
}
