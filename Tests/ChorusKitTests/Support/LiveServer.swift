import ChorusKit
import ChorusServer
import Foundation
import NIOCore
import NIOPosix
import Testing
import Vapor

/// A real Chorus server (sandbox telephony, SQLite in a temporary directory) on a loopback port, for the SDK to
/// talk to over HTTP.
final class LiveServer: Sendable {
    let app: Application
    let baseURL: URL
    let directory: URL

    private init(app: Application, baseURL: URL, directory: URL) {
        self.app = app
        self.baseURL = baseURL
        self.directory = directory
    }

    /// Starts a server, runs `body`, and always shuts it down and deletes its files.
    static func run(environment: [String: String] = [:], _ body: (LiveServer) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-kit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await start(in: directory, environment: environment)
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// A client of this server with its own session store.
    func client(tokenStore: any TokenStore = InMemoryTokenStore()) -> ChorusClient {
        ChorusClient(environment: .custom(baseURL), tokenStore: tokenStore)
    }

    /// A fresh address for a new account.
    static func newEmail(_ prefix: String = "user") -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())@example.com"
    }

    private static func start(in directory: URL, environment: [String: String]) async throws -> LiveServer {
        for attempt in 1...5 {
            do {
                return try await startOnce(in: directory, environment: environment)
            } catch let error as IOError where error.errnoCode == EADDRINUSE && attempt < 5 {
                continue  // the port was taken between choosing and binding it
            }
        }
        throw LiveServerError.noFreePort
    }

    private static func startOnce(in directory: URL, environment: [String: String]) async throws -> LiveServer {
        let port = try freePort()
        var variables = [
            "CHORUS_DATABASE_URL": directory.appendingPathComponent("chorus.sqlite").path,
            "CHORUS_DATA_DIR": directory.appendingPathComponent("data").path,
            "CHORUS_JWT_SECRET": "chorus-kit-test-secret-0123456789-0123456789",
            "CHORUS_RATE_LIMITS": "off",
            "CHORUS_SANDBOX_RING_SECONDS": "0.2",
            "CHORUS_SANDBOX_TALK_SECONDS": "1",
            "CHORUS_JOB_POLL_SECONDS": "0.1",
            "CHORUS_LOG_LEVEL": "warning",
        ]
        variables.merge(environment) { $1 }
        let configuration = try ChorusConfiguration.load(from: variables, hostname: "127.0.0.1", port: port)
        var options = ChorusApp.Options()
        options.bcryptCost = 4
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
        return LiveServer(app: app, baseURL: URL(string: "http://127.0.0.1:\(port)")!, directory: directory)
    }

    private func stop() async {
        await app.server.shutdown()
        try? await app.asyncShutdown()
    }

    private static func freePort() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        defer { try? channel.close().wait() }
        guard let port = channel.localAddress?.port else { throw LiveServerError.noFreePort }
        return port
    }
}

enum LiveServerError: Error {
    case noFreePort
}
