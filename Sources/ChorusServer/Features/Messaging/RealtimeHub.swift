import ChorusAPI
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket
import Vapor

/// The realtime WebSocket connections (and server-sent event listeners) of this instance, by user, and delivery of
/// events to them.
///
/// Events are encoded once per publication and written to every connection of every recipient. Delivery across
/// instances goes through ``RealtimeFanout`` (PostgreSQL `NOTIFY`), which calls ``deliver(_:to:)`` on each instance.
///
/// The hub also keeps the caps of ``ChorusConfiguration/ConnectionLimits``: WebSockets and event streams per user and
/// both together on this instance (``admit(_:userID:)``), and a bounded send queue per socket (``SocketOutbox``).
final class RealtimeHub: Sendable {
    private struct Connection: Sendable {
        let id: UUID
        let outbox: SocketOutbox
    }

    private let connections = NIOLockedValueBox<[String: [Connection]]>([:])
    let limits: ChorusConfiguration.ConnectionLimits

    init(limits: ChorusConfiguration.ConnectionLimits = .standard) {
        self.limits = limits
    }

    // MARK: Caps

    /// A long-lived connection the caps count.
    enum ConnectionKind: Sendable {
        case webSocket
        case eventStream
    }

    /// Why a connection is refused: 429 for the user's own cap, 503 for the instance's.
    enum Refusal: Error, Equatable {
        case userLimit(ConnectionKind, limit: Int)
        case instanceLimit(Int)

        var apiError: APIError {
            switch self {
            case .userLimit(.webSocket, let limit):
                .detail(.tooManyRequests, "Too many open realtime connections: at most \(limit) WebSockets per user; close one first")
            case .userLimit(.eventStream, let limit):
                .detail(.tooManyRequests, "Too many open event streams: at most \(limit) per user; close one first")
            case .instanceLimit:
                .unavailable(retryAfter: 5, detail: "This server has too many open connections; please retry shortly")
            }
        }
    }

    private struct Accounting {
        var total = 0
        var byUser: [String: (webSockets: Int, eventStreams: Int)] = [:]
    }

    private let accounting = NIOLockedValueBox(Accounting())

    /// Why a new connection of `userID` would be refused now (checked before a WebSocket upgrade, so the client gets a
    /// plain HTTP answer), or `nil`.
    func refusal(for kind: ConnectionKind, userID: String) -> Refusal? {
        accounting.withLockedValue { Self.refusal(for: kind, userID: userID, in: $0, limits: limits) }
    }

    /// Counts a new connection of `userID`, or throws when a cap is reached. Every admission is followed by exactly one
    /// ``release(_:userID:)``.
    func admit(_ kind: ConnectionKind, userID: String) throws(Refusal) {
        let refusal = accounting.withLockedValue { state -> Refusal? in
            if let refusal = Self.refusal(for: kind, userID: userID, in: state, limits: limits) { return refusal }
            state.total += 1
            switch kind {
            case .webSocket: state.byUser[userID, default: (0, 0)].webSockets += 1
            case .eventStream: state.byUser[userID, default: (0, 0)].eventStreams += 1
            }
            return nil
        }
        if let refusal { throw refusal }
    }

    func release(_ kind: ConnectionKind, userID: String) {
        accounting.withLockedValue { state in
            state.total -= 1
            guard var counts = state.byUser[userID] else { return }
            switch kind {
            case .webSocket: counts.webSockets -= 1
            case .eventStream: counts.eventStreams -= 1
            }
            state.byUser[userID] = counts.webSockets <= 0 && counts.eventStreams <= 0 ? nil : counts
        }
    }

    /// Long-lived connections counted on this instance (WebSockets and event streams).
    var admittedCount: Int { accounting.withLockedValue { $0.total } }

    /// The WebSockets and event streams open on this instance (`/metrics`).
    var openCounts: (webSockets: Int, eventStreams: Int) {
        accounting.withLockedValue { state in
            state.byUser.values.reduce((0, 0)) { ($0.0 + max(0, $1.webSockets), $0.1 + max(0, $1.eventStreams)) }
        }
    }

