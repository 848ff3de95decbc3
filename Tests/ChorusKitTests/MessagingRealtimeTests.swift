import ChorusKit
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
import WebSocketKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The realtime connection (`GET /ws`) through the SDK against a real server: messages, typing and presence arrive as
/// ``MessagingEvent``s; a refused access token is renewed; no session means ``ChorusError/signedOut``.
///
/// The WebSockets are opened by ``WebSocketKitTransport`` (SwiftNIO), as `URLSessionWebSocketTask` needs a libcurl
/// with WebSocket support that Linux distributions do not all ship (Debian 12's 7.88 has none); the last test runs
/// the `URLSession` path wherever it is supported.
@Suite("ChorusKit realtime events (live server)")
struct MessagingRealtimeTests {
    @Test("bob receives alice's message, edit and deletion, her typing and her presence, in order")
    func events() async throws {
        try await LiveServer.run { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice", transport: WebSocketKitTransport())
            let bob = try await MessagingPerson.register(on: server, name: "Bob", transport: WebSocketKitTransport())
            let direct = try await alice.directConversation(with: bob)

            let bobConnection = try await bob.chorus.voice.connect()
            defer { bobConnection.close() }
            let bobInbox = EventInbox(bobConnection.events)

            // Alice comes online: Bob is told.
            let aliceConnection = try await alice.chorus.voice.connect()
            defer { aliceConnection.close() }
            _ = try await bobInbox.next { $0 == .presence(userID: alice.userID, online: true) }

            try await aliceConnection.sendTyping(in: direct.id)
            _ = try await bobInbox.next { $0 == .typing(conversationID: direct.id, userID: alice.userID) }

            let sent = try await alice.chorus.messages.send(text: "Dinner at seven?", to: direct.id)
            let created = try await bobInbox.next {
                if case .messageCreated = $0 { return true }
                return false
            }
            guard case .messageCreated(let message) = created else {
                Issue.record("expected messageCreated, got \(created)")
                return
            }
            #expect(message.id == sent.id && message.content == "Dinner at seven?" && message.senderID == alice.userID)

            try await alice.chorus.messages.edit(sent.id, content: "Dinner at eight?")
            _ = try await bobInbox.next {
                if case .messageUpdated(let message) = $0 { return message.id == sent.id && message.content == "Dinner at eight?" }
                return false
            }

            try await alice.chorus.messages.delete(sent.id)
            _ = try await bobInbox.next {
                if case .messageDeleted(let message) = $0 { return message.id == sent.id && message.isDeleted && message.content == nil }
                return false
            }

            // Typing in a conversation Alice is not in: the server says so on her connection.
            let aliceInbox = EventInbox(aliceConnection.events)
            try await aliceConnection.sendTyping(in: "no-such-conversation")
            _ = try await aliceInbox.next {
                if case .error(let detail) = $0 { return detail == "Conversation not found" }
                return false
            }

            // Alice goes offline: Bob is told.
            aliceConnection.close()
            _ = try await bobInbox.next { $0 == .presence(userID: alice.userID, online: false) }
        }
    }

    @Test("events() connects lazily; a refused access token is renewed once; no session is signedOut")
    func eventsStreamAndSession() async throws {
        try await LiveServer.run { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice")
            let bob = try await MessagingPerson.register(on: server, name: "Bob", transport: WebSocketKitTransport())
            let direct = try await alice.directConversation(with: bob)

            // Bob's access token is refused (as an expired one is): the connection renews the session.
            let issued = try #require(await bob.tokenStore.load())
            await bob.tokenStore.save(StoredTokens(accessToken: issued.accessToken + "x", refreshToken: issued.refreshToken))
            let connection = try await bob.chorus.voice.connect()
            let renewed = try #require(await bob.tokenStore.load())
            #expect(renewed.refreshToken != issued.refreshToken)
            connection.close()

            // The stream form: the connection opens when iteration starts. A message is sent until one arrives, as
            // the stream gives no signal of being connected.
            let stream = bob.chorus.voice.events()
            let sender = Task {
                while !Task.isCancelled {
                    try await alice.chorus.messages.send(text: "ping", to: direct.id)
                    try await Task.sleep(for: .milliseconds(500))
                }
            }
            defer { sender.cancel() }
            var received: Message?
            for try await event in stream {
                if case .messageCreated(let message) = event {
                    received = message
                    break
                }
            }
            #expect(received?.content == "ping" && received?.conversationID == direct.id)

            // Signed out: no connection.
            try await bob.chorus.auth.logout()
            let signedOut = await #expect(throws: ChorusError.self) { try await bob.chorus.voice.connect() }
            guard case .signedOut = signedOut else {
                Issue.record("expected signedOut, got \(String(describing: signedOut))")
                return
            }
            var failure: (any Error)?
            do {
                for try await _ in bob.chorus.voice.events() {}
            } catch {
                failure = error
            }
            guard case .signedOut = failure as? ChorusError else {
                Issue.record("expected signedOut, got \(String(describing: failure))")
                return
            }
        }
    }

