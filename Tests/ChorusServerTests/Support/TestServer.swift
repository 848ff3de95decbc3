import AsyncHTTPClient
import ChorusAPI
import ChorusServer
import ChorusTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
import Vapor

/// A test server driven over HTTP with its own client.
final class TestServer: Sendable {
    let server: LoopbackServer
    let client: HTTPClient

    var app: Application { server.app }
    var configuration: ChorusConfiguration { server.configuration }
    var baseURL: String { server.baseURL.absoluteString }

    private init(server: LoopbackServer) {
        self.server = server
        // Tests fire up to 50 requests at once: one connection each instead of queueing behind the default 8.
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Starts a server on `database` (fresh unless given), runs `body`, and always shuts everything down.
    /// `sandboxTimeScale`: see ``LoopbackServer/start(environment:options:sandboxTimeScale:)``.
    static func run(
        on kind: TestDatabase,
        database: ProvisionedDatabase? = nil,
        environment: [String: String] = [:],
        options: ChorusApp.Options = .testing(),
        sandboxTimeScale: Double = 1,
        _ body: (TestServer) async throws -> Void
    ) async throws {
        let provisioned = try database ?? kind.make()
        defer { if database == nil { provisioned.drop() } }
        let server = try await start(database: provisioned, environment: environment, options: options, sandboxTimeScale: sandboxTimeScale)
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Starts a server on an existing database (several servers may share one).
    static func start(
        database: ProvisionedDatabase, environment: [String: String] = [:], options: ChorusApp.Options = .testing(), sandboxTimeScale: Double = 1
    ) async throws
        -> TestServer
    {
        let variables = [
            "CHORUS_DATABASE_URL": database.url, "CHORUS_DATA_DIR": database.directory.appendingPathComponent("data").path,
        ].merging(environment) { $1 }
        return TestServer(server: try await LoopbackServer.start(environment: variables, options: options, sandboxTimeScale: sandboxTimeScale))
    }

    func stop() async {
        try? await client.shutdown()
        await server.stop()
    }

    // MARK: HTTP

    struct Reply: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            do {
                return try ChorusJSON.makeDecoder().decode(T.self, from: body)
            } catch {
                throw TestSetupError(message: "could not decode \(T.self) from \(status) \(text): \(error)")
            }
        }

        var text: String { String(decoding: body, as: UTF8.self) }

        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }

        var detail: String? { json["detail"] as? String }
    }

    func request(
        _ method: HTTPMethod, _ path: String, token: String? = nil, json: (any Encodable)? = nil, form: String? = nil,
        body rawBody: Data? = nil, headers extra: [(String, String)] = []
    ) async throws -> Reply {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try ChorusJSON.makeEncoder().encode(AnyEncodable(json))))
        } else if let form {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: form))
        } else if let rawBody {
            request.body = .bytes(ByteBuffer(data: rawBody))
        }
        for (name, value) in extra { request.headers.replaceOrAdd(name: name, value: value) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 16 * 1024 * 1024)
        return Reply(status: Int(response.status.code), headers: response.headers, body: Data(buffer.readableBytesView))
    }

    // MARK: Helpers

    /// Registers a fresh account and returns its tokens.
    func register(email: String? = nil, password: String = "correct horse battery") async throws -> TokenResponse {
        let reply = try await request(
            .POST, "/auth/register", json: RegisterRequest(email: email ?? "user-\(UUID().uuidString.prefix(8))@example.com", password: password),
            headers: [("X-App-Type", "mobile")]
        )
        #expect(reply.status == 200, "register: \(reply.text)")
        return try reply.decode(TokenResponse.self)
    }

    /// Polls `condition` until it holds or `timeout` passes.
    func eventually(timeout: Duration = .seconds(15), _ what: String, _ condition: () async throws -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("timed out waiting for: \(what)")
        throw TestSetupError(message: "timed out waiting for \(what)")
    }
}

private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
