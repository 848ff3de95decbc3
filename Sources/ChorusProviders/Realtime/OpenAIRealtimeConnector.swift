import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

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
    func connect(model: String, on eventLoop: any EventLoop, onUpgrade: @escaping @Sendable (MediaWebSocket) -> Void) async throws
    /// Connects a transcription session (``RealtimeTranscriptionSession``; the model is chosen by its `session.update`).
    func connectTranscription(on eventLoop: any EventLoop, onUpgrade: @escaping @Sendable (MediaWebSocket) -> Void) async throws
}

extension RealtimeConnector {
    /// Connectors without transcription sessions refuse them.
    public func connectTranscription(on eventLoop: any EventLoop, onUpgrade: @escaping @Sendable (MediaWebSocket) -> Void) async throws {
        throw RealtimeConnectionError.unavailable("this connector opens no transcription sessions")
    }
}

/// The OpenAI Realtime API (GA): `wss://api.openai.com/v1/realtime?model=…` with a bearer key.
///
/// The key is sent only in the `Authorization` header and never logged. `baseURL` is the REST base
/// (`https://api.openai.com/v1`); the WebSocket URL is derived from it, so the sandbox emulator is reached the same way.
/// The connection is a ``MediaWebSocket`` (TLS by swift-nio-ssl for `wss`, one TLS context for all sessions).
public struct OpenAIRealtimeConnector: RealtimeConnector {
    /// The largest message accepted from the model (an audio delta is a few kilobytes; a session event can be larger).
    public static let maxMessageSize = 1 << 24

    private let baseURL: URL
    private let apiKey: String
    private let connectTimeout: TimeAmount
    private let logger: Logger
    private let tlsContext: NIOSSLContext?

    /// `tls` applies to `https` base URLs (`wss` sessions): by default the system's trust roots and full certificate
    /// and host name verification.
    public init(
        baseURL: URL, apiKey: String, connectTimeout: TimeAmount = .seconds(10), tls: TLSConfiguration = .makeClientConfiguration(),
        logger: Logger
    ) throws {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.connectTimeout = connectTimeout
        self.logger = logger
        self.tlsContext = baseURL.scheme == "https" ? try NIOSSLContext(configuration: tls) : nil
    }

    /// The WebSocket URL of a session for `model`.
    public func url(model: String) -> URL {
        url(query: URLQueryItem(name: "model", value: model))
    }

    /// The WebSocket URL of a transcription session (`?intent=transcription`, no model: a model in the URL makes a
    /// conversation session, which refuses the transcription `session.update`).
    public var transcriptionURL: URL { url(query: URLQueryItem(name: "intent", value: "transcription")) }

