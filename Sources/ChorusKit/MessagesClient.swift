import ChorusAPI
import Foundation

/// Messages of the user's conversations: reading pages, sending text and voice messages, editing, deleting,
/// heard and star marks, search. Reached through ``ChorusClient/messages``.
///
/// Sending is idempotent: every message carries a client message id (a new UUID unless you pass one), the same on
/// every retry, and the server answers a repeat with the message it already created. So a send whose answer was
/// lost is retried safely, and you can retry it yourself later with the same id — ``VoiceOutbox`` does that for
/// voice messages recorded offline.
public struct MessagesClient: Sendable {
    let session: APISession

    /// The largest page the server returns.
    public static let maxPageSize = 200

    // MARK: Reading

    /// One page of a conversation's messages, newest first.
    ///
    /// ```swift
    /// var page = try await chorus.messages.page(conversation: id)
    /// show(page.messages)
    /// while let cursor = page.nextCursor, userScrolledToTop {
    ///     page = try await chorus.messages.page(conversation: id, before: cursor)
    ///     show(page.messages)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - conversationID: the conversation.
    ///   - cursor: the ``MessagesPage/nextCursor`` of the previous page; `nil` for the newest messages.
    ///   - limit: messages per page, 1–``maxPageSize`` (others are clamped by the server).
    /// - Throws: ``ChorusError/notFound`` when the user is not a member; ``ChorusError/validation(_:)`` for a cursor
    ///   that is not one.
    public func page(conversation conversationID: String, before cursor: String? = nil, limit: Int = 50) async throws -> MessagesPage {
        var query = [URLQueryItem(name: "limit", value: String(limit))]
        if let cursor { query.append(URLQueryItem(name: "before", value: cursor)) }
        return MessagesPage(try await session.send(API.Messaging.messages.request(conversationID, query: query)))
    }

    /// Every message of a conversation, newest first, fetched page by page as the sequence is iterated (a page is
    /// requested only when the previous one is used up; stop iterating to stop fetching).
    ///
    /// - Parameters:
    ///   - conversationID: the conversation.
    ///   - pageSize: messages per request, 1–``maxPageSize``.
    public func allMessages(conversation conversationID: String, pageSize: Int = 50) -> AsyncThrowingStream<Message, any Error> {
        let pager = MessagePager(client: self, conversationID: conversationID, pageSize: pageSize)
        return AsyncThrowingStream { try await pager.next() }
    }

    /// Messages of the user's conversations whose text or transcript contains `query`, newest first.
    ///
    /// - Parameters:
    ///   - query: 2–200 characters.
    ///   - limit: at most this many, 1–``maxPageSize``.
    /// - Throws: ``ChorusError/validation(_:)`` (field `q`) for a query outside 2–200 characters.
    public func search(_ query: String, limit: Int = 50) async throws -> [Message] {
        let request = API.Messaging.searchMessages.request(
            query: [URLQueryItem(name: "q", value: query), URLQueryItem(name: "limit", value: String(limit))])
        return try await session.send(request).messages.map(Message.init)
    }

    // MARK: Sending

    /// Sends a text message.
    ///
    /// - Parameters:
    ///   - text: up to 10,000 characters.
    ///   - conversationID: the conversation.
    ///   - urgent: flag it urgent (`true`) or not (`false`); `nil` lets the server decide from its content.
    ///   - clientMessageID: identifies this message across retries (1–64 characters); a new UUID by default. Pass the
    ///     same id again to retry a send that failed with ``ChorusError/network(_:)``: it is created once.
    /// - Returns: the message (the one created earlier, if `clientMessageID` was used before in this conversation).
    /// - Throws: ``ChorusError/validation(_:)`` for empty or too long text; ``ChorusError/notFound`` when the user is
    ///   not a member; ``ChorusError/api(status:detail:)`` (409) when `clientMessageID` was used in another
    ///   conversation.
    @discardableResult
    public func send(
        text: String, to conversationID: String, urgent: Bool? = nil, clientMessageID: String = UUID().uuidString.lowercased()
    ) async throws -> Message {
        try await send(
            SendMessageRequest(clientMessageID: clientMessageID, sendMode: .text, content: text, urgent: urgent), to: conversationID)
    }