    /// One test for both platforms' reality: where `URLSessionWebSocketTask` can open WebSockets (Apple platforms, Linux
    /// with a libcurl built with WebSockets), the default transport receives a message; where it cannot (Debian 12's
    /// libcurl 7.88), `connect()` fails at once with a network error instead of hanging.
    @Test("the default URLSession WebSocket path: a message arrives, or connect fails fast where URLSession has no WebSockets")
    func urlSessionWebSockets() async throws {
        let supported = await URLSessionWebSocketSupport.isAvailable()
        try await LiveServer.run { server in
            let alice = try await MessagingPerson.register(on: server, name: "Alice")
            let bob = try await MessagingPerson.register(on: server, name: "Bob")
            guard supported else {
                let failure = await #expect(throws: ChorusError.self) { try await bob.chorus.voice.connect() }
                guard case .network = failure else {
                    Issue.record("expected network, got \(String(describing: failure))")
                    return
                }
                return
            }
            let direct = try await alice.directConversation(with: bob)
            let connection = try await bob.chorus.voice.connect()
            defer { connection.close() }
            let inbox = EventInbox(connection.events)
            let sent = try await alice.chorus.messages.send(text: "Over URLSession", to: direct.id)
            _ = try await inbox.next {
                if case .messageCreated(let message) = $0 { return message.id == sent.id }
                return false
            }
        }
    }
}

/// Collects the events of a connection as they arrive, and hands them out by predicate, waiting up to a generous
/// liveness timeout for one that has not arrived yet.
actor EventInbox {
    private struct Waiter {
        var id: UUID
        var predicate: @Sendable (MessagingEvent) -> Bool
        var continuation: CheckedContinuation<MessagingEvent, any Error>
    }

    private var received: [MessagingEvent] = []
    private var waiter: Waiter?
    private var ended: (any Error)?

    init(_ events: AsyncThrowingStream<MessagingEvent, any Error>) {
        Task { [weak self] in
            do {
                for try await event in events { await self?.deliver(event) }
                await self?.end(with: EventInboxEnded())
            } catch {
                await self?.end(with: error)
            }
        }
    }

    /// The first event received (earlier or later) that satisfies `predicate`; events before it are dropped.
    func next(timeout: Duration = .seconds(20), _ predicate: @escaping @Sendable (MessagingEvent) -> Bool) async throws -> MessagingEvent {
        if let index = received.firstIndex(where: predicate) {
            let event = received[index]
            received.removeFirst(index + 1)
            return event
        }
        received.removeAll()
        if let ended { throw ended }
        let id = UUID()
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            await self?.expire(id)
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { waiter = Waiter(id: id, predicate: predicate, continuation: $0) }
    }

    private func deliver(_ event: MessagingEvent) {
        guard let waiter else {
            received.append(event)
            return
        }
        if waiter.predicate(event) {
            self.waiter = nil
            waiter.continuation.resume(returning: event)
        }
    }

    private func expire(_ id: UUID) {
        guard let waiter, waiter.id == id else { return }
        self.waiter = nil
        waiter.continuation.resume(throwing: EventInboxTimeout())
    }

    private func end(with error: any Error) {
        ended = error
        guard let waiter else { return }
        self.waiter = nil
        waiter.continuation.resume(throwing: error)
    }
}

/// No matching event arrived within the timeout.
struct EventInboxTimeout: Error {}

/// The connection's events ended without an error.
struct EventInboxEnded: Error {}

