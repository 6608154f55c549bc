import DarkroomImage
import DarkroomTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import DarkroomServer

/// Every option through both dialects gives the bytes `/v1/thumb` gives, rendered by separate servers (so no
/// cache is shared between the two answers).
@Suite("Dialects round-trip to /v1/thumb")
struct DialectRoundTripTests {
    let root = ServerHarness.makeRoot()

    /// (dialect URL, the same request as /v1/thumb).
    static let pairs: [(String, String)] = [
        ("/imgproxy/_/rs:fill:200:150/g:soea:5:5/plain/photo.jpg@png", "fit=cover&w=200&h=150&g=soea:5:5&format=png"),
        (
            "/imgproxy/_/rs:fit:120:120:1:1/bg:00ff00/plain/photo.jpg@png",
            "w=120&h=120&enlarge=1&extend=1&bg=00ff00&format=png"
        ),
        (
            "/imgproxy/_/c:0.5:0.5:nowe/rs:fit:100:100/rot:270/fl:0:1/plain/photo.jpg@png",
            "crop=0.5:0.5:nowe&w=100&h=100&rotate=270&flip=v&format=png"
        ),
        (
            "/imgproxy/_/w:90/bl:1.5/sh:0.7/pd:3:4/bg:ff0000/q:70/plain/photo.jpg@jpg",
            "w=90&blur=1.5&sharpen=0.7&pad=3,4,3,4&bg=FF0000&q=70&format=jpeg"
        ),
        ("/imgproxy/_/rs:fill-down:2000:1000/g:sm/plain/photo.jpg@png", "fit=fill-down&w=2000&h=1000&format=png"),
        ("/imgproxy/_/rs:fill:160:160/g:sm/plain/photo.jpg@png", "fit=cover&w=160&h=160&g=sm&format=png"),
        (
            "/imgproxy/_/rs:force:90:40/dpr:2/mb:4000/plain/photo.jpg@webp",
            "fit=force&w=90&h=40&dpr=2&max_bytes=4000&format=webp"
        ),
        ("/imgproxy/_/rs:fit:300:300/mw:320/plain/photo.jpg@png", "w=300&h=300&min-w=320&format=png"),
        (
            "/thumbor/unsafe/10x20:330x260/160x120/filters:format(png)/photo.jpg",
            "crop=10,20,330,260&w=160&h=120&fit=cover&enlarge=1&format=png"
        ),
        (
            "/thumbor/unsafe/fit-in/150x150/filters:fill(ff0000):format(png)/alpha.png",
            "src=alpha.png&w=150&h=150&extend=1&bg=FF0000&enlarge=0&format=png"
        ),
        (
            "/thumbor/unsafe/-100x80/right/bottom/filters:grayscale():rotate(180):format(png)/photo.jpg",
            "w=100&h=80&fit=cover&g=soea&flip=h&grayscale=1&rotate=180&enlarge=1&format=png"
        ),
        (
            "/thumbor/unsafe/full-fit-in/100x100/filters:sharpen(2,1,false):blur(1):quality(60)/photo.jpg",
            "fit=outside&w=100&h=100&sharpen=1,2&blur=1&q=60&enlarge=0"
        ),
        (
            "/thumbor/unsafe/trim:5/120x120/smart/filters:format(png)/photo.jpg",
            "trim=5&w=120&h=120&fit=cover&g=sm&enlarge=1&format=png"
        ),
    ]

    @Test func eachDialectURLRendersTheSameBytesAsItsV1Request() async throws {
        let dialect = try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            var answers: [[UInt8]] = []
            for (url, _) in Self.pairs {
                let r = try await client.execute(uri: url, method: .get, headers: [.accept: "*/*"])
                #expect(r.status == .ok, "\(url): \(String(decoding: r.bytes, as: UTF8.self).prefix(200))")
                answers.append(r.bytes)
            }
            return answers
        }
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            for (i, (url, query)) in Self.pairs.enumerated() {
                let src = query.hasPrefix("src=") ? "" : "src=photo.jpg&"
                let r = try await client.execute(
                    uri: "/v1/thumb?" + src + query, method: .get, headers: [.accept: "*/*"])
                #expect(r.status == .ok, "\(query)")
                #expect(r.bytes == dialect[i] && !r.bytes.isEmpty, "\(url) differs from /v1/thumb?\(query)")
            }
        }
    }
}
