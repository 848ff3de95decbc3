import AsyncHTTPClient
import ChorusAPI
import ChorusServer
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
import Vapor

/// A real Chorus server on a loopback port, with the sandbox providers, driven over HTTP.
final class TestServer: Sendable {
    let app: Application
    let configuration: ChorusConfiguration
    let baseURL: String
    let client: HTTPClient

    private init(app: Application, configuration: ChorusConfiguration, client: HTTPClient) {
        self.app = app
        self.configuration = configuration
        self.baseURL = "http://127.0.0.1:\(configuration.port)"
        self.client = client
    }

    /// Starts a server on `database` (fresh unless given), runs `body`, and always shuts everything down.
    static func run(
        on kind: TestDatabase,
        database: ProvisionedDatabase? = nil,
        environment: [String: String] = [:],
        options: ChorusApp.Options = .testing(),
        _ body: (TestServer) async throws -> Void
    ) async throws {
        let provisioned = try database ?? kind.make()
        defer { if database == nil { provisioned.drop() } }
        let server = try await start(database: provisioned, environment: environment, options: options)
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Starts a server on an existing database (several servers may share one). A port taken between choosing
    /// and binding it is retried with another.
    static func start(
        database: ProvisionedDatabase, environment: [String: String] = [:], options: ChorusApp.Options = .testing()
    ) async throws
        -> TestServer
    {
        for attempt in 1...5 {
            do {
                return try await startOnce(database: database, environment: environment, options: options)
            } catch let error as IOError where error.errnoCode == EADDRINUSE && attempt < 5 {
                continue
            }
        }
        throw TestSetupError(message: "no free port")
    }

    private static func startOnce(
        database: ProvisionedDatabase, environment: [String: String], options: ChorusApp.Options
    ) async throws
        -> TestServer
    {
        let port = try freePort()
        var variables = [
            "CHORUS_DATABASE_URL": database.url,
            "CHORUS_DATA_DIR": database.directory.appendingPathComponent("data").path,
            "CHORUS_JWT_SECRET": "test-secret-test-secret-test-secret-0123456789",
            "CHORUS_RATE_LIMITS": "off",
            "CHORUS_SANDBOX_RING_SECONDS": "0.2",
            "CHORUS_SANDBOX_TALK_SECONDS": "1",
            "CHORUS_JOB_POLL_SECONDS": "0.1",
            "CHORUS_LOG_LEVEL": "warning",
        ]
        variables.merge(environment) { $1 }
        let configuration = try ChorusConfiguration.load(from: variables, hostname: "127.0.0.1", port: port)
        let app = try await Application.make(.testing)
        app.logger.logLevel = .warning
        do {
            try await ChorusApp.configure(app, configuration: configuration, options: options)
            try await app.asyncBoot()
            try await app.server.start(address: .hostname("127.0.0.1", port: port))
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        return TestServer(app: app, configuration: configuration, client: HTTPClient(eventLoopGroupProvider: .singleton))
    }

    func stop() async {
        try? await client.shutdown()
        await app.server.shutdown()
        try? await app.asyncShutdown()
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

    static func freePort() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        let port = channel.localAddress!.port!
        try channel.close().wait()
        return port
    }
}

extension ChorusApp.Options {
    /// Fast bcrypt; simulated calls at real speed unless a test says otherwise.
    static func testing(clock: @escaping @Sendable () -> Date = { Date() }) -> ChorusApp.Options {
        var options = ChorusApp.Options()
        options.bcryptCost = 4
        options.clock = clock
        return options
    }
}

extension ChorusApp.Options {
    /// Simulated calls at 1/50 of real time: a 30 s ring timeout passes in 0.6 s.
    static var fastCalls: ChorusApp.Options {
        var options = ChorusApp.Options.testing()
        options.sandboxTimeScale = 0.02
        return options
    }
}

private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
