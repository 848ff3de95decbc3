import ChorusAPI
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension VoiceClient {
    /// Starts a recording transcribed while it is made (`GET /audio/stream`): send the audio with
    /// ``LiveTranscription/send(_:)`` as it is recorded, then ``LiveTranscription/finish()`` for the transcript and the
    /// stored recording — the same ``Recording`` as ``upload(_:format:longForm:)`` gives, ready to send in a message.
    ///
    /// The audio is 16-bit little-endian PCM, mono, at 24 kHz (convert the microphone's with `AVAudioConverter`).
    ///
    /// - Parameters:
    ///   - language: the expected language (ISO-639-1), a hint.
    ///   - longForm: allow the long-form limit (bedtime stories).
    /// - Throws: ``ChorusError/signedOut``, ``ChorusError/api(status:detail:)`` (403 voice features off, 503 the
    ///   voice budget), ``LiveTranscriptionError`` when the server refuses the start.
    public func transcribeWhileRecording(language: String? = nil, longForm: Bool = false) async throws -> LiveTranscription {
        guard let tokens = try await session.tokenStore.load() else { throw ChorusError.signedOut }
        do {
            return try await openLive(accessToken: tokens.accessToken, language: language, longForm: longForm)
        } catch let refusal as WebSocketRefused where refusal.status == 401 {
            try await session.refreshNow()
            guard let renewed = try await session.tokenStore.load() else { throw ChorusError.signedOut }
            return try await openLive(accessToken: renewed.accessToken, language: language, longForm: longForm)
        }
    }

    private func openLive(accessToken: String, language: String?, longForm: Bool) async throws -> LiveTranscription {
        let socket = try await session.openWebSocket(path: API.Messaging.audioStream.path(), accessToken: accessToken)
        do {
            try await socket.send(LiveTranscription.encode(AudioStreamClientMessage.start(language: language, longForm: longForm)))
            // The first event: `ready`, or the refusal.
            while true {
                guard let event = LiveTranscription.decode(try await socket.receive()) else { continue }
                if event.type == "ready" { break }
                if event.type == "error" { throw LiveTranscriptionError(event) }
            }
        } catch {
            socket.close()
            if let refusal = error as? WebSocketRefused {
                if refusal.status == 401 { throw refusal }
                throw ChorusError.api(status: refusal.status, detail: HTTPURLResponse.localizedString(forStatusCode: refusal.status))
            }
            throw error
        }
        return LiveTranscription(socket: socket)
    }
}

/// The server ended a live transcription with an `error` event (`code`: `too_long`, `idle_timeout`,
/// `transcription_failed`…, see ``AudioStreamEvent``).
public struct LiveTranscriptionError: Error, Sendable, Hashable, LocalizedError {
    /// The event's code.
    public var code: String
    /// What the server says, fit to show.
    public var detail: String
    /// The stored recording, when it was kept (`transcription_failed`: transcribe it later with
    /// ``VoiceClient/transcribe(audioID:language:)``).
    public var recording: Recording?

    init(_ event: AudioStreamEvent) {
        code = event.code ?? "internal"
        detail = event.detail ?? "The recording could not be processed"
        recording = event.audio.map(Recording.init)
    }

    public var errorDescription: String? { detail }
}

/// A finished live transcription: the transcript and the stored recording.
public struct LiveTranscriptionResult: Sendable, Hashable {
    /// The final transcript (review it before sending, as with ``VoiceClient/transcribe(audioID:language:)``).
    public var transcript: Transcript
    /// The stored recording (its ``Recording/audioID`` goes in the message).
    public var recording: Recording
    /// Whether the live session made the transcript (`false`: the server transcribed the stored file after the live
    /// session failed).
    public var live: Bool
    /// Milliseconds from ``LiveTranscription/finish()``'s `end` to the transcript on the server, and the speech
    /// provider's share of them.
    public var serverMilliseconds: Double
    public var providerMilliseconds: Double
}

