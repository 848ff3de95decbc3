import ChorusAPI
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Recordings, transcripts, the messaging profile and the realtime connection of voice messages. Reached through
/// ``ChorusClient/voice``.
///
/// Sending a voice message takes three steps — upload, transcribe for review, send:
///
/// ```swift
/// let recording = try await chorus.voice.upload(file: recorder.url)
/// let transcript = try await chorus.voice.transcribe(audioID: recording.audioID)
/// // The user reviews and corrects transcript.text, then:
/// try await chorus.messages.sendVoice(audioID: recording.audioID, transcript: reviewed, to: conversation.id)
/// ```
///
/// Offline, enqueue the recording in a ``VoiceOutbox`` instead. Every method needs a signed-in user
/// (``ChorusError/signedOut`` otherwise).
public struct VoiceClient: Sendable {
    let session: APISession

    /// What ``transcribe(audioID:language:)`` throws (as ``ChorusError/api(status:detail:)``, status 503) when the
    /// speech service fails: the product's own wording. The recording can still be sent audio only.
    public static let transcriptionFailedMessage = "Couldn't transcribe audio. Please try again in a quieter environment."

    /// How often an open ``MessagingConnection`` tells the server it is alive, so idle proxies keep it open.
    static let keepAliveInterval: Duration = .seconds(25)

    // MARK: Profile

    /// The account's messaging profile: display name, birth year, retention and whether voice features are on.
    public func profile() async throws -> MessagingProfile {
        try await session.send(API.Messaging.profile.request())
    }

    /// Changes the given settings of the messaging profile and leaves the others (`nil`) as they are.
    ///
    /// - Parameters:
    ///   - displayName: the name other members see, 1–60 characters.
    ///   - birthYear: a four-digit year; voice data is stored only for users of 13 and older.
    ///   - retentionDays: how long recordings are kept, 1–365 days.
    ///   - voiceFeaturesEnabled: `false` turns every voice feature off.
    ///   - defaultVoice: the voice for generated speech without a cloned voice.
    /// - Returns: the whole profile after the change.
    /// - Throws: ``ChorusError/validation(_:)`` naming each invalid field.
    @discardableResult
    public func updateProfile(
        displayName: String? = nil, birthYear: Int? = nil, retentionDays: Int? = nil, voiceFeaturesEnabled: Bool? = nil,
        defaultVoice: String? = nil
    ) async throws -> MessagingProfile {
        let body = MessagingProfileDTO(
            displayName: displayName, birthYear: birthYear, retentionDays: retentionDays, voiceFeaturesEnabled: voiceFeaturesEnabled,
            defaultVoice: defaultVoice)
        return try await session.send(try API.Messaging.updateProfile.request(json: body))
    }

    // MARK: Recordings

    /// Uploads a recording file.
    ///
    /// The file is memory-mapped where the platform allows rather than read into memory. An upload whose answer is
    /// lost is not retried (a repeat would store a second copy): upload again, or use a ``VoiceOutbox``.
    ///
    /// - Parameters:
    ///   - file: an m4a (AAC), mp3 or wav file; up to 10 MB and 2 minutes.
    ///   - format: the file's format; `nil` reads it from the file extension.
    ///   - longForm: allow up to 5 minutes (bedtime stories and other long messages).
    /// - Returns: the stored recording, with the duration the server read from it.
    /// - Throws: ``ChorusError/validation(_:)`` (field `format`) when `format` is `nil` and the extension names no
    ///   known format; the file system's error when the file cannot be read; ``ChorusError/api(status:detail:)`` with
    ///   413 (too large), 415 (not that format) or 422 (too long, empty, unreadable), 403 when voice features are off.
    public func upload(file: URL, format: RecordingFormat? = nil, longForm: Bool = false) async throws -> Recording {
        guard let format = format ?? RecordingFormat(fileExtension: file.pathExtension) else {
            throw ChorusError.validation([
                FieldError(field: "format", message: "Name the format of \(file.lastPathComponent): m4a, mp3 or wav")
            ])
        }
        return try await upload(try Data(contentsOf: file, options: .mappedIfSafe), format: format, longForm: longForm)
    }