    private static func refusal(
        for kind: ConnectionKind, userID: String, in state: Accounting, limits: ChorusConfiguration.ConnectionLimits
    ) -> Refusal? {
        guard state.total < limits.perInstance else { return .instanceLimit(limits.perInstance) }
        let counts = state.byUser[userID] ?? (0, 0)
        switch kind {
        case .webSocket where counts.webSockets >= limits.webSocketsPerUser: return .userLimit(.webSocket, limit: limits.webSocketsPerUser)
        case .eventStream where counts.eventStreams >= limits.eventStreamsPerUser:
            return .userLimit(.eventStream, limit: limits.eventStreamsPerUser)
        default: return nil
        }
    }

    /// Other consumers of a user's events on this instance (server-sent event streams), by user.
    private struct Listener: Sendable {
        let id: UUID
        let receive: @Sendable (String) -> Void
        let close: @Sendable () -> Void
    }

    private let listeners = NIOLockedValueBox<[String: [Listener]]>([:])

    /// Calls `receive` with every event (encoded) delivered to `userID` on this instance until ``stopListening(_:userID:)``;
    /// `close` when the server shuts down.
    func listen(userID: String, _ receive: @escaping @Sendable (String) -> Void, close: @escaping @Sendable () -> Void) -> UUID {
        let id = UUID()
        listeners.withLockedValue { $0[userID, default: []].append(Listener(id: id, receive: receive, close: close)) }
        return id
    }

    func stopListening(_ id: UUID, userID: String) {
        listeners.withLockedValue { all in
            all[userID]?.removeAll { $0.id == id }
            if all[userID]?.isEmpty ?? false { all[userID] = nil }
        }
    }

    /// Registers a socket of `userID` within the caps (``admit(_:userID:)``); returns its id, its outbox (replies to the
    /// client go through it too) and whether it is the user's first connection here. A refused socket is not
    /// registered: the caller closes it.
    func add(_ socket: WebSocket, userID: String) throws(Refusal) -> (id: UUID, outbox: SocketOutbox, first: Bool) {
        try admit(.webSocket, userID: userID)
        let id = UUID()
        let outbox = SocketOutbox(socket: socket, limit: limits.sendQueueBytes)
        let first = connections.withLockedValue { all in
            let first = all[userID]?.isEmpty ?? true
            all[userID, default: []].append(Connection(id: id, outbox: outbox))
            return first
        }
        return (id, outbox, first)
    }

    /// Removes a socket ``add(_:userID:)`` registered; returns whether it was the user's last connection here.
    func remove(_ id: UUID, userID: String) -> Bool {
        let (removed, last) = connections.withLockedValue { all -> (Bool, Bool) in
            let before = all[userID]?.count ?? 0
            all[userID]?.removeAll { $0.id == id }
            let removed = (all[userID]?.count ?? 0) < before
            if all[userID]?.isEmpty ?? false {
                all[userID] = nil
                return (removed, true)
            }
            return (removed, false)
        }
        if removed { release(.webSocket, userID: userID) }
        return removed && last
    }

    /// Whether the user has a connection on this instance.
    func isConnected(_ userID: String) -> Bool {
        connections.withLockedValue { $0[userID]?.isEmpty == false }
    }

    /// The number of open connections (for the console and benchmarks).
    var connectionCount: Int {
        connections.withLockedValue { $0.values.reduce(0) { $0 + $1.count } }
    }

    /// Writes the encoded event to every local connection of the recipients.
    func deliver(_ text: String, to userIDs: [String]) {
        for listener in listeners.withLockedValue({ all in userIDs.flatMap { all[$0] ?? [] } }) { listener.receive(text) }
        let outboxes = connections.withLockedValue { all in userIDs.flatMap { all[$0] ?? [] }.map(\.outbox) }
        for outbox in outboxes { outbox.send(text) }
    }

