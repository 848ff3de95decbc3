import ChorusAPI
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Vapor

/// The realtime WebSocket connections (and server-sent event listeners) of this instance, by user, and delivery of
/// events to them.
///
/// Events are encoded once per publication and written to every connection of every recipient. Delivery across
/// instances goes through ``RealtimeFanout`` (PostgreSQL `NOTIFY`), which calls ``deliver(_:to:)`` on each instance.
final class RealtimeHub: Sendable {
    private struct Connection: Sendable {
        let id: UUID
        let socket: WebSocket
    }

    private let connections = NIOLockedValueBox<[String: [Connection]]>([:])

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

    /// Registers a socket of `userID`; returns its id and whether it is the user's first connection here.
    func add(_ socket: WebSocket, userID: String) -> (id: UUID, first: Bool) {
        let id = UUID()
        let first = connections.withLockedValue { all in
            let first = all[userID]?.isEmpty ?? true
            all[userID, default: []].append(Connection(id: id, socket: socket))
            return first
        }
        return (id, first)
    }

    /// Removes a socket; returns whether it was the user's last connection here.
    func remove(_ id: UUID, userID: String) -> Bool {
        connections.withLockedValue { all in
            all[userID]?.removeAll { $0.id == id }
            if all[userID]?.isEmpty ?? false {
                all[userID] = nil
                return true
            }
            return false
        }
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
        let sockets = connections.withLockedValue { all in userIDs.flatMap { all[$0] ?? [] }.map(\.socket) }
        guard !sockets.isEmpty else { return }
        for socket in sockets where !socket.isClosed {
            socket.send(text, promise: nil)
        }
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
            return all.values.flatMap { $0.map(\.socket) }
        }
        for socket in sockets { try? await socket.close(code: .goingAway) }
    }

    static func encode(_ event: RealtimeEventDTO) -> String {
        let data = (try? encoder.encode(event)) ?? Data(#"{"type":"error","detail":"unencodable event"}"#.utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private static let encoder = ChorusJSON.makeEncoder()
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