    /// Uploads a recording held in memory.
    ///
    /// - Parameters:
    ///   - data: the recording's bytes.
    ///   - format: its format (the server checks the bytes agree).
    ///   - longForm: allow up to 5 minutes.
    /// - Returns: the stored recording.
    /// - Throws: like ``upload(file:format:longForm:)``.
    public func upload(_ data: Data, format: RecordingFormat, longForm: Bool = false) async throws -> Recording {
        // APIRequest's bodies are JSON or forms: the recording goes as a form body whose Content-Type is replaced by the
        // recording's media type (explicit headers are applied last).
        var request = API.Messaging.uploadAudio.request(query: longForm ? [URLQueryItem(name: "long_form", value: "true")] : [])
        request.request.body = .form(data)
        request.request.headers["Content-Type"] = format.mimeType
        return Recording(try await session.send(request))
    }

    /// Transcribes one of the user's recordings, for the user to review before sending.
    ///
    /// An empty transcript with ``Message/ConfidenceLabel-swift.enum/poor`` confidence means no speech was heard
    /// (``Transcript/heardSpeech``): suggest sending audio only.
    ///
    /// - Parameters:
    ///   - audioID: a ``Recording/audioID``.
    ///   - language: the spoken language (ISO-639-1, e.g. `en`), if known; it improves accuracy.
    /// - Throws: ``ChorusError/api(status:detail:)`` with status 503 and ``transcriptionFailedMessage`` when the speech
    ///   service failed (after the retries); ``ChorusError/notFound`` when the recording is not the user's;
    ///   ``ChorusError/validation(_:)`` for a malformed language.
    public func transcribe(audioID: String, language: String? = nil) async throws -> Transcript {
        var request = try API.Messaging.transcribe.request(json: TranscriptionRequestDTO(audioID: audioID, language: language))
        request.request.idempotent = true  // transcribing again gives the same transcript
        do {
            return Transcript(try await session.send(request))
        } catch ChorusError.server(status: 503, _) {
            throw ChorusError.api(status: 503, detail: Self.transcriptionFailedMessage)
        }
    }

    // MARK: Cloned voice

    /// What ``cloneVoice(sampleAudioID:script:consent:)`` throws (as ``ChorusError/api(status:detail:)``, status 422 or
    /// 503) when the voice service cannot clone the sample: the product's own wording.
    public static let cloningFailedMessage =
        "We couldn't process your voice sample. Please re-record in a quiet space and speak clearly for 30 seconds."

    /// What speech, playback and summary narration throw (as ``ChorusError/api(status:detail:)``, status 503) when no
    /// audio can be generated: the product's own wording. The text can still be read.
    public static let speechUnavailableMessage = "Audio unavailable. You can still read the message."

    /// The user's cloned voice, or the default voice their messages use without one.
    public func voiceProfile() async throws -> VoiceProfile {
        VoiceProfile(try await session.send(API.Messaging.voiceProfile.request()))
    }

    /// Clones the user's voice from a recording of them reading a script, so their messages can be played in their own
    /// voice once confirmed. Cloning again replaces the voice (the old one is deleted at the provider).
    ///
    /// The new voice is ``VoiceProfile/Status/pendingConfirmation``: play ``VoiceProfile/previewURL`` to the user, then
    /// call ``confirmVoiceProfile()`` (or ``deleteVoiceProfile()`` to discard, or clone again to re-record). Until it is
    /// confirmed, messages play in the default voice; an unconfirmed voice is deleted after a day
    /// (``VoiceProfile/expiresAt``). ``VoiceProfile/Status/requiresVerification`` means the voice service holds the
    /// voice for a verification the app cannot do: show ``VoiceProfile/message`` and let the user re-record.
    ///
    /// Upload the sample first with ``upload(file:format:longForm:)`` and `longForm: true` (it must be 30 seconds to
    /// 3 minutes long). The user must be 18 or older (their ``MessagingProfile/birthYear`` set) and agree to
    /// ``VoiceProfile/consentStatement``. A network failure is not retried: a repeat would clone again.
    ///
    /// - Parameters:
    ///   - sampleAudioID: the sample's ``Recording/audioID``.
    ///   - script: the text the user read (10–2,000 characters).
    ///   - consent: the user confirms the recording is their own voice and agrees to its use for their messages.
    /// - Returns: the new voice profile, pending confirmation (or requiring verification).
    /// - Throws: ``ChorusError/validation(_:)`` naming `consent`, `script` or `audio_id` (not the user's, or not 30 s –
    ///   3 min long); ``ChorusError/api(status:detail:)`` with 403 (no birth year, under 18, voice features off), 422
    ///   or 503 with ``cloningFailedMessage`` when the voice service refused or failed.
    public func cloneVoice(sampleAudioID: String, script: String, consent: Bool) async throws -> VoiceProfile {
        let request = try API.Messaging.createVoiceProfile.request(
            json: CreateVoiceProfileRequest(audioID: sampleAudioID, script: script, consent: consent))
        do {
            return VoiceProfile(try await session.send(request))
        } catch ChorusError.server(status: 503, _) {
            throw ChorusError.api(status: 503, detail: Self.cloningFailedMessage)
        }
    }

