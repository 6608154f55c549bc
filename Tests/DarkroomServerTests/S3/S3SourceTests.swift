import Darkroom
import DarkroomImage
import DarkroomTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import DarkroomServer

/// `src=s3://BUCKET/KEY` against a real S3 API server on loopback (moto), with SigV4-signed requests.
@Suite("S3 sources")
struct S3SourceTests {
    @Test func s3SourcesRenderLikeFilesOnlyFromAllowedBuckets() async throws {
        // Given moto with bucket "photos" holding the upright sample, and a server allowed that bucket
        let moto = try MotoServer()
        defer { moto.stop() }
        let photo = try #require(SamplePhotos.files("orientation").first)
        try moto.upload(bucket: "photos", files: ["trips/leaf.jpg": photo])
        try moto.upload(bucket: "private", files: ["leaf.jpg": photo])
        var configuration = ServerHarness.configuration(root: (photo as NSString).deletingLastPathComponent)
        configuration.s3 = ServerConfiguration.S3(
            endpoint: moto.endpoint, accessKeyID: "testing", secretAccessKey: "testing", allowedBuckets: ["photos"])
        let file = (photo as NSString).lastPathComponent
        try await ServerHarness.withServer(configuration) { _, client in
            // When a thumbnail of the S3 object, of the same file from the root, and through imgproxy are asked for
            let s3 = try await client.execute(
                uri: "/v1/thumb?src=s3://photos/trips/leaf.jpg&w=128&format=png", method: .get)
            let local = try await client.execute(uri: "/v1/thumb?src=\(file)&w=128&format=png", method: .get)
            let dialect = try await client.execute(
                uri: "/imgproxy/_/rs:fit:128:128/plain/s3:%2F%2Fphotos%2Ftrips%2Fleaf.jpg@png", method: .get)
            // Then the S3 one is the same image, pixel for pixel
            #expect(s3.status == .ok, "\(String(decoding: s3.bytes, as: UTF8.self).prefix(300))")
            #expect(s3.probe.map { [$0.width, $0.height] } == [128, 80])
            #expect(s3.bytes == local.bytes && dialect.bytes == s3.bytes)
            // And another bucket is refused before any fetch, a missing key is a typed error, info works
            let other = try await client.execute(uri: "/v1/thumb?src=s3://private/leaf.jpg&w=128", method: .get)
            #expect(other.status == .forbidden && other.errorCode == "host_not_allowed")
            let missing = try await client.execute(uri: "/v1/thumb?src=s3://photos/nope.jpg&w=128", method: .get)
            #expect([404, 502].contains(missing.status.code) && missing.errorCode != nil, "\(missing.status)")
            let info = try await client.execute(uri: "/v1/info?src=s3://photos/trips/leaf.jpg", method: .get)
            #expect(info.status == .ok && String(buffer: info.body).contains("\"width\":600"))
        }
    }

    @Test func staleS3OriginalsRevalidateByETagAndChangedObjectsAreFetchedAgain() async throws {
        // Given moto holding one photo stored with `Cache-Control: no-cache` (so every use of the cached copy
        // revalidates), and a server with a disk cache of originals
        let moto = try MotoServer()
        defer { moto.stop() }
        let first = try #require(SamplePhotos.files("orientation").first)
        let other = try #require(SamplePhotos.require("png").first)
        try moto.upload(bucket: "photos", files: ["leaf.jpg": first], cacheControl: "no-cache")
        var configuration = ServerHarness.configuration(
            root: (other as NSString).deletingLastPathComponent,
            cacheDirectory: ServerHarness.temporaryDirectory("s3-revalidate"))
        configuration.s3 = ServerConfiguration.S3(
            endpoint: moto.endpoint, accessKeyID: "testing", secretAccessKey: "testing", allowedBuckets: ["photos"])
        try await ServerHarness.withServer(configuration) { server, client in
            let pipeline = server.service.pipeline
            // When a first thumbnail fetches the object, and a second size needs the original again
            let a = try await client.execute(uri: "/v1/thumb?src=s3://photos/leaf.jpg&w=100&format=png", method: .get)
            #expect(a.status == .ok)
            let afterFirst = pipeline.statistics
            let b = try await client.execute(uri: "/v1/thumb?src=s3://photos/leaf.jpg&w=90&format=png", method: .get)
            let afterSecond = pipeline.statistics
            // Then the second is a conditional GET that S3 answers 304: the cached bytes are used, none fetched
            #expect(b.status == .ok && b.probe.map { $0.width } == 90)
            #expect(afterFirst.networkFetches == 1 && afterFirst.revalidated == 0)
            #expect(afterSecond.networkFetches == 2 && afterSecond.revalidated == 1, "\(afterFirst) \(afterSecond)")
            #expect(afterSecond.bytesFetched == afterFirst.bytesFetched, "a 304 carries no body")

            // When the object is replaced by another photo and a third size is asked for
            try moto.upload(bucket: "photos", files: ["leaf.jpg": other], cacheControl: "no-cache")
            let c = try await client.execute(uri: "/v1/thumb?src=s3://photos/leaf.jpg&w=80&format=png", method: .get)
            let afterThird = pipeline.statistics
            // Then the ETag no longer matches: the new bytes are fetched, and the thumbnail is the new photo's
            #expect(c.status == .ok)
            #expect(afterThird.networkFetches == 3 && afterThird.revalidated == 1, "\(afterThird)")
            #expect(afterThird.bytesFetched > afterSecond.bytesFetched)
            let name = (other as NSString).lastPathComponent
            let local = try await client.execute(uri: "/v1/thumb?src=\(name)&w=80&format=png", method: .get)
            #expect(local.status == .ok && c.bytes == local.bytes)
        }
    }

