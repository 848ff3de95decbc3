import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// What a Realtime transcription session reports.
public enum LiveTranscriptionEvent: Sendable, Equatable {
    /// More of the transcript (`conversation.item.input_audio_transcription.delta`).
    case delta(String)
    /// The whole transcript of the committed audio (`conversation.item.input_audio_transcription.completed`).
    case completed(transcript: String, usage: LiveTranscriptionUsage?)
    /// The session failed: an `error` event, `conversation.item.input_audio_transcription.failed`, or a close before
    /// the transcript.
    case failed(String)
}

/// The `usage` of a completed transcription: by duration (`{type: "duration", seconds}`) or by tokens.
public struct LiveTranscriptionUsage: Sendable, Equatable {
    public var seconds: Double?
    public var inputTokens: Int?
    public var outputTokens: Int?

    public init(seconds: Double? = nil, inputTokens: Int? = nil, outputTokens: Int? = nil) {
        self.seconds = seconds
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
    }
}

/// A transcription session of the OpenAI Realtime API (GA): the socket opened with `?intent=transcription`, configured
/// with `session.update` `{type: "transcription", audio: {input: {format: audio/pcm 24 kHz, transcription: {model,
/// language}, turn_detection: null}}}` — no turn detection: the audio is one turn, committed by ``commit()`` with
/// `input_audio_buffer.commit` once the recording ends. Audio goes up as `input_audio_buffer.append` (base64 PCM16
/// little-endian, 24 kHz mono); ``events`` delivers the transcript deltas, then the completed transcript or the failure.
/// The stream ends after `completed`, a failure, or the socket's close.
public final class RealtimeTranscriptionSession: Sendable {
    /// The only input format OpenAI's transcription sessions take over WebSocket besides G.711: PCM16 at 24 kHz.
    public static let sampleRate = 24_000

    /// Deltas, then `completed` or `failed`; finishes after either (or when the socket closes).
    public let events: AsyncStream<LiveTranscriptionEvent>
    private let continuation: AsyncStream<LiveTranscriptionEvent>.Continuation
    private let socket: NIOLockedValueBox<MediaWebSocket?>
    private let finished = NIOLockedValueBox(false)

    private init() {
        (events, continuation) = AsyncStream.makeStream(of: LiveTranscriptionEvent.self, bufferingPolicy: .unbounded)
        socket = NIOLockedValueBox(nil)
    }

    /// Opens and configures a session with `model`; `language` (ISO-639-1) is a hint.
    public static func open(
        connector: any RealtimeConnector, model: String, language: String?, on eventLoop: any EventLoop
    ) async throws -> RealtimeTranscriptionSession {
        let session = RealtimeTranscriptionSession()
        let update = try sessionUpdate(model: model, language: language)
        try await connector.connectTranscription(on: eventLoop) { socket in
            session.socket.withLockedValue { $0 = socket }
            socket.onText { text in session.receive(text) }
            socket.onClose.whenComplete { _ in session.finish(.failed("the transcription session closed before its transcript")) }
            var buffer = MediaWebSocket.messageBuffer(capacity: update.count, allocator: socket.channel.allocator)
            buffer.writeBytes(update)
            socket.send(buffer)
        }
        return session
    }

    /// The `session.update` event configuring the session.
    static func sessionUpdate(model: String, language: String?) throws -> Data {
        var transcription: [String: Any] = ["model": model]
        if let language { transcription["language"] = language }
        let event: [String: Any] = [
            "type": "session.update",
            "session": [
                "type": "transcription",
                "audio": [
                    "input": [
                        "format": ["type": "audio/pcm", "rate": sampleRate],
                        "transcription": transcription,
                        "turn_detection": NSNull(),
                    ] as [String: Any]
                ],
            ] as [String: Any],
        ]
        return try JSONSerialization.data(withJSONObject: event, options: [.sortedKeys])
    }

    /// Sends PCM16 (little-endian, 24 kHz mono) audio.
    public func append(_ pcm: ByteBuffer) {
        guard let socket = socket.withLockedValue({ $0 }) else { return }
        let encoded = Data(pcm.readableBytesView).base64EncodedString()
        let prefix = #"{"type":"input_audio_buffer.append","audio":""#
        var buffer = MediaWebSocket.messageBuffer(capacity: prefix.utf8.count + encoded.utf8.count + 2, allocator: socket.channel.allocator)
        buffer.writeString(prefix)
        buffer.writeString(encoded)
        buffer.writeString(#""}"#)
        socket.send(buffer)
    }

    /// Ends the audio: `input_audio_buffer.commit` (the transcript follows as ``events``).
    public func commit() {
        guard let socket = socket.withLockedValue({ $0 }) else { return }
        var buffer = MediaWebSocket.messageBuffer(capacity: 40, allocator: socket.channel.allocator)
        buffer.writeString(#"{"type":"input_audio_buffer.commit"}"#)
        socket.send(buffer)
    }

    /// Closes the session (normal closure) and ends ``events``.
    public func close() {
        finish(nil)
        socket.withLockedValue { $0 }?.close()
    }

    private struct ServerEvent: Decodable {
        struct Failure: Decodable {
            var message: String?
            var code: String?
            enum CodingKeys: String, CodingKey {
                case message
                case code
            }
        }

        struct Usage: Decodable {
            var type: String?
            var seconds: Double?
            var inputTokens: Int?
            var outputTokens: Int?
            enum CodingKeys: String, CodingKey {
                case type
                case seconds
                case inputTokens = "input_tokens"
                case outputTokens = "output_tokens"
            }
        }

        var type: String
        var delta: String?
        var transcript: String?
        var error: Failure?
        var usage: Usage?

        enum CodingKeys: String, CodingKey {
            case type
            case delta
            case transcript
            case error
            case usage
        }
    }

    private func receive(_ text: ByteBuffer) {
        guard let event = try? JSONDecoder().decode(ServerEvent.self, from: Data(text.readableBytesView)) else { return }
        switch event.type {
        case "conversation.item.input_audio_transcription.delta":
            if let delta = event.delta, !delta.isEmpty, !finished.withLockedValue({ $0 }) { continuation.yield(.delta(delta)) }
        case "conversation.item.input_audio_transcription.completed":
            let usage = event.usage.map { LiveTranscriptionUsage(seconds: $0.seconds, inputTokens: $0.inputTokens, outputTokens: $0.outputTokens) }
            finish(.completed(transcript: event.transcript ?? "", usage: usage))
        case "conversation.item.input_audio_transcription.failed", "error":
            let detail = [event.error?.code, event.error?.message].compactMap { $0 }.joined(separator: ": ")
            finish(.failed(detail.isEmpty ? event.type : detail))
        default:
            break
        }
    }

    /// Delivers the last event (if any) and ends the stream, once.
    private func finish(_ last: LiveTranscriptionEvent?) {
        let first = finished.withLockedValue { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        if let last { continuation.yield(last) }
        continuation.finish()
    }
}