    /// Keeps the cloned voice after the user heard its preview: from now on their messages are spoken in it.
    /// Confirming a ready voice again returns it unchanged.
    ///
    /// - Throws: ``ChorusError/notFound`` when there is no voice to confirm (never cloned, discarded or expired);
    ///   ``ChorusError/api(status:detail:)`` with 409 when the voice requires verification or was re-recorded meanwhile
    ///   (fetch ``voiceProfile()`` and play the new preview).
    public func confirmVoiceProfile() async throws -> VoiceProfile {
        VoiceProfile(try await session.send(API.Messaging.confirmVoiceProfile.request()))
    }

    /// Deletes (or, before confirmation, discards) the user's cloned voice (at the provider too) and every speech
    /// generated with it; their messages are then spoken in their default voice.
    ///
    /// - Throws: ``ChorusError/notFound`` when there is no cloned voice.
    public func deleteVoiceProfile() async throws {
        try await session.send(API.Messaging.deleteVoiceProfile.request())
    }

    /// The voices messages are spoken in when their sender has no cloned voice; set one with
    /// ``updateProfile(displayName:birthYear:retentionDays:voiceFeaturesEnabled:defaultVoice:)`` (its ``Voice/id``).
    public func defaultVoices() async throws -> [Voice] {
        try await session.send(API.Messaging.defaultVoices.request()).voices.map(Voice.init)
    }

    // MARK: Privacy

    /// Everything the server holds of the user's voice: recordings (with download URLs), transcripts, voice messages
    /// and the cloned voice with its consent (the right to data portability).
    public func exportVoiceData() async throws -> VoiceDataExport {
        try await session.send(API.Messaging.exportVoiceData.request())
    }

    /// Erases the user's voice data everywhere (the right to erasure): recordings, the transcripts of their messages,
    /// the cloned voice (at the provider too) and every speech generated with it. Text messages stay. Erasing again
    /// erases nothing more.
    ///
    /// - Returns: what was erased.
    /// - Throws: ``ChorusError/server(status:requestID:)`` when the voice provider could not delete the cloned voice:
    ///   nothing was erased then, try again later.
    @discardableResult
    public func eraseVoiceData() async throws -> VoiceDataErasure {
        try await session.send(API.Messaging.eraseVoiceData.request())
    }

    // MARK: Realtime