    /// Closes every connection and ends every listener (server shutdown).
    func closeAll() async {
        let closing = listeners.withLockedValue { all -> [Listener] in
            defer { all = [:] }
            return all.values.flatMap { $0 }
        }
        for listener in closing { listener.close() }
        let sockets = connections.withLockedValue { all -> [WebSocket] in
            defer { all = [:] }
            return all.values.flatMap { $0.map(\.outbox.socket) }
        }
        for socket in sockets { try? await socket.close(code: .goingAway) }
    }

    static func encode(_ event: RealtimeEventDTO) -> String {
        let data = (try? encoder.encode(event)) ?? Data(#"{"type":"error","detail":"unencodable event"}"#.utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private static let encoder = ChorusJSON.makeEncoder()
}

/// What the server has written to one WebSocket and its client has not taken yet, bounded: a client that stops reading
/// (or reads slower than its events arrive) is closed with 1013 ("try again later": reconnect and catch up with
/// `GET /conversations/{id}/messages`) instead of being buffered without end. Every socket is pinged every
/// ``pingInterval``; one that answers no ping — a dead peer, or one too stuck to take the close frame — is cut.
final class SocketOutbox: Sendable {
    /// The close code for a client that does not keep up.
    static let slowConsumerCloseCode: WebSocketErrorCode = .unknown(1013)
    static let pingInterval: TimeAmount = .seconds(20)

    let socket: WebSocket
    let limit: Int
    /// Bytes handed to the socket whose writes have not completed.
    private let pending = NIOLockedValueBox(0)

    init(socket: WebSocket, limit: Int) {
        self.socket = socket
        self.limit = limit
        socket.pingInterval = Self.pingInterval
    }

    /// Writes `text`, or closes the socket with ``slowConsumerCloseCode`` when that would exceed ``limit``.
    func send(_ text: String) {
        guard !socket.isClosed else { return }
        let size = text.utf8.count
        let accepted = pending.withLockedValue { pending in
            guard pending == 0 || pending + size <= limit else { return false }  // one message larger than the limit still goes
            pending += size
            return true
        }
        guard accepted else {
            socket.close(code: Self.slowConsumerCloseCode, promise: nil)
            return
        }
        let written = socket.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenComplete { [pending] _ in pending.withLockedValue { $0 -= size } }
        socket.send(text, promise: written)
    }
}

/// Counts the messages a client sends over one WebSocket in fixed windows; a client over the limit has its socket
/// closed with 1008 (policy violation) and its further messages ignored.
final class InboundMessageRate: Sendable {
    private struct Window {
        var start: ContinuousClock.Instant
        var count = 0
    }

    private let limit: ChorusConfiguration.RateLimit
    private let window: NIOLockedValueBox<Window>

    init(limit: ChorusConfiguration.RateLimit) {
        self.limit = limit
        self.window = NIOLockedValueBox(Window(start: .now))
    }

    /// Counts one message; `false` (and the socket closed) when it is over the limit.
    func admit(_ socket: WebSocket) -> Bool {
        let now = ContinuousClock.now
        let allowed = window.withLockedValue { window in
            if now - window.start >= .milliseconds(Int64((limit.window * 1000).rounded())) { window = Window(start: now) }
            window.count += 1
            return window.count <= limit.limit
        }
        if !allowed { socket.close(code: .policyViolation, promise: nil) }
        return allowed
    }
}

/// Publishes realtime events to users wherever they are connected.
protocol RealtimeFanout: Sendable {
    func publish(_ event: RealtimeEventDTO, to userIDs: [String]) async
}

/// One instance (SQLite): delivery is local.
struct LocalFanout: RealtimeFanout {
    let hub: RealtimeHub

    func publish(_ event: RealtimeEventDTO, to userIDs: [String]) async {
        hub.deliver(RealtimeHub.encode(event), to: userIDs)
    }
}