    @Test func anS3VideoIsReadByRangesAndItsPosterFrameIsTheFilesOwn() async throws {
        // Given a 20 s clip (5.9 MB, its index at the end) in bucket "photos" and in the server's root
        let moto = try MotoServer()
        defer { moto.stop() }
        let root = ServerHarness.temporaryDirectory("s3-video")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FFmpegReference.writeLongClip(to: root + "/clip.mp4")
        let size = try FileBytes.read(root + "/clip.mp4", limit: 1 << 30).count
        try moto.upload(bucket: "photos", files: ["clips/clip.mp4": root + "/clip.mp4"])
        var configuration = ServerHarness.configuration(root: root)
        configuration.s3 = ServerConfiguration.S3(
            endpoint: moto.endpoint, accessKeyID: "testing", secretAccessKey: "testing", allowedBuckets: ["photos"])
        try await ServerHarness.withServer(configuration) { server, client in
            // When its poster frame is asked for from S3, and from the root
            let s3 = try await client.execute(
                uri: "/v1/thumb?src=s3://photos/clips/clip.mp4&w=128&format=png", method: .get)
            let fetched = server.service.pipeline.statistics
            let local = try await client.execute(uri: "/v1/thumb?src=clip.mp4&w=128&format=png", method: .get)
            // Then the two are the same image, and S3 sent a small part of the object in a few signed range requests
            #expect(s3.status == .ok, "\(String(decoding: s3.bytes, as: UTF8.self).prefix(300))")
            #expect(s3.bytes == local.bytes)
            #expect(fetched.networkFetches >= 2 && fetched.bytesFetched * 4 < size, "\(fetched) of \(size) bytes")
            // And its info is read from the ranges of its header: the clip's facts, for a small part of the object
            let info = try await client.execute(uri: "/v1/info?src=s3://photos/clips/clip.mp4", method: .get)
            let probed = server.service.pipeline.statistics.bytesFetched - fetched.bytesFetched
            #expect(info.status == .ok && String(buffer: info.body).contains("\"duration\":20"), "\(info.status)")
            #expect(probed * 4 < size, "\(probed) of \(size) bytes for the info")
            // And asked in the format a browser takes, or to stay HDR or be made for an HDR display, its frame is
            // still the file's own SDR frame, read by ranges too (the paths that take a photo's whole bytes, an
            // animation's and an HDR photo's, are not a video's)
            for query in ["w=128", "w=128&hdr=keep&format=avif", "w=128&hdr=apply&format=avif"] {
                let before = server.service.pipeline.statistics.bytesFetched
                let remote = try await client.execute(
                    uri: "/v1/thumb?src=s3://photos/clips/clip.mp4&\(query)", method: .get,
                    headers: [.accept: "image/webp,image/*"])
                let read = server.service.pipeline.statistics.bytesFetched - before
                let same = try await client.execute(
                    uri: "/v1/thumb?src=clip.mp4&\(query)", method: .get, headers: [.accept: "image/webp,image/*"])
                #expect(remote.status == .ok, "\(query): \(String(decoding: remote.bytes, as: UTF8.self).prefix(300))")
                #expect(remote.bytes == same.bytes, "\(query)")
                #expect(read * 4 < size, "\(query): \(read) of \(size) bytes")
            }
        }
    }
}