    /// The events of the user's conversations as they happen: new, edited and deleted messages, transcripts ready,
    /// typing, presence, conversation changes.
    ///
    /// The connection opens when iteration starts and closes when it stops (leave the loop or cancel its task).
    /// The stream ends with ``ChorusError/network(_:)`` when the connection drops: call `events()` again to
    /// reconnect (and refresh the screen, as events sent meanwhile are not replayed). To send typing notices, use
    /// ``connect()`` instead.
    ///
    /// ```swift
    /// for try await event in chorus.voice.events() {
    ///     if case .messageCreated(let message) = event { insert(message) }
    /// }
    /// ```
    public func events() -> AsyncThrowingStream<MessagingEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: MessagingEvent.self)
        let client = self
        let relay = Task {
            do {
                let connection = try await client.connect()
                for try await event in connection.events { continuation.yield(event) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in relay.cancel() }
        return stream
    }

    /// Opens the realtime connection (`GET /ws`) and returns once the server has registered it: every event from
    /// then on is delivered through ``MessagingConnection/events``.
    ///
    /// The WebSocket is opened by the client's transport when it is also a ``WebSocketTransport`` (as
    /// ``URLSessionTransport`` is), else by a `URLSession.shared` ``URLSessionTransport``. An access token the server
    /// refuses is renewed once, as for other requests.
    ///
    /// - Throws: ``ChorusError/signedOut`` when there is no session or the server ended it;
    ///   ``ChorusError/tokenExpired`` when the server calls even the renewed access token expired (the session is kept);
    ///   ``ChorusError/network(_:)`` when the server cannot be reached, does not answer within the client's
    ///   ``ChorusClientOptions/timeout``, or the platform has no WebSocket support (`URLSessionWebSocketTask` on Linux
    ///   needs a libcurl built with WebSockets, 7.86 or newer); `CancellationError` when cancelled.
    public func connect() async throws -> MessagingConnection {
        guard let tokens = try await session.tokenStore.load() else { throw ChorusError.signedOut }
        do {
            return try await open(accessToken: tokens.accessToken)
        } catch let refusal as WebSocketRefused where refusal.status == 401 {
            try await session.refreshNow()
            guard let renewed = try await session.tokenStore.load() else { throw ChorusError.signedOut }
            do {
                return try await open(accessToken: renewed.accessToken)
            } catch let refusal as WebSocketRefused where refusal.status == 401 {
                // A renewed token called expired: the session holds (as for other requests, see ChorusError.tokenExpired).
                if refusal.tokenExpired { throw ChorusError.tokenExpired }
                try await session.tokenStore.clear(ifHolding: renewed)  // a fresh token refused: the session is gone
                throw ChorusError.signedOut
            }
        }
    }

    /// One connection attempt: the upgrade, then a ping answered by a pong. Events arriving before the pong are kept
    /// for the connection to deliver first.
    ///
    /// - Throws: ``WebSocketRefused`` for a 401 (to refresh and try again), ``ChorusError`` for the rest.
    private func open(accessToken: String) async throws -> MessagingConnection {
        var socket: (any WebSocketConnection)?
        do {
            let opened = try await session.openWebSocket(path: API.Messaging.realtime.path(), accessToken: accessToken)
            socket = opened
            let early = try await Self.withTimeout(session.options.timeout, onTimeout: { opened.close() }) {
                try await Self.handshake(opened)
            }
            return MessagingConnection(socket: opened, early: early, keepAlive: Self.keepAliveInterval)
        } catch {
            socket?.close()
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            if let refusal = error as? WebSocketRefused {
                if refusal.status == 401 { throw refusal }
                guard let response = HTTPURLResponse(url: session.baseURL, statusCode: refusal.status, httpVersion: nil, headerFields: nil) else {
                    throw ChorusError.api(status: refusal.status, detail: HTTPURLResponse.localizedString(forStatusCode: refusal.status))
                }
                throw ChorusError.from(status: refusal.status, body: Data(), response: response)
            }
            if let chorusError = error as? ChorusError { throw chorusError }
            throw ChorusError.network(error)
        }
    }

    /// Sends a ping and reads messages until its pong; returns the events received before it.
    private static func handshake(_ socket: any WebSocketConnection) async throws -> [MessagingEvent] {
        try await socket.send(MessagingConnection.encode(RealtimeClientEventDTO(type: "ping")))
        var early: [MessagingEvent] = []
        while true {
            guard let dto = MessagingConnection.decode(try await socket.receive()) else { continue }
            if dto.type == "pong" { return early }
            if let event = MessagingEvent(dto) { early.append(event) }
        }
    }

    /// Runs `operation`, failing with ``ChorusError/network(_:)`` (timed out) after `timeout` seconds; `onTimeout`
    /// (and cancellation) must make `operation` return, e.g. by closing its socket.
    private static func withTimeout<T: Sendable>(
        _ timeout: TimeInterval, onTimeout: @escaping @Sendable () -> Void, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask {
                try await withTaskCancellationHandler(operation: operation, onCancel: onTimeout)
            }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                throw ChorusError.network(URLError(.timedOut))
            }
            defer { group.cancelAll() }
            guard let result = try await group.next() else { throw ChorusError.network(URLError(.timedOut)) }
            return result
        }
    }
}

