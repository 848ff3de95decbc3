import ArgumentParser
import ChorusCore
import ChorusEmbeddedSandbox
import ChorusSandbox
import ChorusServer
import Foundation
import Logging
import NIOCore
import Vapor

/// The `chorus` command line: the server, its migrations, the provider emulators and App Store tools.
@main
struct Chorus: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chorus",
        abstract: "The Chorus server: AI phone calls, voice messages and stories for iOS apps.",
        subcommands: [Serve.self, Migrate.self, AdminCommand.self, SandboxGroup.self, AppStoreCommand.self],
        defaultSubcommand: Serve.self
    )
}

/// `chorus serve` (the default): runs migrations and serves the API.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run migrations and serve the API.",
        discussion: """
            Configuration comes from CHORUS_* environment variables (see docs/configuration.md): \
            \(ChorusConfiguration.documentedKeys.joined(separator: ", ")).
            """
    )

    @ArgumentParser.Option(help: "The address to listen on (default 127.0.0.1, or CHORUS_HOSTNAME).")
    var hostname: String?

    @ArgumentParser.Option(help: "The port to listen on (default 5050, or CHORUS_PORT).")
    var port: Int?

    func validate() throws {
        if let port, !(0...65_535).contains(port) { throw ValidationError("--port must be between 0 and 65535") }
    }

    func run() async throws {
        let configuration = try loadConfiguration(hostname: hostname, port: port)
        let problems = configuration.startupProblems()
        guard problems.isEmpty else {
            for problem in problems { FileHandle.standardError.write(Data("chorus: \(problem)\n".utf8)) }
            throw ExitCode(78)  // EX_CONFIG
        }
        if !configuration.isProduction { try useSandboxSpeech(configuration.sandboxSpeech.rawValue) }
        // Watched from before the start: a stop asked for while migrating is a drain right after the start.
        let signals = StopSignals()
        defer { signals.cancel() }
        let app = try await makeApplication(configuration)
        let outcome: DrainProgress.Outcome
        do {
            // The sandbox under /sandbox outside production; the providers, live or sandbox; then the application.
            let embedded = try EmbeddedSandbox.forServer(app, configuration: configuration)
            let services = try await ChorusServices.live(app, configuration: configuration, embedded: embedded)
            try await ChorusApp.configure(app, services: services)
            do {
                try await app.startup()
            } catch where isAddressInUse(error) {
                throw AddressInUse()
            }
            // Logged once the socket is bound, with the address it really has (port 0 picks one).
            let bound = app.http.server.shared.localAddress
            let address = bound.flatMap { address in address.port.map { "http://\(configuration.hostname):\($0)" } }
            app.logger.notice(
                "Chorus listening",
                metadata: [
                    "address": .string(address ?? "http://\(configuration.hostname):\(configuration.port)"),
                    "public_url": .string(configuration.publicURL.absoluteString), "environment": .string(configuration.environment.rawValue),
                    "database": .string(configuration.database.kind),
                ])
            if !configuration.isProduction {
                if configuration.listensOnLoopbackOnly {
                    app.logger.notice(
                        "development mode: the sandbox under /sandbox answers without authentication, on loopback only (this machine)")
                } else {
                    app.logger.warning(
                        "development mode on a network address (CHORUS_DEVELOPMENT_ON_NETWORK=true): the sandbox under /sandbox answers anyone who reaches this address, without authentication",
                        metadata: ["address": .string(configuration.hostname)])
                }
            }
            app.logger.notice(
                "SIGTERM or SIGINT drains this instance (at most \(ChorusApp.drainMaximum(configuration).components.seconds) s); a second one stops it at once")
            outcome = await Self.serveUntilStopped(app, signals: signals)
        } catch let error as ConfigurationError {
            // Found while starting: a configured model the provider shut down (issue 22's model lifecycle check).
            try? await app.asyncShutdown()
            for problem in error.problems { FileHandle.standardError.write(Data("chorus: \(problem)\n".utf8)) }
            throw ExitCode(78)
        } catch is AddressInUse {
            // One line that says what to do instead of NIO's `bind(...)` error; "listening" was never logged.
            try? await app.asyncShutdown()
            FileHandle.standardError.write(
                Data(
                    ("chorus: port \(configuration.port) on \(configuration.hostname) is already in use: stop what listens there, "
                        + "or choose another port with --port N or CHORUS_PORT=N\n").utf8))
            throw ExitCode(69)  // EX_UNAVAILABLE
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
        // 0 when every call in progress ran to its end; 1 when the drain was cut short (its maximum, a second signal).
        if outcome != .drained { throw ExitCode(1) }
    }

    /// Serves until SIGTERM or SIGINT, then drains (``ChorusApp/drain(_:maximum:)``); a second signal ends the drain at
    /// once. Vapor's own handlers of these signals only end a wait this command does not do.
    static func serveUntilStopped(_ app: Application, signals: StopSignals) async -> DrainProgress.Outcome {
        var drain: Task<DrainProgress.Outcome, Never>?
        for await code in signals.received {
            let name = code == SIGTERM ? "SIGTERM" : "SIGINT"
            if let drain {
                app.logger.warning("\(name) again: stopping at once")
                drain.cancel()
                break
            }
            app.logger.notice("\(name): draining")
            drain = Task {
                let outcome = await ChorusApp.drain(app)
                signals.cancel()
                return outcome
            }
        }
        return await drain?.value ?? .interrupted
    }
}

