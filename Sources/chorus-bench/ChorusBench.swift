import ArgumentParser
import AsyncHTTPClient
import ChorusAPI
import ChorusServer
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Vapor

@main
struct ChorusBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chorus-bench",
        abstract: "Benchmarks for Chorus. Run release builds: swift run -c release chorus-bench api",
        subcommands: [API.self, Bridge.self, Cluster.self, Floor.self, FloorPeer.self, Messages.self, Soak.self, Stories.self]
    )
}

/// Drives usage-stats, check-call-permission and make-call over loopback against an in-process server on SQLite with
/// the sandbox telephony, and prints requests/s and p50/p99 latency per concurrency level.
struct API: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "HTTP API throughput and latency over loopback (SQLite, sandbox providers).")

    @ArgumentParser.Option(help: "Seconds measured per endpoint and concurrency level (after a 1 s warm-up).")
    var seconds: Double = 5

    @ArgumentParser.Option(help: "Comma-separated concurrency levels.")
    var concurrency: String = "1,16,64"

    @ArgumentParser.Option(help: "Endpoints to drive: usage-stats, check-call-permission, make-call.")
    var endpoints: String = "usage-stats,check-call-permission,make-call"

    @ArgumentParser.Option(
        help: "Database URL (default: a fresh SQLite file in a temporary directory). Other CHORUS_* variables apply too."
    )
    var database: String?

    static let knownEndpoints = ["usage-stats", "check-call-permission", "make-call"]

    func validate() throws {
        for endpoint in endpoints.split(separator: ",") where !Self.knownEndpoints.contains(String(endpoint)) {
            throw ValidationError("unknown endpoint '\(endpoint)'; choose from \(Self.knownEndpoints.joined(separator: ", "))")
        }
        guard concurrency.split(separator: ",").allSatisfy({ Int($0).map { $0 > 0 } ?? false }) else {
            throw ValidationError("--concurrency takes positive integers, e.g. 1,16,64")
        }
    }

    func run() async throws {
        let levels = concurrency.split(separator: ",").compactMap { Int($0) }
        let server = try await BenchServer.start(database: database)
        let port = server.port
        // The load generator gets its own event loop so it does not queue behind the server's.
        let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 128)
        let client = HTTPClient(eventLoopGroupProvider: .shared(clientGroup), configuration: clientConfiguration)
        let base = "http://127.0.0.1:\(port)"
        do {
            let maxLevel = levels.max() ?? 1
            print("Preparing \(maxLevel) premium users…")
            var tokens: [String] = []
            for index in 0..<maxLevel {
                tokens.append(try await premiumUser(client, base: base, index: index))
            }
            print("endpoint                 conc    requests     req/s   p50 ms   p99 ms   errors")
            for endpoint in endpoints.split(separator: ",").map(String.init) {
                for level in levels {
                    let result = try await measure(
                        clientGroup, port: port, endpoint: endpoint, tokens: Array(tokens.prefix(level)), seconds: seconds
                    )
                    print(
                        endpoint.padding(toLength: 24, withPad: " ", startingAt: 0)
                            + String(
                                format: "%5d %11d %9.0f %8.2f %8.2f %8d", level, result.count, result.rate, result.p50, result.p99, result.errors)
                    )
                }
            }
        } catch {
            try? await client.shutdown()
            await server.stop()
            throw error
        }
        try await client.shutdown()
        try await clientGroup.shutdownGracefully()
        await server.stop()
    }

    struct Result {
        var count: Int
        var rate: Double
        var p50: Double
        var p99: Double
        var errors: Int
    }

    private func measure(_ group: any EventLoopGroup, port: Int, endpoint: String, tokens: [String], seconds: Double) async throws -> Result {
        let request: @Sendable (Int, Int) -> (HTTPRequestHead, ByteBuffer?) = { client, sequence in
            var head: HTTPRequestHead
            var body: ByteBuffer?
            switch endpoint {
            case "usage-stats":
                head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/mobile/usage-stats")
            case "check-call-permission":
                head = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/mobile/check-call-permission")
            default:  // make-call (names are checked in validate())
                head = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/mobile/make-call")
                head.headers.add(name: "Content-Type", value: "application/json")
                // Exchanges 620-629 of area code 415: valid numbers, none of them a service code (a 555 number would be refused
                // with live telephony).
                let number = "+141562" + String(format: "%05d", (client * 10_000 + sequence) % 100_000)
                body = ByteBuffer(string: #"{"phone_number":"\#(number)","scenario":"default"}"#)
            }
            head.headers.add(name: "Host", value: "127.0.0.1")
            head.headers.add(name: "Authorization", value: "Bearer \(tokens[client])")
            return (head, body)
        }
        // Warm-up, then the measured run.
        _ = try await LoopbackLoad.run(
            host: "127.0.0.1", port: port, clients: tokens.count, group: group, until: .now() + .seconds(1), request: request
        )
        let clock = ContinuousClock()
        let start = clock.now
        let outcome = try await LoopbackLoad.run(
            host: "127.0.0.1", port: port, clients: tokens.count, group: group,
            until: .now() + .milliseconds(Int64(seconds * 1000)), request: request
        )
        let elapsed = clock.now - start
        let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let sorted = outcome.latencies.sorted()
        func percentile(_ p: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.down)))] * 1000
        }
        return Result(
            count: sorted.count, rate: Double(sorted.count) / elapsedSeconds, p50: percentile(0.5), p99: percentile(0.99),
            errors: outcome.errors
        )
    }

    /// Registers a user and buys Premium through the sandbox App Store (the bench raises its allowance).
    private func premiumUser(_ client: HTTPClient, base: String, index: Int) async throws -> String {
        let tokens: TokenResponse = try await post(
            client, base + "/auth/register", json: #"{"email":"bench\#(index)@example.com","password":"benchmark-password"}"#
        )
        let purchase: [String: String] = try await post(
            client, base + "/sandbox/app-store/purchases",
            json: #"{"product_id":"speech_assistant_premium_monthly","kind":"auto_renewable","period_seconds":2592000}"#
        ).compactMapValues { $0 as? String }
        let body = #"{"product_id":"speech_assistant_premium_monthly","signed_transaction":"\#(purchase["signed_transaction"] ?? "")"}"#
        let _: PurchaseResponse = try await post(client, base + "/mobile/purchase-subscription", json: body, token: tokens.accessToken)
        return tokens.accessToken
    }

    private func post<T: Decodable>(_ client: HTTPClient, _ url: String, json: String, token: String? = nil) async throws -> T {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        request.body = .bytes(ByteBuffer(string: json))
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        guard (200..<300).contains(response.status.code) else {
            throw ValidationError("\(url) answered \(response.status.code): \(String(buffer: body))")
        }
        return try ChorusJSON.makeDecoder().decode(T.self, from: Data(buffer: body))
    }

    private func post(_ client: HTTPClient, _ url: String, json: String) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: json))
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]) ?? [:]
    }
}