extension MessagesClient {
    /// A message spoken in its sender's voice: their cloned voice, else their default voice. Generated once, then
    /// served from storage to every member (``Speech/isCached``).
    ///
    /// - Parameter messageID: a message with text or a transcript.
    /// - Throws: ``ChorusError/rateLimited(retryAfter:)`` when the user's speech generations for the day are used up
    ///   (cached speech still plays); ``ChorusError/api(status:detail:)`` with 400 for a message without text, 503
    ///   with ``VoiceClient/speechUnavailableMessage`` when no audio could be generated (or spending is paused);
    ///   ``ChorusError/notFound`` when the user cannot see the message.
    public func speech(for messageID: String) async throws -> Speech {
        var request = API.Messaging.speech.request(messageID)
        request.request.idempotent = true  // generated once, then served from storage
        do {
            return try Speech(try await session.send(request))
        } catch ChorusError.server(status: 503, _) {
            throw ChorusError.api(status: 503, detail: VoiceClient.speechUnavailableMessage)
        }
    }
}

/// An open realtime connection (`GET /ws`), from ``VoiceClient/connect()``: the events of the user's conversations,
/// and typing notices to send.
///
/// The connection stays open until ``close()`` is called, the iteration of ``events`` stops, the connection object
/// is released (keep it while you iterate its events), or it drops (then ``events`` ends with
/// ``ChorusError/network(_:)``). It tells the server it is alive every 25 seconds.
public final class MessagingConnection: Sendable {
    /// The events, in the order the server sent them. Iterate it once (a single consumer).
    public let events: AsyncThrowingStream<MessagingEvent, any Error>
    private let socket: any WebSocketConnection
    private let reader: Task<Void, Never>
    private let keepAlive: Task<Void, Never>

    init(socket: any WebSocketConnection, early: [MessagingEvent], keepAlive interval: Duration) {
        self.socket = socket
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: MessagingEvent.self)
        events = stream
        for event in early { continuation.yield(event) }
        let reader = Task {
            while true {
                let message: WebSocketMessage
                do {
                    message = try await socket.receive()
                } catch {
                    if Task.isCancelled { continuation.finish() } else { continuation.finish(throwing: ChorusError.network(error)) }
                    return
                }
                if let dto = Self.decode(message), let event = MessagingEvent(dto) { continuation.yield(event) }
            }
        }
        let keepAlive = Task {
            let ping = Self.encode(RealtimeClientEventDTO(type: "ping"))
            while (try? await Task.sleep(for: interval)) != nil {
                do {
                    try await socket.send(ping)
                } catch {
                    return  // the reader sees the connection fail and ends the stream
                }
            }
        }
        self.reader = reader
        self.keepAlive = keepAlive
        continuation.onTermination = { _ in
            reader.cancel()
            keepAlive.cancel()
            socket.close()
        }
    }

    deinit {
        close()
    }

    /// Tells the other members of a conversation that the user is typing. Send it again every few seconds while
    /// they type; the server answers an ``MessagingEvent/error(detail:)`` event for a conversation the user is not
    /// a member of.
    ///
    /// - Throws: ``ChorusError/network(_:)`` when the connection is closed or dropped.
    public func sendTyping(in conversationID: String) async throws {
        do {
            try await socket.send(Self.encode(RealtimeClientEventDTO(type: "typing", conversationID: conversationID)))
        } catch {
            throw ChorusError.network(error)
        }
    }

    /// Closes the connection; ``events`` ends without an error. Closing twice does nothing.
    public func close() {
        reader.cancel()
        keepAlive.cancel()
        socket.close()
    }

    static func encode(_ event: RealtimeClientEventDTO) -> String {
        // Two optional strings: encoding cannot fail.
        String(decoding: (try? ChorusJSON.makeEncoder().encode(event)) ?? Data(), as: UTF8.self)
    }

    /// The event of a message; `nil` for a message that is not an event (ignored, as an older SDK ignores newer ones).
    static func decode(_ message: WebSocketMessage) -> RealtimeEventDTO? {
        let data: Data
        switch message {
        case .text(let text): data = Data(text.utf8)
        case .data(let bytes): data = bytes
        }
        return try? ChorusJSON.makeDecoder().decode(RealtimeEventDTO.self, from: data)
    }
}

// MARK: - WebSocket transport

/// A message received on a WebSocket.
public enum WebSocketMessage: Sendable, Hashable {
    /// A text message.
    case text(String)
    /// A binary message.
    case data(Data)
}