/// Whether `URLSessionWebSocketTask` can open WebSockets here: on Linux it needs a libcurl built with them.
enum URLSessionWebSocketSupport {
    /// Tries a WebSocket to a closed loopback port: "unsupported URL" means no support, a refused connection means
    /// support.
    static func isAvailable() async -> Bool {
        guard let url = URL(string: "ws://127.0.0.1:9/ws") else { return false }
        let task = URLSession.shared.webSocketTask(with: url)
        task.resume()
        defer { task.cancel(with: .goingAway, reason: nil) }
        do {
            _ = try await task.receive()
            return true
        } catch let error as URLError {
            return error.code != .unsupportedURL
        } catch {
            return (error as NSError).code != URLError.unsupportedURL.rawValue
        }
    }
}

/// HTTP through `URLSession`, WebSockets through WebSocketKit (SwiftNIO): a ``WebSocketTransport`` that works on
/// every platform the tests run on.
struct WebSocketKitTransport: HTTPTransport, WebSocketTransport {
    private let http = URLSessionTransport()

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        try await http.send(request)
    }

    func openWebSocket(_ request: URLRequest) async throws -> any WebSocketConnection {
        guard let url = request.url else { throw URLError(.badURL) }
        var headers = HTTPHeaders()
        for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.add(name: name, value: value) }
        let mailbox = WebSocketMailbox()
        // The upgrade callback may run after `connect` completes: wait for it.
        let upgraded = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: WebSocket.self)
        do {
            try await WebSocket.connect(to: url, headers: headers, on: MultiThreadedEventLoopGroup.singleton) { socket in
                socket.onText { _, text in mailbox.deliver(.text(text)) }
                socket.onBinary { _, buffer in mailbox.deliver(.data(Data(buffer.readableBytesView))) }
                socket.onClose.whenComplete { _ in mailbox.finish() }
                upgraded.succeed(socket)
            }.get()
        } catch WebSocketClient.Error.invalidResponseStatus(let head) {
            // Read as URLSession's transport reads it: whether a 401 said the access token expired.
            let fields = Dictionary(head.headers.map { ($0.name, $0.value) }) { first, _ in first }
            let refusal =
                HTTPURLResponse(url: url, statusCode: Int(head.status.code), httpVersion: nil, headerFields: fields).map(WebSocketRefused.init)
                ?? WebSocketRefused(status: Int(head.status.code))
            upgraded.fail(refusal)
            throw refusal
        } catch {
            upgraded.fail(error)
            throw error
        }
        return WebSocketKitConnection(socket: try await upgraded.futureResult.get(), mailbox: mailbox)
    }
}

/// A WebSocketKit socket as a ``WebSocketConnection``.
private struct WebSocketKitConnection: WebSocketConnection {
    let socket: WebSocket
    let mailbox: WebSocketMailbox

    func send(_ text: String) async throws {
        try await socket.send(text)
    }

    func send(_ data: Data) async throws {
        try await socket.send([UInt8](data))
    }

    func receive() async throws -> WebSocketMessage {
        try await mailbox.next()
    }

    func close() {
        socket.close(promise: nil)
        mailbox.finish()
    }
}

/// The messages of a socket, in order, for one reader at a time.
private final class WebSocketMailbox: Sendable {
    private struct State {
        var messages: [WebSocketMessage] = []
        var reader: CheckedContinuation<WebSocketMessage, any Error>?
        var closed = false
    }

    private let state = NIOLockedValueBox(State())

    func deliver(_ message: WebSocketMessage) {
        let reader = state.withLockedValue { state -> CheckedContinuation<WebSocketMessage, any Error>? in
            guard let reader = state.reader else {
                state.messages.append(message)
                return nil
            }
            state.reader = nil
            return reader
        }
        reader?.resume(returning: message)
    }

    func finish() {
        let reader = state.withLockedValue { state -> CheckedContinuation<WebSocketMessage, any Error>? in
            state.closed = true
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(throwing: URLError(.networkConnectionLost))
    }

    func next() async throws -> WebSocketMessage {
        try await withCheckedThrowingContinuation { continuation in
            let outcome = state.withLockedValue { state -> Result<WebSocketMessage, any Error>? in
                if !state.messages.isEmpty { return .success(state.messages.removeFirst()) }
                if state.closed { return .failure(URLError(.networkConnectionLost)) }
                state.reader = continuation
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }
}
