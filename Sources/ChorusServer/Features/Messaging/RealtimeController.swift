import ChorusAPI
import Foundation
import Vapor

/// `GET /ws`: the realtime WebSocket of a signed-in user (`Authorization: Bearer`, or `?access_token=` for browsers).
///
/// The server sends ``RealtimeEventDTO`` JSON text frames: messages created/updated/deleted, transcripts ready,
/// summaries ready, conversation changes, typing and presence of co-members. The client may send
/// `{"type":"typing","conversation_id":…}` (relayed to the other members, at most once per user and conversation every
/// ``TypingThrottle/standardInterval`` seconds; the rest are dropped) and `{"type":"ping"}` (answered `pong`);
/// anything else is answered with an `error` event and otherwise ignored. Typing and presence only ever reach members
/// who accepted their invitation (invitees are not members).
struct RealtimeController: RouteCollection {
    let services: ChorusServices
    let typing = TypingLimiter()

    func boot(routes: any RoutesBuilder) throws {
        // Authenticated in the handler (the token may come in the query: browsers cannot set headers on a WebSocket).
        routes.on(API.Messaging.realtime, use: connect)
    }

    @Sendable
    func connect(_ req: Request) async throws -> Response {
        let user = try await UserAuthenticator(services: services).authenticate(req, allowsQueryToken: true)
        let services = services
        let store = try req.store
        let logger = req.logger
        let typingLimiter = typing
        // The caps answer 429 (the user's) or 503 (this instance's) before the upgrade; a socket that loses a race for
        // the last place after it is closed with 1013.
        if let refusal = services.messaging.hub.refusal(for: .webSocket, userID: user.id) { throw refusal.apiError }
        return req.webSocket(maxFrameSize: .init(integerLiteral: 16 * 1024)) { _, socket in
            let hub = services.messaging.hub
            guard let added = try? hub.add(socket, userID: user.id) else {
                socket.close(code: SocketOutbox.slowConsumerCloseCode, promise: nil)
                return
            }
            let (connectionID, first) = (added.id, added.first)
            if first {
                services.background.track { await Self.announcePresence(of: user.id, online: true, services: services, store: store) }
            }
            // What a client may send is rate-limited per socket: beyond the limit the socket is closed with 1008.
            let inbound = InboundMessageRate(limit: hub.limits.inboundMessages)
            socket.onBinary { socket, _ in
                _ = inbound.admit(socket)  // nothing is done with binary messages, but they count
            }
            socket.onText { socket, text in
                guard inbound.admit(socket) else { return }
                await Self.handle(text, from: user.id, socket: socket, services: services, store: store, typing: typingLimiter)
            }
            // A socket lives as long as its sign-in session: once the session is revoked (logout, refresh-token reuse,
            // the console's revoke) or the account deleted, it is closed with 1008 within ``SessionCheck/lifetime``.
            let sessionWatch = Task {
                while !Task.isCancelled, !socket.isClosed {
                    try? await Task.sleep(for: SessionCheck.lifetime)
                    guard !Task.isCancelled, !socket.isClosed else { return }
                    if let active = try? await services.sessions.isActive(sessionID: user.sessionID, userID: user.id, store: store), !active {
                        try? await socket.close(code: .policyViolation)
                        return
                    }
                }
            }
            socket.onClose.whenComplete { _ in
                sessionWatch.cancel()
                if hub.remove(connectionID, userID: user.id) {
                    services.background.track { await Self.announcePresence(of: user.id, online: false, services: services, store: store) }
                }
                logger.debug("realtime socket closed")
            }
        }
    }

    private static let decoder = ChorusJSON.makeDecoder()

    static func handle(
        _ text: String, from userID: String, socket: WebSocket, services: ChorusServices, store: ChorusStore, typing: TypingLimiter
    ) async {
        guard let event = try? decoder.decode(RealtimeClientEventDTO.self, from: Data(text.utf8)) else {
            socket.send(RealtimeHub.encode(RealtimeEventDTO(type: "error", detail: "Send JSON such as {\"type\":\"ping\"}")), promise: nil)
            return
        }
        switch event.type {
        case "ping":
            socket.send(RealtimeHub.encode(RealtimeEventDTO(type: "pong")), promise: nil)
        case "typing":
            // Over the rate: dropped before any database work.
            if let conversationID = event.conversationID,
                !typing.admit(userID: userID, conversationID: conversationID, at: services.now())
            {
                return
            }
            guard let conversationID = event.conversationID,
                let members = try? await store.messaging.memberIDs(conversationID: conversationID), members.contains(userID)
            else {
                socket.send(RealtimeHub.encode(RealtimeEventDTO(type: "error", detail: "Conversation not found")), promise: nil)
                return
            }
            await services.messaging.fanout.publish(
                RealtimeEventDTO(type: "typing", conversationID: conversationID, userID: userID), to: members.filter { $0 != userID })
        default:
            socket.send(RealtimeHub.encode(RealtimeEventDTO(type: "error", detail: "Unknown event type \(event.type)")), promise: nil)
        }
    }

    /// Tells the user's co-members (across all their conversations) that they came online or went offline.
    static func announcePresence(of userID: String, online: Bool, services: ChorusServices, store: ChorusStore) async {
        guard let conversations = try? await store.messaging.conversations(of: userID) else { return }
        let others = Set(conversations.flatMap { $0.members.map(\.userID) }).subtracting([userID])
        guard !others.isEmpty else { return }
        await services.messaging.fanout.publish(RealtimeEventDTO(type: "presence", userID: userID, online: online), to: Array(others))
    }
}
