import ChorusProviders
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// One open OpenAI Realtime session, configured for a call (the `session.update` is sent as soon as it connects).
///
/// A session can be opened while the phone rings, before anyone consumes its events: until a bridge attaches, the
/// events it receives are kept (there are only a few: `session.created`, `session.updated`, maybe an `error`).
final class RealtimeSession: @unchecked Sendable {
    private struct State {
        var socket: MediaWebSocket?
        var onText: (@Sendable (ByteBuffer) -> Void)?
        var onClose: (@Sendable () -> Void)?
        var backlog: [ByteBuffer] = []
        var closed = false
    }

    private let state = NIOLockedValueBox(State())

    /// The session it was opened with (`session.update`).
    let configuration: RealtimeSessionConfiguration

    private init(configuration: RealtimeSessionConfiguration) {
        self.configuration = configuration
    }

    /// The provider name of realtime exchanges in the provider health.
    static let provider = "openai_realtime"

    /// Connects and configures a session; `observer` is told how the connection went (operation `connect`).
    static func open(
        connector: any RealtimeConnector, session: RealtimeSessionConfiguration, on eventLoop: any EventLoop,
        observer: (any ProviderCallObserver)?
    ) async throws -> RealtimeSession {
        let realtime = RealtimeSession(configuration: session)
        let started = ContinuousClock.now
        do {
            try await connector.connect(model: session.model, on: eventLoop) { socket in
                realtime.state.withLockedValue { $0.socket = socket }
                socket.onText { text in realtime.received(text) }
                socket.onClose.whenComplete { _ in realtime.socketClosed() }
                socket.send(ByteBuffer(string: RealtimeClientEvent.sessionUpdate(session)))
            }
        } catch {
            observer?.providerCall(provider: provider, operation: "connect", failure: "connect_failed", duration: ContinuousClock.now - started)
            throw error
        }
        observer?.providerCall(provider: provider, operation: "connect", failure: nil, duration: ContinuousClock.now - started)
        return realtime
    }

    /// Delivers the session's events to `onText` from now on (the kept ones first) and its end to `onClose`.
    func attach(onText: @escaping @Sendable (ByteBuffer) -> Void, onClose: @escaping @Sendable () -> Void) {
        let (backlog, closed) = state.withLockedValue { state -> ([ByteBuffer], Bool) in
            state.onText = onText
            state.onClose = onClose
            defer { state.backlog = [] }
            return (state.backlog, state.closed)
        }
        for text in backlog { onText(text) }
        if closed { onClose() }
    }

    private func received(_ text: ByteBuffer) {
        let consumer = state.withLockedValue { state -> (@Sendable (ByteBuffer) -> Void)? in
            guard let consumer = state.onText else {
                // A copy: the message is a slice of the socket's read buffer.
                if state.backlog.count < 64 { state.backlog.append(ByteBuffer(buffer: text)) }
                return nil
            }
            return consumer
        }
        consumer?(text)
    }

    private func socketClosed() {
        let consumer = state.withLockedValue { state -> (@Sendable () -> Void)? in
            state.closed = true
            return state.onClose
        }
        consumer?()
    }

    /// Sends a text event.
    func send(_ text: String) {
        guard let socket = state.withLockedValue({ $0.socket }) else { return }
        socket.send(ByteBuffer(string: text))
    }

    /// Sends a prepared text frame.
    func send(frame: ByteBuffer) {
        guard let socket = state.withLockedValue({ $0.socket }) else { return }
        socket.send(frame)
    }

    /// Whether the socket has closed.
    var isClosed: Bool { state.withLockedValue { $0.closed || ($0.socket?.isClosed ?? false) } }

    /// Closes the socket (a normal closure); the session's close handler runs when it is done.
    func close() {
        guard let socket = state.withLockedValue({ $0.socket }) else { return }
        socket.close(code: .normalClosure)
    }
}