    /// Sends a voice message: a recording uploaded with ``VoiceClient/upload(file:format:longForm:)``, with the
    /// transcript as the sender reviewed it.
    ///
    /// To send a recording made offline, enqueue it in a ``VoiceOutbox`` instead: it uploads and sends when the
    /// network is back.
    ///
    /// - Parameters:
    ///   - audioID: the ``Recording/audioID``; each recording can be sent in one message only.
    ///   - transcript: the reviewed transcript (``VoiceClient/transcribe(audioID:language:)`` then the user's
    ///     corrections); shown with ``SendMode-swift.enum/both``, ignored with ``SendMode-swift.enum/audio`` (the
    ///     server then transcribes the recording itself and announces it with ``MessagingEvent/transcriptReady(_:)``).
    ///   - mode: ``Message/SendMode-swift.enum/both`` (recording and transcript) or
    ///     ``Message/SendMode-swift.enum/audio`` (the recording only, e.g. when transcription failed).
    ///   - conversationID: the conversation.
    ///   - urgent: flag it urgent or not; `nil` lets the server decide.
    ///   - clientMessageID: identifies this message across retries; a new UUID by default.
    /// - Throws: ``ChorusError/validation(_:)`` (field `audio_id`) when the recording is not the user's or no longer
    ///   exists; ``ChorusError/api(status:detail:)`` (403) when voice features are off for the account, (409) when
    ///   the recording is already attached to another message.
    @discardableResult
    public func sendVoice(
        audioID: String, transcript: String? = nil, mode: Message.SendMode = .both, to conversationID: String, urgent: Bool? = nil,
        clientMessageID: String = UUID().uuidString.lowercased()
    ) async throws -> Message {
        let body = SendMessageRequest(
            clientMessageID: clientMessageID, sendMode: mode, content: mode == .audio ? nil : transcript, audioID: audioID,
            urgent: urgent)
        return try await send(body, to: conversationID)
    }

    private func send(_ body: SendMessageRequest, to conversationID: String) async throws -> Message {
        var request = try API.Messaging.sendMessage.request(conversationID, json: body)
        request.request.idempotent = true  // deduplicated by client_message_id
        return Message(try await session.send(request))
    }

    // MARK: Changing

    /// Replaces a message's text (or a voice message's transcript). The sender only.
    ///
    /// - Parameters:
    ///   - messageID: the message.
    ///   - content: the new text, 1–10,000 characters.
    /// - Returns: the edited message, with ``Message/editedAt``.
    /// - Throws: ``ChorusError/api(status:detail:)`` (403) for someone else's message, (400) for an audio-only
    ///   message; ``ChorusError/validation(_:)`` for empty or too long text.
    @discardableResult
    public func edit(_ messageID: String, content: String) async throws -> Message {
        var request = try API.Messaging.editMessage.request(messageID, json: EditMessageRequest(content: content))
        request.request.idempotent = true  // setting the same text twice is harmless
        return Message(try await session.send(request))
    }

    /// Deletes a message for everyone, with its recording. The sender only; it stays in the conversation as deleted.
    ///
    /// - Throws: ``ChorusError/api(status:detail:)`` (403) for someone else's message; ``ChorusError/notFound`` when
    ///   it does not exist for the user.
    public func delete(_ messageID: String) async throws {
        try await session.send(API.Messaging.deleteMessage.request(messageID))
    }

    /// Records that the user played a voice message (it no longer counts in ``Conversation/unheardVoiceCount``).
    ///
    /// - Throws: ``ChorusError/api(status:detail:)`` (400) for a message without a recording.
    public func markHeard(_ messageID: String) async throws {
        var request = API.Messaging.markHeard.request(messageID)
        request.request.idempotent = true
        try await session.send(request)
    }

    /// Stars a message for the user: it is easy to find again, and its recording is kept past the retention period.
    ///
    /// - Returns: the message, ``Message/isStarred``.
    @discardableResult
    public func star(_ messageID: String) async throws -> Message {
        Message(try await session.send(API.Messaging.star.request(messageID)))
    }

    /// Removes the user's star.
    ///
    /// - Returns: the message, not ``Message/isStarred``.
    @discardableResult
    public func unstar(_ messageID: String) async throws -> Message {
        Message(try await session.send(API.Messaging.unstar.request(messageID)))
    }
}

/// The state of ``MessagesClient/allMessages(conversation:pageSize:)``: the cursor and the rest of the current page.
private actor MessagePager {
    let client: MessagesClient
    let conversationID: String
    let pageSize: Int
    private var cursor: String?
    private var buffered: [Message] = []
    private var exhausted = false

    init(client: MessagesClient, conversationID: String, pageSize: Int) {
        self.client = client
        self.conversationID = conversationID
        self.pageSize = pageSize
    }

    /// The next older message, fetching the next page when the current one is used up; `nil` after the oldest.
    func next() async throws -> Message? {
        while buffered.isEmpty {
            guard !exhausted else { return nil }
            let page = try await client.page(conversation: conversationID, before: cursor, limit: pageSize)
            buffered = page.messages.reversed()
            cursor = page.nextCursor
            exhausted = cursor == nil
        }
        return buffered.popLast()
    }
}
