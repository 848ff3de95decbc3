import ArgumentParser
import AsyncHTTPClient
import ChorusAPI
import ChorusEmbeddedSandbox
import ChorusProviders
import ChorusServer
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Vapor

/// An in-process Chorus server for benchmarks: SQLite in a temporary directory (unless `database` is given), sandbox
/// providers, rate limits off, listening on a free loopback port.
struct BenchServer: Sendable {
    let app: Application
    let port: Int
    let directory: URL
    /// The Realtime speech's verbatim counts (chunks, retries, accepted with deviation).
    let speechVerbatim: SpeechVerbatimStatistics

    var base: String { "http://127.0.0.1:\(port)" }

    /// Starts the server; `extra` settings and the environment's `CHORUS_*` variables apply on top of the bench's own
    /// (never its database or data directory).
    static func start(database: String? = nil, extra: [String: String] = [:]) async throws -> BenchServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .error
            return handler
        }
        let port = try freeLoopbackPort()
        let overrides = ProcessInfo.processInfo.environment.filter {
            $0.key.hasPrefix("CHORUS_") && !["CHORUS_DATABASE_URL", "CHORUS_DATA_DIR"].contains($0.key)
        }
        let configuration = try ChorusConfiguration.load(
            from: [
                "CHORUS_DATABASE_URL": database ?? directory.appendingPathComponent("bench.sqlite").path,
                "CHORUS_DATA_DIR": directory.appendingPathComponent("data").path,
                "CHORUS_RATE_LIMITS": "off",
                // Load runs at any hour and calls the same numbers again and again (issue 17's rules would refuse them).
                "CHORUS_CALL_HOURS": "any", "CHORUS_CALLS_PER_NUMBER_PER_DAY": "off", "CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK": "off",
                "CHORUS_LOG_LEVEL": "error",
                "CHORUS_PREMIUM_CALLS": "10000000",
                "CHORUS_SANDBOX_RING_SECONDS": "0.5",
                "CHORUS_SANDBOX_TALK_SECONDS": "2",
            ].merging(extra) { $1 }.merging(overrides) { $1 }, hostname: "127.0.0.1", port: port)
        let app = try await Application.make(.production)
        app.logger.logLevel = .error
        var options = ChorusApp.Options()
        options.bcryptCost = 4
        let speechVerbatim = SpeechVerbatimStatistics()
        options.speechVerbatim = speechVerbatim
        let embedded = try EmbeddedSandbox.forServer(app, configuration: configuration, clock: options.clock)
        let services = try await ChorusServices.live(app, configuration: configuration, embedded: embedded, options: options)
        try await ChorusApp.configure(app, services: services, options: options)
        try await app.asyncBoot()
        try await app.server.start(address: .hostname("127.0.0.1", port: port))
        return BenchServer(app: app, port: port, directory: directory, speechVerbatim: speechVerbatim)
    }

    func stop() async {
        await ChorusApp.quiesce(app)
        await app.server.shutdown()
        try? await app.asyncShutdown()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Sends a JSON request and decodes a 2xx answer.
    func send<T: Decodable>(
        _ client: HTTPClient, _ method: HTTPMethod, _ path: String, json: (any Encodable)? = nil, token: String? = nil
    ) async throws -> T {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(data: try ChorusJSON.makeEncoder().encode(json)))
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 16 << 20)
        guard (200..<300).contains(response.status.code) else {
            throw ValidationError("\(method) \(path) answered \(response.status.code): \(String(buffer: body))")
        }
        return try ChorusJSON.makeDecoder().decode(T.self, from: Data(buffer: body))
    }
}