/// A WebSocket opened by a ``WebSocketTransport``.
public protocol WebSocketConnection: Sendable {
    /// Sends a text message.
    ///
    /// - Throws: when the connection is closed or failed (``WebSocketRefused`` when the server refused the upgrade).
    func send(_ text: String) async throws
    /// Sends a binary message (the audio of ``LiveTranscription``). The default throws `URLError(.unsupportedURL)`.
    ///
    /// - Throws: when the connection is closed or failed.
    func send(_ data: Data) async throws
    /// The next message, waiting for it. Called by one task at a time.
    ///
    /// - Throws: once the connection is closed or failed (``WebSocketRefused`` when the server refused the upgrade).
    func receive() async throws -> WebSocketMessage
    /// Closes the connection; a pending ``receive()`` throws. Closing twice does nothing.
    func close()
}

extension WebSocketConnection {
    /// Connections written before binary messages were needed cannot send them.
    public func send(_ data: Data) async throws {
        throw URLError(.unsupportedURL)
    }
}

/// Opens the WebSockets of ``VoiceClient/connect()``. A ``ChorusClient``'s ``HTTPTransport`` that also conforms to it
/// opens them too, so one object routes all of a client's traffic; ``URLSessionTransport`` does, with
/// `URLSessionWebSocketTask`.
///
/// Implement it to use another WebSocket stack, e.g. on a platform whose `URLSession` has no WebSocket support.
public protocol WebSocketTransport: Sendable {
    /// Starts opening a WebSocket with `request` (a `ws` or `wss` URL and the headers to send with the upgrade),
    /// giving up after the request's `timeoutInterval`.
    ///
    /// A server that answers the upgrade with an HTTP status instead of `101 Switching Protocols` is reported as
    /// ``WebSocketRefused`` — here, or by the connection's first ``WebSocketConnection/send(_:)`` or
    /// ``WebSocketConnection/receive()`` when the stack only learns it then.
    func openWebSocket(_ request: URLRequest) async throws -> any WebSocketConnection
}

/// The server answered a WebSocket upgrade with an HTTP status instead of `101 Switching Protocols`, e.g. 401 for a
/// refused access token.
public struct WebSocketRefused: Error, Sendable, Hashable {
    /// The HTTP status of the answer.
    public var status: Int
    /// Whether a 401 said the access token expired (`WWW-Authenticate: Bearer error="invalid_token",
    /// error_description="The access token expired"`), as opposed to a token or session the server refuses.
    public var tokenExpired: Bool

    /// - Parameters:
    ///   - status: the HTTP status of the answer.
    ///   - tokenExpired: whether a 401 said the access token expired.
    public init(status: Int, tokenExpired: Bool = false) {
        self.status = status
        self.tokenExpired = tokenExpired
    }

    /// The refusal an HTTP answer to the upgrade stands for, reading whether a 401 said the token expired.
    public init(_ response: HTTPURLResponse) {
        self.init(status: response.statusCode, tokenExpired: response.statusCode == 401 && ChorusError.isTokenExpired(response))
    }
}

extension URLSessionTransport: WebSocketTransport {
    /// Opens the WebSocket with a `URLSessionWebSocketTask` of ``session``; the upgrade happens in the background, and
    /// its refusal surfaces from the first send or receive.
    public func openWebSocket(_ request: URLRequest) async throws -> any WebSocketConnection {
        let task = session.webSocketTask(with: request)
        task.resume()
        return URLSessionWebSocketConnection(task: task)
    }
}

/// A `URLSessionWebSocketTask` as a ``WebSocketConnection``.
private final class URLSessionWebSocketConnection: WebSocketConnection {
    let task: URLSessionWebSocketTask

    init(task: URLSessionWebSocketTask) {
        self.task = task
    }

    func send(_ text: String) async throws {
        do {
            try await task.send(.string(text))
        } catch {
            throw refusal ?? error
        }
    }

    func send(_ data: Data) async throws {
        do {
            try await task.send(.data(data))
        } catch {
            throw refusal ?? error
        }
    }

    func receive() async throws -> WebSocketMessage {
        let message: URLSessionWebSocketTask.Message
        do {
            message = try await task.receive()
        } catch {
            throw refusal ?? error
        }
        switch message {
        case .string(let text): return .text(text)
        case .data(let data): return .data(data)
        @unknown default: return .data(Data())
        }
    }

    func close() {
        task.cancel(with: .normalClosure, reason: nil)
    }

    /// The refused upgrade's status, once the task has an HTTP answer other than 101.
    private var refusal: WebSocketRefused? {
        guard let response = task.response as? HTTPURLResponse, response.statusCode != 101 else { return nil }
        return WebSocketRefused(response)
    }
}
