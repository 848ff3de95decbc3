import ChorusAPI
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
import WebSocketKit

/// A client of the realtime WebSocket (`GET /ws`) that keeps every event it receives.
final class RealtimeClient: Sendable {
    private let socket: WebSocket
    private let received = NIOLockedValueBox<[RealtimeEventDTO]>([])

    private init(socket: WebSocket) {
        self.socket = socket
    }

    /// Connects to `baseURL`'s `/ws` with the access token in the `Authorization` header (or the query when `viaQuery`).
    static func connect(baseURL: String, token: String, viaQuery: Bool = false) async throws -> RealtimeClient {
        let url = baseURL.replacingOccurrences(of: "http://", with: "ws://") + "/ws" + (viaQuery ? "?access_token=\(token)" : "")
        var headers = HTTPHeaders()
        if !viaQuery { headers.add(name: "Authorization", value: "Bearer \(token)") }
        // The upgrade callback may run after `connect` completes: wait for it.
        let upgraded = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: RealtimeClient.self)
        do {
            try await WebSocket.connect(to: url, headers: headers, on: MultiThreadedEventLoopGroup.singleton) { socket in
                let client = RealtimeClient(socket: socket)
                socket.onText { _, text in
                    if let event = try? ChorusJSON.makeDecoder().decode(RealtimeEventDTO.self, from: Data(text.utf8)) {
                        client.received.withLockedValue { $0.append(event) }
                    }
                }
                upgraded.succeed(client)
            }.get()
        } catch {
            upgraded.fail(error)
            throw error
        }
        let client = try await upgraded.futureResult.get()
        // The server registers the socket right after the upgrade; a ping round trip proves it is registered.
        client.send(#"{"type":"ping"}"#)
        _ = try await client.next { $0.type == "pong" }
        return client
    }

    var events: [RealtimeEventDTO] { received.withLockedValue { $0 } }

    func send(_ text: String) {
        socket.send(text, promise: nil)
    }

    /// The first received event matching `predicate`, waiting up to `timeout`.
    func next(timeout: Duration = .seconds(15), _ predicate: (RealtimeEventDTO) -> Bool) async throws -> RealtimeEventDTO {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if let event = events.first(where: predicate) { return event }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestSetupError(message: "no matching realtime event; received \(events.map(\.type))")
    }

    func close() async {
        try? await socket.close()
    }
}