/// SIGTERM and SIGINT as they arrive, until ``cancel()``. Unchecked: the dispatch sources are set once and only ever
/// cancelled afterwards, which libdispatch allows from any thread.
final class StopSignals: @unchecked Sendable {
    let received: AsyncStream<Int32>
    private let continuation: AsyncStream<Int32>.Continuation
    private let sources: [any DispatchSourceSignal]

    init() {
        let (received, continuation) = AsyncStream<Int32>.makeStream()
        let queue = DispatchQueue(label: "chorus.signals")
        self.received = received
        self.continuation = continuation
        sources = [SIGTERM, SIGINT].map { code in
            #if canImport(Darwin)
            signal(code, SIG_IGN)  // Darwin delivers to the dispatch source only when the default action is off
            #endif
            let source = DispatchSource.makeSignalSource(signal: code, queue: queue)
            source.setEventHandler { continuation.yield(code) }
            source.resume()
            return source
        }
    }

    /// Ends ``received`` and stops watching (the signals' handling returns to what it was, on Linux the default).
    func cancel() {
        continuation.finish()
        for source in sources { source.cancel() }
    }
}

/// `chorus migrate`: runs the database migrations and exits.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the database migrations and exit.")

    func run() async throws {
        let configuration = try loadConfiguration(hostname: nil, port: nil)
        let app = try await makeApplication(configuration)
        do {
            try await ChorusApp.migrate(app, configuration: configuration)
            app.logger.notice("migrations complete", metadata: ["database": .string(configuration.database.kind)])
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
    }
}

/// The configuration from the environment; malformed values are reported one per line and exit 78 (EX_CONFIG).
func loadConfiguration(hostname: String?, port: Int?) throws -> ChorusConfiguration {
    do {
        return try ChorusConfiguration.load(from: ProcessInfo.processInfo.environment, hostname: hostname, port: port)
    } catch let error as ConfigurationError {
        for problem in error.problems { FileHandle.standardError.write(Data("chorus: \(problem)\n".utf8)) }
        throw ExitCode(78)
    }
}

/// The listening socket's address is taken.
struct AddressInUse: Error {}

/// Whether `error` is a listening socket's bind refused because the address is taken (EADDRINUSE).
func isAddressInUse(_ error: any Error) -> Bool {
    (error as? IOError)?.errnoCode == EADDRINUSE
}

/// Makes the sandbox emulators of this process speak as `CHORUS_SANDBOX_SPEECH` (`setting`) asks; `espeak-ng` asked
/// for but not installed is one line naming the setting and exit 78 (EX_CONFIG).
func useSandboxSpeech(_ setting: String?) throws {
    switch SandboxSpeech.Engine.forSetting(setting, path: ProcessInfo.processInfo.environment["PATH"]) {
    case .success(let engine):
        SandboxSpeech.use(engine)
    case .failure(let error):
        FileHandle.standardError.write(Data("chorus: \(error.message)\n".utf8))
        throw ExitCode(78)
    }
}

func makeApplication(_ configuration: ChorusConfiguration) async throws -> Application {
    ChorusLogging.bootstrap(configuration)
    // Vapor's own command line is not used: `serve` with the address from our configuration.
    let environment = Vapor.Environment(name: configuration.environment.rawValue, arguments: ["chorus", "serve"])
    return try await Application.make(environment)
}
