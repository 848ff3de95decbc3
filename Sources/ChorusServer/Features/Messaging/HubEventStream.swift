import ChorusAPI
import Foundation
import NIOConcurrencyHelpers
import Vapor

/// A server-sent event stream fed by the events the ``RealtimeHub`` delivers to one key (a user id, or a console
/// channel) on this instance — every instance's events arrive through the ``RealtimeFanout``.
///
/// Listening starts when the stream is created, so a snapshot read afterwards misses no change. A comment line every
/// 15 s keeps proxies from closing an idle stream (and notices a client that went away); the listener is removed
/// when the response ends, and the stream ends when the server shuts down.
///
/// A user's streams count against the hub's caps (``listening(hub:key:then:)`` refuses with 429 or 503), and events
/// wait in a bounded buffer of ``bufferedEvents``: a client that reads slower than its events arrive has its stream
/// ended (it reconnects and gets a fresh snapshot) rather than silently missing events.
final class HubEventStream: Sendable {
    /// Encoded events as the hub delivers them; an empty string is a keep-alive tick, ``recheck`` a requested wake-up.
    let events: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    private let hub: RealtimeHub
    private let key: String
    private let listener: UUID
    /// The user the stream was admitted for (``RealtimeHub/admit(_:userID:)``), released once when the stream ends.
    private let admitted: NIOLockedValueBox<String?>

    /// The value ``wake(after:)`` yields.
    static let recheck = "\u{0}recheck"
    /// Events waiting for a slow client before its stream is ended.
    static let bufferedEvents = 512

    /// A stream of `key`'s events; `admittedUserID` names the user a cap admission was taken for, if any.
    init(hub: RealtimeHub, key: String, admittedUserID: String? = nil) {
        let (events, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(Self.bufferedEvents))
        self.events = events
        self.continuation = continuation
        self.hub = hub
        self.key = key
        self.admitted = NIOLockedValueBox(admittedUserID)
        self.listener = hub.listen(
            userID: key,
            {
                if case .dropped = continuation.yield($0) { continuation.finish() }
            }, close: { continuation.finish() })
    }

    /// Starts listening to `key` (a user's own events: the user's cap of event streams applies), then reads the
    /// snapshot with `load` — so no change between the snapshot and the first event is missed — and stops listening
    /// if `load` throws.
    /// - Throws: 429 when the user has ``ChorusConfiguration/ConnectionLimits/eventStreamsPerUser`` streams open on
    ///   this instance, 503 when the instance has its maximum of connections.
    static func listening<Snapshot: Sendable>(
        hub: RealtimeHub, key: String, then load: () async throws -> Snapshot
    ) async throws -> (HubEventStream, Snapshot) {
        do {
            try hub.admit(.eventStream, userID: key)
        } catch {
            throw error.apiError
        }
        let stream = HubEventStream(hub: hub, key: key, admittedUserID: key)
        do {
            return (stream, try await load())
        } catch {
            stream.cancel()
            throw error
        }
    }

    /// Stops listening; the event sequence ends.
    func cancel() {
        hub.stopListening(listener, userID: key)
        continuation.finish()
        let admitted = admitted.withLockedValue { admitted -> String? in
            defer { admitted = nil }
            return admitted
        }
        if let admitted { hub.release(.eventStream, userID: admitted) }
    }

    /// Yields ``recheck`` after `delay` (to re-read state that may change without an event).
    func wake(after delay: Duration) {
        let continuation = continuation
        Task {
            try? await Task.sleep(for: delay)
            continuation.yield(Self.recheck)
        }
    }

    /// A `text/event-stream` response whose events `body` writes; the stream ends when `body` returns or throws.
    func response(_ body: @escaping @Sendable (ServerSentEventWriter) async throws -> Void) -> Response {
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "text/event-stream; charset=utf-8")
        headers.replaceOrAdd(name: .cacheControl, value: "no-cache")
        headers.replaceOrAdd(name: "X-Accel-Buffering", value: "no")
        let continuation = continuation
        return Response(
            status: .ok, headers: headers,
            body: .init(asyncStream: { writer in
                let keepAlive = Task {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .seconds(15))
                        continuation.yield("")
                    }
                }
                defer {
                    keepAlive.cancel()
                    self.cancel()
                }
                do {
                    try await body(ServerSentEventWriter(writer: writer))
                    try await writer.write(.end)
                } catch {
                    try? await writer.write(.end)
                }
            }))
    }
}

/// Writes server-sent events: `event: <name>` and one line of JSON.
struct ServerSentEventWriter: Sendable {
    let writer: any AsyncBodyStreamWriter

    private static let encoder = ChorusJSON.makeEncoder()

    func send(_ name: String, _ value: some Encodable) async throws {
        let data = (try? Self.encoder.encode(value)) ?? Data("{}".utf8)
        try await writer.write(.buffer(ByteBuffer(string: "event: \(name)\ndata: " + String(decoding: data, as: UTF8.self) + "\n\n")))
    }

    func keepAlive() async throws {
        try await writer.write(.buffer(ByteBuffer(string: ": keep-alive\n\n")))
    }
}
