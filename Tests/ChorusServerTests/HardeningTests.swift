import ChorusAPI
import ChorusCore
import ChorusSandbox
import Foundation
import Testing

@testable import ChorusServer

/// Single requests that used to end the whole process (issue 16): each now gets a 4xx and the server goes on.
@Suite("Hardening: no request stops the process")
struct HardeningTests {
    /// The server still answers.
    static func expectAlive(_ server: TestServer) async throws {
        #expect(try await server.request(.GET, "/health").status == 200)
    }

    @Test("a request that reaches an instance after its databases shut down gets 503, not Fluent's force unwrap", arguments: TestDatabase.all)
    func requestAfterDatabasesShutDown(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let tokens = try await server.register()
            // What a stopping instance looks like to a request its HTTP server let through after the shutdown timeout.
            await server.app.databases.shutdownAsync()
            let login = try await server.request(.POST, "/auth/login", form: "username=a%40example.com&password=whatever1")
            #expect(login.status == 503, "\(login.text)")
            #expect(login.detail == "The server is stopping. Retry in 5 seconds.")
            #expect(login.headers.first(name: "Retry-After") == "5")
            let usage = try await server.request(.GET, "/mobile/usage-stats", token: tokens.accessToken)
            #expect(usage.status == 503, "\(usage.text)")
        }
    }

    @Test("a Range header up to Int64.max is answered, not trapped on", arguments: TestDatabase.all)
    func hugeRange(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await MessagingTests.person(server, name: "alice")
            let wav = SandboxAudioFiles.speechWAV(text: "Ranges from outside.", voice: "alice")
            let upload = try await server.request(
                .POST, "/audio", token: alice.token, body: wav, headers: [("Content-Type", "audio/wav")]
            ).decode(AudioUploadResponse.self)
            let size = wav.count

            let whole = try await server.request(
                .GET, "/audio/\(upload.audioID)", token: alice.token, headers: [("Range", "bytes=0-9223372036854775807")])
            #expect(whole.status == 206)
            #expect(whole.headers.first(name: "Content-Range") == "bytes 0-\(size - 1)/\(size)")
            #expect(whole.body == wav)

            let past = try await server.request(
                .GET, "/audio/\(upload.audioID)", token: alice.token, headers: [("Range", "bytes=99999999999999999999-")])
            #expect(past.status == 416)
            #expect(past.headers.first(name: "Content-Range") == "bytes */\(size)")

            let suffix = try await server.request(
                .GET, "/audio/\(upload.audioID)", token: alice.token, headers: [("Range", "bytes=-99999999999999999999")])
            #expect(suffix.status == 206 && suffix.body == wav)

            let tail = try await server.request(
                .GET, "/audio/\(upload.audioID)", token: alice.token, headers: [("Range", "bytes=\(size - 4)-9223372036854775806")])
            #expect(tail.status == 206 && tail.body == wav.suffix(4))
            try await Self.expectAlive(server)
        }
    }

    @Test("an M4A whose box declares a 64-bit size of Int64.max is refused with 422", arguments: TestDatabase.all)
    func hugeM4ABox(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await MessagingTests.person(server, name: "alice")
            // ftyp (M4A, isom), then a box of size 1 (a 64-bit size follows) declaring 0x7FFFFFFFFFFFFFFF bytes: 48 bytes.
            var m4a = Data([0, 0, 0, 20] + Array("ftypM4A ".utf8) + [0, 0, 0, 0] + Array("isom".utf8))
            m4a += Data([0, 0, 0, 1] + Array("mdat".utf8) + [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
            m4a += Data(count: 48 - m4a.count)
            for type in ["audio/mp4", "audio/m4a"] {
                let reply = try await server.request(.POST, "/audio", token: alice.token, body: m4a, headers: [("Content-Type", type)])
                #expect(reply.status == 422, "\(reply.text)")
                #expect(reply.detail?.contains("could not be read") == true, "\(reply.text)")
            }
            try await Self.expectAlive(server)
        }
    }

    @Test("the App Store emulator refuses periods no date can hold")
    func hugePeriods() async throws {
        try await TestServer.run(on: .sqlite) { server in
            for period in ["1e300", "-5", "0", "315360000000"] {
                let body = Data(#"{"product_id":"com.chorus.basic","kind":"auto_renewable","period_seconds":\#(period)}"#.utf8)
                let reply = try await server.request(
                    .POST, "/sandbox/app-store/purchases", body: body, headers: [("Content-Type", "application/json")])
                #expect(reply.status == 400, "period \(period): \(reply.text)")
                #expect(reply.detail?.contains("period_seconds") == true, "\(reply.text)")
            }
            let purchase = try await server.request(
                .POST, "/sandbox/app-store/purchases",
                body: Data(#"{"product_id":"com.chorus.basic","kind":"auto_renewable","period_seconds":604800}"#.utf8),
                headers: [("Content-Type", "application/json")])
            #expect(purchase.status == 201, "\(purchase.text)")
            let original = purchase.json["original_transaction_id"] as? String ?? ""
            for (name, value) in [("period_seconds", "1e300"), ("grace_period_seconds", "1e300"), ("period_seconds", "-1")] {
                let body = Data(
                    #"{"notification_type":"RENEWAL_EXTENDED","original_transaction_id":"\#(original)","\#(name)":\#(value)}"#.utf8)
                let reply = try await server.request(
                    .POST, "/sandbox/app-store/notifications", body: body, headers: [("Content-Type", "application/json")])
                #expect(reply.status == 400, "\(name) \(value): \(reply.text)")
            }
            try await Self.expectAlive(server)
        }
    }

    @Test("development refuses a network address unless told to expose the sandbox")
    func developmentOnTheNetwork() throws {
        for host in ["0.0.0.0", "::", "192.168.1.20", "example.com"] {
            let configuration = try ChorusConfiguration.load(from: ["CHORUS_HOSTNAME": host])
            #expect(!configuration.listensOnLoopbackOnly)
            #expect(configuration.startupProblems().contains { $0.contains("CHORUS_DEVELOPMENT_ON_NETWORK") }, "\(host)")
            let allowed = try ChorusConfiguration.load(from: ["CHORUS_HOSTNAME": host, "CHORUS_DEVELOPMENT_ON_NETWORK": "true"])
            #expect(allowed.startupProblems().isEmpty, "\(host)")
        }
        for host in ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"] {
            let configuration = try ChorusConfiguration.load(from: ["CHORUS_HOSTNAME": host])
            #expect(configuration.listensOnLoopbackOnly, "\(host)")
            #expect(configuration.startupProblems().isEmpty, "\(host)")
        }
        #expect(throws: ConfigurationError.self) {
            try ChorusConfiguration.load(from: ["CHORUS_DEVELOPMENT_ON_NETWORK": "perhaps"])
        }
    }

    @Test("trial and add-on days past 100 years are a configuration error, not a trap multiplying them into seconds")
    func dayCountsAreBounded() throws {
        for key in ["CHORUS_TRIAL_DAYS", "CHORUS_ADDON_DAYS"] {
            for value in ["36501", "9223372036854775807"] {
                #expect(throws: ConfigurationError.self, "\(key)=\(value)") { try ChorusConfiguration.load(from: [key: value]) }
            }
        }
        let longest = try ChorusConfiguration.load(from: ["CHORUS_TRIAL_DAYS": "36500", "CHORUS_ADDON_DAYS": "36500"])
        #expect(longest.plans.trial.period == 36_500 * 86_400 && longest.plans.addon.validity == 36_500 * 86_400)
    }

    @Test("chorus serve on 0.0.0.0 in development stops with EX_CONFIG and says why")
    func serveRefusesNetworkAddress() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-net-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let run = try CLITests.run(["serve", "--hostname", "0.0.0.0", "--port", "0"], environment: [:], in: directory)
        #expect(run.status == 78, "\(run.output)")
        #expect(run.output.contains("CHORUS_DEVELOPMENT_ON_NETWORK"), "\(run.output)")
        let sandbox = try CLITests.run(["sandbox", "serve", "--hostname", "0.0.0.0", "--port", "0"], environment: [:], in: directory)
        #expect(sandbox.status != 0 && sandbox.output.contains("--allow-network"), "\(sandbox.output)")
    }

    @Test("headers that stop arriving and a body that stops are dropped after the idle time")
    func stalledRequestsAreDropped() async throws {
        try await TestServer.run(on: .sqlite, environment: ["CHORUS_IDLE_TIMEOUT_SECONDS": "1"]) { server in
            let port = try #require(URL(string: server.baseURL)?.port)
            let halfHeaders = try RawConnection(port: port)
            try halfHeaders.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            let stalledBody = try RawConnection(port: port)
            try stalledBody.send(
                "POST /auth/register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"em")
            let idle = try RawConnection(port: port)
            #expect(halfHeaders.receive(timeout: .seconds(5)).closed, "half-sent headers keep their connection")
            #expect(stalledBody.receive(timeout: .seconds(5)).closed, "a stalled body keeps its connection")
            #expect(idle.receive(timeout: .seconds(5)).closed, "an unused connection stays open")
            try await Self.expectAlive(server)
        }
    }

    /// Vapor hands a request on when its first body bytes arrive, so the 413 comes after the first chunk of a
    /// 100 MB body, not after the body (and a client waiting for `100 Continue` sends that chunk when it stops waiting).
    @Test("a declared oversize body is refused with 413 on its first bytes")
    func declaredOversizeBody() async throws {
        try await TestServer.run(on: .sqlite) { server in
            let port = try #require(URL(string: server.baseURL)?.port)
            for expect in ["", "Expect: 100-continue\r\n"] {
                let connection = try RawConnection(port: port)
                try connection.send(
                    "POST /auth/register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\(expect)"
                        + "Content-Length: 104857600\r\n\r\n{\"email\":")
                let answer = connection.receive(timeout: .seconds(5)) { $0.contains("accepts\"}") }
                #expect(answer.text.hasPrefix("HTTP/1.1 413"), "\(answer.text)")
                #expect(answer.text.contains("larger than the 65536 bytes"), "\(answer.text)")
            }
            // A recording upload has its own, larger limit (10 MB by default).
            let alice = try await MessagingTests.person(server, name: "alice")
            let connection = try RawConnection(port: port)
            try connection.send(
                "POST /audio HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(alice.token)\r\nContent-Type: audio/wav\r\n"
                    + "Content-Length: 99999999999999999999999\r\n\r\nRIFF")
            let answer = connection.receive(timeout: .seconds(5)) { $0.contains("\r\n\r\n") }
            // A length beyond 64 bits is a framing error for NIO's parser: the connection is dropped (or answered 4xx).
            #expect(answer.closed || answer.text.hasPrefix("HTTP/1.1 4"), "\(answer.text)")
            try await Self.expectAlive(server)
        }
    }
}