/// A recording being transcribed while it is made, from ``VoiceClient/transcribeWhileRecording(language:longForm:)``.
/// Send the audio as it is recorded, then ``finish()``; ``partialTranscripts`` has the transcript as it grows (it
/// grows once the recording is finished: the whole message is one turn).
public final class LiveTranscription: @unchecked Sendable {
    /// The largest frame the server takes; ``send(_:)`` splits larger buffers.
    public static let maxFrameBytes = 32 * 1024

    /// The transcript so far, after each part the server sends; finishes with the recording.
    public let partialTranscripts: AsyncStream<String>
    private let partials: AsyncStream<String>.Continuation
    private let socket: any WebSocketConnection
    private let lock = NSLock()
    private var pendingByte: UInt8?
    private var receiver: Task<Result<AudioStreamEvent, any Error>, Never>?

    init(socket: any WebSocketConnection) {
        self.socket = socket
        (partialTranscripts, partials) = AsyncStream.makeStream(of: String.self)
        receiver = Task { [socket, partials] in
            var text = ""
            defer { partials.finish() }
            do {
                while true {
                    guard let event = Self.decode(try await socket.receive()) else { continue }
                    switch event.type {
                    case "transcript.delta":
                        text += event.delta ?? ""
                        partials.yield(text)
                    case "transcript.completed":
                        return .success(event)
                    case "error":
                        return .failure(LiveTranscriptionError(event))
                    default:
                        continue
                    }
                }
            } catch {
                return .failure(ChorusError.network(error))
            }
        }
    }

    /// Sends recorded audio (16-bit little-endian PCM, mono, 24 kHz), in frames of at most ``maxFrameBytes`` whole
    /// samples (an odd byte waits for the next call).
    public func send(_ pcm: Data) async throws {
        var bytes = lock.withLock { () -> Data in
            var joined = Data()
            if let pendingByte { joined.append(pendingByte) }
            pendingByte = nil
            joined.append(pcm)
            if joined.count % 2 == 1 { pendingByte = joined.removeLast() }
            return joined
        }
        while !bytes.isEmpty {
            let frame = bytes.prefix(Self.maxFrameBytes)
            try await socket.send(Data(frame))
            bytes.removeFirst(frame.count)
        }
    }

    /// Ends the recording and waits for the transcript and the stored recording.
    ///
    /// - Throws: ``LiveTranscriptionError`` (e.g. `too_long`, `recording_rejected`, `transcription_failed` with the
    ///   stored recording), ``ChorusError/network(_:)`` when the connection is lost.
    public func finish() async throws -> LiveTranscriptionResult {
        try await socket.send(Self.encode(AudioStreamClientMessage(type: "end")))
        guard let receiver = lock.withLock({ receiver }) else { throw ChorusError.network(CancellationError()) }
        let event = try await receiver.value.get()
        socket.close()
        guard let transcript = event.transcript, let audio = event.audio else {
            throw ChorusError.decoding("transcript.completed without its transcript or recording")
        }
        return LiveTranscriptionResult(
            transcript: Transcript(transcript), recording: Recording(audio), live: event.source != .file,
            serverMilliseconds: event.timing?.totalMs ?? 0, providerMilliseconds: event.timing?.providerMs ?? 0)
    }

    /// Drops the recording: nothing is stored.
    public func cancel() async {
        try? await socket.send(Self.encode(AudioStreamClientMessage(type: "cancel")))
        socket.close()
        lock.withLock { receiver }?.cancel()
    }

    static func encode(_ message: AudioStreamClientMessage) -> String {
        (try? ChorusJSON.makeEncoder().encode(message)).map { String(decoding: $0, as: UTF8.self) } ?? #"{"type":"end"}"#
    }

    static func decode(_ message: WebSocketMessage) -> AudioStreamEvent? {
        guard case .text(let text) = message else { return nil }
        return try? ChorusJSON.makeDecoder().decode(AudioStreamEvent.self, from: Data(text.utf8))
    }
}