    private func url(query: URLQueryItem) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        components.scheme = components.scheme == "http" ? "ws" : "wss"
        components.path = (components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path) + "/realtime"
        components.queryItems = [query]
        return components.url!
    }

    public func connect(model: String, on eventLoop: any EventLoop, onUpgrade: @escaping @Sendable (MediaWebSocket) -> Void) async throws {
        try await connect(url: url(model: model), label: model, on: eventLoop, onUpgrade: onUpgrade)
    }

    public func connectTranscription(on eventLoop: any EventLoop, onUpgrade: @escaping @Sendable (MediaWebSocket) -> Void) async throws {
        try await connect(url: transcriptionURL, label: "transcription", on: eventLoop, onUpgrade: onUpgrade)
    }

    private func connect(
        url: URL, label model: String, on eventLoop: any EventLoop, onUpgrade: @escaping @Sendable (MediaWebSocket) -> Void
    ) async throws {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        guard let host = components.host, !host.isEmpty else { throw RealtimeConnectionError.unavailable("no host in \(url)") }
        let secure = components.scheme == "wss"
        let port = components.port ?? (secure ? 443 : 80)
        let target =
            (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
            + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: port == (secure ? 443 : 80) ? host : "\(host):\(port)")
        headers.add(name: "Authorization", value: "Bearer \(apiKey)")
        headers.add(name: "Content-Length", value: "0")
        let requestHeaders = headers
        let tlsContext = secure ? tlsContext : nil
        if secure, tlsContext == nil { throw RealtimeConnectionError.unavailable("a wss session needs an https base URL") }

        let outcome = ConnectOutcome(promise: eventLoop.makePromise(of: Void.self))
        let deadline = eventLoop.scheduleTask(in: connectTimeout) { outcome.fail(RealtimeConnectionError.timedOut) }
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                do {
                    if let tlsContext {
                        let tls: NIOSSLClientHandler
                        do {
                            tls = try NIOSSLClientHandler(context: tlsContext, serverHostname: host)
                        } catch let error as NIOSSLExtraError where error == .cannotUseIPAddressInSNI {
                            tls = try NIOSSLClientHandler(context: tlsContext, serverHostname: nil)
                        }
                        try channel.pipeline.syncOperations.addHandler(tls)
                    }
                    let request = NIOLoopBound(
                        UpgradeRequestHandler(target: target, headers: requestHeaders, outcome: outcome), eventLoop: channel.eventLoop)
                    let upgrader = NIOWebSocketClientUpgrader(maxFrameSize: Self.maxMessageSize, automaticErrorHandling: false) { channel, _ in
                        // A session that connects after the deadline is closed at once.
                        guard !outcome.isCompleted else { return channel.close() }
                        do {
                            let socket = try MediaWebSocket.install(on: channel, role: .client, maxMessageSize: Self.maxMessageSize)
                            onUpgrade(socket)
                            outcome.succeed()
                            return channel.eventLoop.makeSucceededVoidFuture()
                        } catch {
                            outcome.fail(RealtimeConnectionError.unavailable(String(describing: error)))
                            return channel.close()
                        }
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(
                        leftOverBytesStrategy: .forwardBytes,
                        withClientUpgrade: (
                            upgraders: [upgrader],
                            completionHandler: { context in context.pipeline.syncOperations.removeHandler(request.value, promise: nil) }
                        ))
                    try channel.pipeline.syncOperations.addHandler(request.value)
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
        bootstrap.connect(host: host, port: port).whenComplete { result in
            switch result {
            case .success(let channel):
                // Closed before the upgrade (refused, timed out): the connection goes.
                outcome.promise.futureResult.whenFailure { _ in channel.close(promise: nil) }
            case .failure(let error):
                outcome.fail(RealtimeConnectionError.unavailable(String(describing: error)))
            }
        }
        do {
            try await outcome.promise.futureResult.get()
            deadline.cancel()
        } catch {
            deadline.cancel()
            logger.warning(
                "openai.realtime.connect failed",
                metadata: ["model": .string(model), "host": .string(host), "error": .string("\(error)")])
            throw error
        }
    }
}

/// The result of one connection attempt, completed once (by the upgrade, a refusal, a failure or the deadline).
private final class ConnectOutcome: Sendable {
    let promise: EventLoopPromise<Void>
    private let completed = NIOLockedValueBox(false)

    init(promise: EventLoopPromise<Void>) {
        self.promise = promise
    }

    var isCompleted: Bool { completed.withLockedValue { $0 } }

    func succeed() {
        if complete() { promise.succeed(()) }
    }

    func fail(_ error: any Error) {
        if complete() { promise.fail(error) }
    }

    private func complete() -> Bool {
        completed.withLockedValue { done in
            defer { done = true }
            return !done
        }
    }
}

/// Sends the WebSocket upgrade request (the upgrader adds its own headers) and fails the attempt on any other answer.
private final class UpgradeRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let target: String
    private let headers: HTTPHeaders
    private let outcome: ConnectOutcome

    init(target: String, headers: HTTPHeaders, outcome: ConnectOutcome) {
        self.target = target
        self.headers = headers
        self.outcome = outcome
    }

    func channelActive(context: ChannelHandlerContext) {
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: target, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) {
            outcome.fail(RealtimeConnectionError.unavailable("the server answered \(head.status.code) instead of switching protocols"))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        outcome.fail(RealtimeConnectionError.unavailable("the connection closed before the upgrade"))
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        outcome.fail(RealtimeConnectionError.unavailable(String(describing: error)))
        context.close(promise: nil)
    }
}
