import ChorusEmbeddedSandbox
import ChorusServer
import Foundation
import NIOCore
import NIOPosix
import Testing
import Vapor

/// A real Chorus server on a loopback port with the sandbox providers: the one way every test target starts a
/// server (server tests drive it over HTTP, SDK tests through ChorusKit).
public final class LoopbackServer: Sendable {
    public let app: Application
    public let configuration: ChorusConfiguration
    /// What the contract check found in this server's answers (``stop()`` fails the running test on any violation).
    public let contract: ContractCheckRecorder

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(configuration.port)")! }

    private init(app: Application, configuration: ChorusConfiguration, contract: ContractCheckRecorder) {
        self.app = app
        self.configuration = configuration
        self.contract = contract
    }

    /// Settings every test server starts from: a fixed secret, no rate limits, fast simulated calls and jobs, calls at any
    /// hour and without per-number limits.
    public static let baseEnvironment = [
        "CHORUS_JWT_SECRET": "test-secret-test-secret-test-secret-0123456789",
        "CHORUS_NUMBER_HASH_SECRET": "test-number-hash-secret-test-number-hash-0123",
        "CHORUS_RATE_LIMITS": "off",
        "CHORUS_SANDBOX_RING_SECONDS": "0.2",
        "CHORUS_SANDBOX_TALK_SECONDS": "1",
        "CHORUS_JOB_POLL_SECONDS": "0.1",
        "CHORUS_LOG_LEVEL": "warning",
        "CHORUS_TWILIO_CALLS_PER_SECOND": "1000",
        // Tests run at any hour and call the same sandbox numbers many times: the tests of these rules turn them on.
        "CHORUS_CALL_HOURS": "any",
        "CHORUS_CALLS_PER_NUMBER_PER_DAY": "off",
        "CHORUS_ACCOUNTS_PER_NUMBER_PER_WEEK": "off",
        // Calls open without the disclosure (about 8 s of real-time audio each; production servers keep it); the
        // disclosure's tests turn it on.
        "CHORUS_CALL_DISCLOSURE": "off",
    ]

    /// Simulated calls at 1/50 of real time (a `sandboxTimeScale`): a 30 s ring timeout passes in 0.6 s.
    public static let fastCalls = 0.02

    /// Starts a server with `environment` over ``baseEnvironment`` on a free port; its embedded sandbox plays simulated
    /// calls at `sandboxTimeScale` times real time. A port taken between choosing and binding it is retried with another.
    public static func start(environment: [String: String], options: ChorusApp.Options, sandboxTimeScale: Double = 1) async throws -> LoopbackServer {
        for attempt in 1...5 {
            do {
                return try await startOnce(environment: environment, options: options, sandboxTimeScale: sandboxTimeScale)
            } catch let error as IOError where error.errnoCode == EADDRINUSE && attempt < 5 {
                continue
            }
        }
        throw LoopbackServerError.noFreePort
    }

    private static func startOnce(environment: [String: String], options: ChorusApp.Options, sandboxTimeScale: Double) async throws -> LoopbackServer {
        let port = try freePort()
        var variables = baseEnvironment.merging(environment) { $1 }
        // Production refuses calls without the disclosure: a production test server has the built-in one.
        if variables["CHORUS_ENVIRONMENT"]?.lowercased() == "production", variables["CHORUS_CALL_DISCLOSURE"] == "off" {
            variables["CHORUS_CALL_DISCLOSURE"] = nil
        }
        let configuration = try ChorusConfiguration.load(from: variables, hostname: "127.0.0.1", port: port)
        let app = try await Application.make(.testing)
        app.logger.logLevel = .warning
        let contract = ContractCheckRecorder()
        do {
            let embedded = try EmbeddedSandbox.forServer(app, configuration: configuration, clock: options.clock, timeScale: sandboxTimeScale)
            let services = try await ChorusServices.live(app, configuration: configuration, embedded: embedded, options: options)
            try await ChorusApp.configure(app, services: services, options: options)
            // Outermost: every answer, as the client sees it, is checked against openapi.json.
            app.middleware.use(ContractCheckMiddleware(check: try ContractCheck.chorus(), recorder: contract), at: .beginning)
            try await app.asyncBoot()
            try await app.server.start(address: .hostname("127.0.0.1", port: port))
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        return LoopbackServer(app: app, configuration: configuration, contract: contract)
    }

    /// Stops the server; records an issue in the running test for every answer that departed from the contract.
    public func stop() async {
        await ChorusApp.quiesce(app)
        await app.server.shutdown()
        try? await app.asyncShutdown()
        contract.appendToLog()
        let violations = contract.violations
        if !violations.isEmpty {
            Issue.record("\(violations.count) answers departed from openapi.json:\n\(violations.joined(separator: "\n"))")
        }
    }

    private static func freePort() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).wait()
        defer { try? channel.close().wait() }
        guard let port = channel.localAddress?.port else { throw LoopbackServerError.noFreePort }
        return port
    }
}

public enum LoopbackServerError: Error {
    case noFreePort
}

extension ChorusApp.Options {
    /// Fast bcrypt.
    public static func testing(clock: @escaping @Sendable () -> Date = { Date() }) -> ChorusApp.Options {
        var options = ChorusApp.Options()
        options.bcryptCost = 4
        options.clock = clock
        return options
    }
}
