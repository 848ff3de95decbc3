import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import WebSocketKit

/// Why a realtime session could not be opened.
public enum RealtimeConnectionError: Error, Sendable, Equatable {
    /// The WebSocket handshake failed or was refused (bad key, unknown model, server down).
    case unavailable(String)
    /// No answer within the connect timeout.
    case timedOut
}

/// Opens sessions with a realtime voice model over WebSocket.
public protocol RealtimeConnector: Sendable {
    /// Connects a session for `model` on `eventLoop`; `onUpgrade` runs on that loop before any message is delivered,
    /// so it can install the socket's handlers.
    func connect(model: String, on eventLoop: any EventLoop, onUpgrade: @escaping @Sendable (WebSocket) -> Void) async throws
}

/// The OpenAI Realtime API (GA): `wss://api.openai.com/v1/realtime?model=…` with a bearer key.
///
/// The key is sent only in the `Authorization` header and never logged. `baseURL` is the REST base
/// (`https://api.openai.com/v1`); the WebSocket URL is derived from it, so the sandbox emulator is reached the same way.
public struct OpenAIRealtimeConnector: RealtimeConnector {
    private let baseURL: URL
    private let apiKey: String
    private let connectTimeout: TimeAmount
    private let logger: Logger

    public init(baseURL: URL, apiKey: String, connectTimeout: TimeAmount = .seconds(10), logger: Logger) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.connectTimeout = connectTimeout
        self.logger = logger
    }

    /// The WebSocket URL of a session for `model`.
    public func url(model: String) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        components.scheme = components.scheme == "http" ? "ws" : "wss"
        components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path) + "/realtime"
        components.queryItems = [URLQueryItem(name: "model", value: model)]
        return components.url!
    }

    public func connect(model: String, on eventLoop: any EventLoop, onUpgrade: @escaping @Sendable (WebSocket) -> Void) async throws {
        let url = url(model: model)
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Bearer \(apiKey)")
        let configuration = WebSocketClient.Configuration(maxFrameSize: 1 << 24)
        // Once the deadline has passed, a socket that still connects is closed at once.
        let expired = NIOLockedValueBox(false)
        let connection = WebSocket.connect(
            to: url, headers: headers, configuration: configuration, on: eventLoop
        ) { socket in
            if expired.withLockedValue({ $0 }) {
                _ = socket.close(code: .goingAway)
                return
            }
            onUpgrade(socket)
        }
        let promise = eventLoop.makePromise(of: Void.self)
        let deadline = eventLoop.scheduleTask(in: connectTimeout) {
            expired.withLockedValue { $0 = true }
            promise.fail(RealtimeConnectionError.timedOut)
        }
        connection.whenComplete { result in
            deadline.cancel()
            switch result {
            case .success: promise.succeed(())
            case .failure(let error): promise.fail(RealtimeConnectionError.unavailable(String(describing: error)))
            }
        }
        do {
            try await promise.futureResult.get()
        } catch {
            logger.warning(
                "openai.realtime.connect failed",
                metadata: ["model": .string(model), "host": .string(url.host ?? ""), "error": .string("\(error)")])
            throw error
        }
    }
}
