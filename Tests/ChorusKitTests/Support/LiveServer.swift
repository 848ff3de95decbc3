import ChorusKit
import ChorusServer
import ChorusTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing
import Vapor

/// A real Chorus server (sandbox telephony, SQLite in a temporary directory) on a loopback port, for the SDK to
/// talk to over HTTP.
final class LiveServer: Sendable {
    let server: LoopbackServer
    let directory: URL

    var app: Application { server.app }
    var baseURL: URL { server.baseURL }

    private init(server: LoopbackServer, directory: URL) {
        self.server = server
        self.directory = directory
    }

    /// Starts a server, runs `body`, and always shuts it down and deletes its files.
    static func run(environment: [String: String] = [:], _ body: (LiveServer) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-kit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let variables = [
            "CHORUS_DATABASE_URL": directory.appendingPathComponent("chorus.sqlite").path,
            "CHORUS_DATA_DIR": directory.appendingPathComponent("data").path,
        ].merging(environment) { $1 }
        let server = LiveServer(server: try await LoopbackServer.start(environment: variables, options: .testing()), directory: directory)
        do {
            try await body(server)
        } catch {
            await server.server.stop()
            throw error
        }
        await server.server.stop()
    }

    /// A client of this server with its own session store.
    func client(tokenStore: any TokenStore = InMemoryTokenStore()) -> ChorusClient {
        ChorusClient(environment: .custom(baseURL), tokenStore: tokenStore)
    }

    /// A fresh address for a new account.
    static func newEmail(_ prefix: String = "user") -> String {
        "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())@example.com"
    }
}
