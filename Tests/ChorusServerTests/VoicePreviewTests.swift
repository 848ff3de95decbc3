import ChorusAPI
import Foundation
import SQLKit
import Testing

@testable import ChorusServer

/// `GET /mobile/voices/{voice_id}/preview`: a spoken sample of an AI voice, generated once at the operator's cost and
/// served from storage with ranges, entity tags and caching, without a token.
@Suite("VoicePreview")
struct VoicePreviewTests {
    static func preview(_ server: TestServer, _ voice: String, headers: [(String, String)] = []) async throws -> TestServer.Reply {
        try await server.request(.GET, "/mobile/voices/\(voice)/preview", headers: headers)
    }

    /// Speech sessions the Realtime emulator was asked for whose text introduces `name`.
    static func generations(_ server: TestServer, of name: String) async throws -> Int {
        try await VoiceTests.providerRequests(server, path: "openai/v1/realtime", containing: "Hi, I'm \(name).")
    }

    @Test("a preview is generated once, then served from storage with Range, ETag and Cache-Control", arguments: TestDatabase.all)
    func generatedOnceServedFromStorage(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let first = try await Self.preview(server, "alloy")
            #expect(first.status == 200, "\(first.text)")
            let contentType = first.headers.first(name: "Content-Type") ?? ""
            #expect(["audio/mpeg", "audio/wav"].contains(contentType), "\(contentType)")
            #expect(first.headers.first(name: "Accept-Ranges") == "bytes")
            #expect(first.headers.first(name: "Cache-Control") == "public, max-age=86400")
            let etag = try #require(first.headers.first(name: "ETag"))
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count > 10)
            let size = first.body.count
            #expect(size > 1_000 && first.headers.first(name: "Content-Length") == String(size))
            // It is real audio of the container its media type names.
            if contentType == "audio/wav" { #expect(first.body.prefix(4) == Data("RIFF".utf8)) }

            // The same bytes again, from storage: still one generation.
            let second = try await Self.preview(server, "alloy")
            #expect(second.status == 200 && second.body == first.body && second.headers.first(name: "ETag") == etag)
            #expect(try await Self.generations(server, of: "Alloy") == 1)

            // Revalidation.
            let notModified = try await Self.preview(server, "alloy", headers: [("If-None-Match", etag)])
            #expect(notModified.status == 304 && notModified.body.isEmpty && notModified.headers.first(name: "ETag") == etag)
            #expect(try await Self.preview(server, "alloy", headers: [("If-None-Match", "W/\(etag), \"other\"")]).status == 304)
            #expect(try await Self.preview(server, "alloy", headers: [("If-None-Match", "*")]).status == 304)
            let changed = try await Self.preview(server, "alloy", headers: [("If-None-Match", "\"something-else\"")])
            #expect(changed.status == 200 && changed.body == first.body)

            // Ranges.
            let head = try await Self.preview(server, "alloy", headers: [("Range", "bytes=0-99")])
            #expect(head.status == 206 && head.body == first.body.prefix(100))
            #expect(head.headers.first(name: "Content-Range") == "bytes 0-99/\(size)" && head.headers.first(name: "ETag") == etag)
            let tail = try await Self.preview(server, "alloy", headers: [("Range", "bytes=-10")])
            #expect(tail.status == 206 && tail.body == first.body.suffix(10))
            let past = try await Self.preview(server, "alloy", headers: [("Range", "bytes=\(size)-")])
            #expect(past.status == 416 && past.body.isEmpty && past.headers.first(name: "Content-Range") == "bytes */\(size)")
            #expect(try await Self.generations(server, of: "Alloy") == 1)

            // Another voice is another sample.
            let echo = try await Self.preview(server, "echo")
            #expect(echo.status == 200 && echo.headers.first(name: "ETag") != etag)
            #expect(try await Self.generations(server, of: "Echo") == 1)

            // Unknown voices, including ones only the product's other catalogs know.
            for unknown in ["nobody", "ALLOY", "nova", "%2e%2e"] {
                let missing = try await Self.preview(server, unknown)
                #expect(missing.status == 404 && missing.detail == "Voice not found; see GET /mobile/voices", "\(unknown): \(missing.text)")
            }

            // The operator's cost: metered for the voice feature, without a user, charging nobody's allowance.
            let sql = server.app.db as! any SQLDatabase
            let rows = try await sql.raw("SELECT user_id, feature, operation, characters FROM provider_usage").all()
            #expect(rows.count == 2, "one synthesis per voice")
            for row in rows {
                #expect(try row.decode(column: "user_id", as: String?.self) == nil)
                #expect(try row.decode(column: "feature", as: String.self) == "voice_messages")
                #expect(try row.decode(column: "operation", as: String.self) == "speech")
                #expect(try row.decode(column: "characters", as: Int?.self) ?? 0 > 0)
            }
            #expect(try await sql.raw("SELECT COUNT(*) AS n FROM voice_usage").first()?.decode(column: "n", as: Int.self) == 0)
        }
    }

    @Test("30 concurrent first requests for one voice make one synthesis and get the same audio", arguments: TestDatabase.all)
    func concurrentFirstRequests(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for index in 0..<30 {
                    group.addTask { try await Self.preview(server, "coral", headers: index.isMultiple(of: 3) ? [("Range", "bytes=0-9")] : []) }
                }
                var replies: [TestServer.Reply] = []
                for try await reply in group { replies.append(reply) }
                return replies
            }
            let whole = replies.filter { $0.status == 200 }
            let partial = replies.filter { $0.status == 206 }
            #expect(whole.count == 20 && partial.count == 10, "\(replies.map(\.status))")
            #expect(Set(whole.map(\.body)).count == 1 && Set(replies.compactMap { $0.headers.first(name: "ETag") }).count == 1)
            #expect(partial.allSatisfy { $0.body == whole.first?.body.prefix(10) })
            #expect(try await Self.generations(server, of: "Coral") == 1)
            let sql = server.app.db as! any SQLDatabase
            #expect(try await sql.raw("SELECT COUNT(*) AS n FROM provider_usage").first()?.decode(column: "n", as: Int.self) == 1)
        }
    }

    @Test("a provider failure answers 503 and stores nothing; the next request generates the preview", arguments: TestDatabase.all)
    func providerFailure(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let failing = try await server.request(
                .PUT, "/sandbox/openai/realtime/behavior", body: Data(#"{"reject_connections":true}"#.utf8),
                headers: [("Content-Type", "application/json")])
            #expect(failing.status == 200, "\(failing.text)")
            let failed = try await Self.preview(server, "sage")
            #expect(failed.status == 503 && failed.detail == VoicePreviewController.unavailableMessage, "\(failed.text)")
            #expect(failed.headers.first(name: "Retry-After") == "5")
            let sql = server.app.db as! any SQLDatabase
            #expect(try await sql.raw("SELECT COUNT(*) AS n FROM speech_cache").first()?.decode(column: "n", as: Int.self) == 0)
            #expect(try await sql.raw("SELECT COUNT(*) AS n FROM provider_usage").first()?.decode(column: "n", as: Int.self) == 0)

            #expect(try await server.request(.DELETE, "/sandbox/openai/realtime/behavior").status < 300)
            let recovered = try await Self.preview(server, "sage")
            #expect(recovered.status == 200 && recovered.body.count > 1_000, "\(recovered.text)")
            #expect(try await Self.preview(server, "sage").body == recovered.body)
        }
    }

    @Test("previews need no token and are limited per client IP", arguments: TestDatabase.all)
    func publicAndLimitedPerIP(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_RATE_LIMITS": "user=3/60"]) { server in
            // A token that is no longer valid is not looked at.
            #expect(try await server.request(.GET, "/mobile/voices/ash/preview", token: "not-a-token").status == 200)
            #expect(try await Self.preview(server, "ash").status == 200)
            #expect(try await Self.preview(server, "ash", headers: [("Range", "bytes=0-0")]).status == 206)
            let limited = try await Self.preview(server, "ash")
            #expect(limited.status == 429 && limited.headers.first(name: "Retry-After") != nil, "\(limited.text)")
            #expect(try await Self.generations(server, of: "Ash") == 1)
        }
    }
}
