import Foundation
import NIOConcurrencyHelpers
import Vapor

/// Runs ``SandboxServices`` standalone on their own Vapor application, on loopback.
///
/// ```swift
/// let server = SandboxServer(services: services, port: 0)
/// try await server.start()
/// let base = server.baseURL!   // http://127.0.0.1:<ephemeral port>
/// ...
/// try await server.shutdown()
/// ```
public final class SandboxServer: Sendable {
    /// The emulators served.
    public let services: SandboxServices
    /// The address listened on.
    public let host: String
    private let requestedPort: Int
    private let logLevel: Logger.Level
    private let running = NIOLockedValueBox<(application: Application, port: Int)?>(nil)

    /// Creates a server; nothing listens until ``start()``.
    ///
    /// - Parameters:
    ///   - port: The port to listen on; `0` picks a free ephemeral port.
    ///   - logLevel: The Vapor application's log level.
    public init(services: SandboxServices, host: String = "127.0.0.1", port: Int = 0, logLevel: Logger.Level = .notice) {
        self.services = services
        self.host = host
        self.requestedPort = port
        self.logLevel = logLevel
    }

    /// The bound port, once started.
    public var port: Int? {
        running.withLockedValue { $0?.port }
    }

    /// `http://<host>:<port>`, once started.
    public var baseURL: URL? {
        port.flatMap { URL(string: "http://\(host):\($0)") }
    }

    /// Starts listening. Calling it on a running server does nothing.
    public func start() async throws {
        guard running.withLockedValue({ $0 == nil }) else { return }
        var logger = Logger(label: "chorus.sandbox")
        logger.logLevel = logLevel
        let application = try await Application.make(Environment(name: "sandbox", arguments: ["chorus-sandbox"]), logger: logger)
        application.http.server.configuration.hostname = host
        application.http.server.configuration.port = requestedPort
        services.register(on: application.routes)
        do {
            try await application.asyncBoot()
            try await application.server.start(address: .hostname(host, port: requestedPort))
        } catch {
            try? await application.asyncShutdown()
            throw error
        }
        let port = application.http.server.shared.localAddress?.port ?? requestedPort
        running.withLockedValue { $0 = (application, port) }
    }

    /// Stops simulated calls, stops listening and releases the application.
    public func shutdown() async throws {
        guard
            let application = running.withLockedValue({ state -> Application? in
                defer { state = nil }
                return state?.application
            })
        else { return }
        services.shutdown()
        await application.server.shutdown()
        try await application.asyncShutdown()
    }
}
