import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOWebSocket
import Vapor

/// `GET /audio/stream`: transcription while recording (seed 003: "transcription appears within 2 seconds of finishing
/// recording"). A WebSocket of a signed-in user (`Authorization: Bearer`, or `?access_token=` for browsers).
///
/// The app sends `{"type":"start","format":"pcm16","sample_rate":24000}` (optional `language`, `long_form`), then the
/// recording as binary frames of 16-bit little-endian 24 kHz mono PCM as it records (at most ``maxChunkBytes`` each,
/// whole samples), then `{"type":"end"}` (or `{"type":"cancel"}` to drop it). The server relays the audio to an OpenAI
/// Realtime transcription session (``RealtimeTranscriptionSession``, `CHORUS_VOICE_LIVE_TRANSCRIPTION_MODEL`) and
/// spools it to disk as a WAV file; at `end` it commits the audio upstream, stores the recording through the very path
/// of `POST /audio` (``AudioController/storeSpooled(_:size:declared:mediaType:longForm:userID:profile:store:threadPool:logger:)``:
/// the same `audio_id`, format and duration checks and limits), relays the transcript deltas and answers
/// `transcript.completed` with the transcript (stored as the recording's, as `POST /transcriptions` would) and the
/// recording. When the live session cannot be opened or fails, the stored recording is transcribed as a file instead
/// (`source: "file"`), so nothing is lost. Every error is an `error` event with a `code`, then a close.
struct AudioStreamController: RouteCollection {
    let services: ChorusServices

    /// The largest binary frame: 32 KiB, about 0.7 s of audio (apps send 20–250 ms).
    static let maxChunkBytes = 32 * 1024
    /// PCM16 mono at 24 kHz.
    static let bytesPerSecond = 48_000
    /// How long the live session may take to give the transcript after the commit before the file path takes over.
    static let completionTimeout: Duration = .seconds(20)

    func boot(routes: any RoutesBuilder) throws {
        // Authenticated in the handler (the token may come in the query: browsers cannot set headers on a WebSocket).
        routes.on(API.Messaging.audioStream, use: connect)
    }

    @Sendable
    func connect(_ req: Request) async throws -> Response {
        let user = try await UserAuthenticator(services: services).authenticate(req, allowsQueryToken: true)
        // Refusals that need no socket are HTTP answers before the upgrade: voice features off (403), a spent budget (503).
        let profile = try await VoicePrivacy.requireVoiceAllowed(userID: user.id, store: req.store, now: services.now())
        try await services.messaging.meter.requireBudget()
        // A recording stream is one of the user's WebSockets: it counts toward the caps of `/ws` (CHORUS_WS_PER_USER,
        // 429; CHORUS_MAX_REALTIME_CONNECTIONS, 503), checked before the upgrade; a socket that loses a race for the
        // last place after it is closed with 1013.
        let hub = services.messaging.hub
        if let refusal = hub.refusal(for: .webSocket, userID: user.id) { throw refusal.apiError }
        let context = AudioStreamSession.Context(
            services: services, userID: user.id, profile: profile, store: try req.store, threadPool: req.application.threadPool,
            logger: req.logger, eventLoop: req.eventLoop)
        return req.webSocket(maxFrameSize: .init(integerLiteral: 1 << 20)) { _, socket in
            do {
                try hub.admit(.webSocket, userID: user.id)
            } catch {
                socket.close(code: SocketOutbox.slowConsumerCloseCode, promise: nil)
                return
            }
            socket.onClose.whenComplete { _ in hub.release(.webSocket, userID: user.id) }
            AudioStreamSession(context: context, socket: socket).start()
        }
    }
}

/// One recording streamed over one socket. Messages are handled one at a time, in order, by one task.
final class AudioStreamSession: Sendable {
    struct Context: Sendable {
        let services: ChorusServices
        let userID: String
        let profile: MessagingProfileRecord
        let store: ChorusStore
        let threadPool: NIOThreadPool
        let logger: Logger
        let eventLoop: any EventLoop
    }

    enum Inbound: Sendable {
        case text(String)
        case binary(ByteBuffer)
        case idle
        case closed
    }

    /// A refusal: the `error` event's code and detail, and the close code.
    struct Failure: Error {
        let code: String
        let detail: String
        var close: WebSocketErrorCode = .policyViolation
        var audio: AudioUploadResponse?
    }

    private let context: Context
    private let socket: WebSocket
    private let inbound: AsyncStream<Inbound>
    private let continuation: AsyncStream<Inbound>.Continuation
    /// Bytes of audio received so far (counted as frames arrive, so a flood is dropped before it is queued).
    private let receivedBytes = NIOLockedValueBox(0)
    private let lastActivity = NIOLockedValueBox(ContinuousClock.now)
    private static let encoder = ChorusJSON.makeEncoder()
    private static let decoder = ChorusJSON.makeDecoder()

    init(context: Context, socket: WebSocket) {
        self.context = context
        self.socket = socket
        (inbound, continuation) = AsyncStream.makeStream(of: Inbound.self, bufferingPolicy: .unbounded)
    }

    func start() {
        let limit = context.services.configuration.voiceMessages.maxUploadBytes + AudioStreamController.maxChunkBytes
        socket.onText { [self] _, text in
            lastActivity.withLockedValue { $0 = .now }
            continuation.yield(.text(String(text.prefix(4_096))))
        }
        socket.onBinary { [self] _, buffer in
            lastActivity.withLockedValue { $0 = .now }
            // Past the upload limit the session is ending with `too_large`: nothing more is queued.
            let admitted = receivedBytes.withLockedValue { total in
                total += buffer.readableBytes
                return total <= limit
            }
            if admitted { continuation.yield(.binary(buffer)) }
        }
        socket.onClose.whenComplete { [continuation] _ in continuation.yield(.closed) }
        let idle = context.services.configuration.voiceMessages.streamIdleSeconds
        let watchdog = Task { [lastActivity, continuation] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(Int(min(idle * 250, 1_000))))
                if ContinuousClock.now - lastActivity.withLockedValue({ $0 }) > .milliseconds(Int(idle * 1_000)) {
                    continuation.yield(.idle)
                    return
                }
            }
        }
        let context = context
        context.services.background.track { [self] in
            await MeteringContext.with(userID: context.userID) {
                await run()
            }
            watchdog.cancel()
        }
    }

    // MARK: - The session

    private struct Recording {
        let spool: URL
        let handle: FileHandle
        let language: String?
        let longForm: Bool
        let reservation: SpendReservation?
        var bytes = 0
        var live: RealtimeTranscriptionSession?
        var forwarder: Task<(LiveTranscriptionEvent, ContinuousClock.Instant)?, Never>?
    }

    private func run() async {
        var recording: Recording?
        do {
            loop: for await message in inbound {
                switch message {
                case .closed:
                    break loop
                case .idle:
                    let seconds = context.services.configuration.voiceMessages.streamIdleSeconds
                    throw Failure(code: "idle_timeout", detail: "Nothing was received for \(Self.format(seconds)) seconds")
                case .text(let text):
                    guard let request = try? Self.decoder.decode(AudioStreamClientMessage.self, from: Data(text.utf8)) else {
                        throw Failure(code: "invalid_message", detail: "Send JSON such as {\"type\":\"start\",\"format\":\"pcm16\",\"sample_rate\":24000}")
                    }
                    switch request.type {
                    case "start":
                        guard recording == nil else { throw Failure(code: "already_started", detail: "The recording has already started") }
                        recording = try await begin(request)
                        send(AudioStreamEvent(type: "ready"))
                    case "end":
                        guard let current = recording else { throw Failure(code: "not_started", detail: "Send start before end") }
                        recording = nil
                        try await finish(current)
                        break loop
                    case "cancel":
                        break loop
                    default:
                        throw Failure(code: "invalid_message", detail: "Unknown message type \(String(request.type.prefix(40)))")
                    }
                case .binary(let chunk):
                    guard var current = recording else { throw Failure(code: "not_started", detail: "Send start before any audio") }
                    try await append(chunk, to: &current)
                    recording = current
                }
            }
        } catch let failure as Failure {
            send(AudioStreamEvent(type: "error", audio: failure.audio, code: failure.code, detail: failure.detail))
            try? await socket.close(code: failure.close)
        } catch {
            context.logger.error("recording stream failed", metadata: ["error": .string("\(error)")])
            send(AudioStreamEvent(type: "error", code: "internal", detail: "The recording could not be processed"))
            try? await socket.close(code: .unexpectedServerError)
        }
        if let recording { await abandon(recording) }
        continuation.finish()
        if !socket.isClosed { try? await socket.close(code: .normalClosure) }
    }

    /// `start`: checks the format, reserves the transcription against the voice limits, opens the spool file and the
    /// live session.
    private func begin(_ request: AudioStreamClientMessage) async throws -> Recording {
        guard request.format ?? "pcm16" == "pcm16", request.sampleRate ?? 24_000 == RealtimeTranscriptionSession.sampleRate else {
            throw Failure(code: "unsupported_format", detail: "Stream 16-bit little-endian PCM, mono, at 24000 Hz (format pcm16, sample_rate 24000)")
        }
        if let language = request.language, !(2...3).contains(language.count) || !language.allSatisfy({ $0.isASCII && $0.isLetter }) {
            throw Failure(code: "invalid_message", detail: "language: use an ISO-639-1 code such as en")
        }
        let services = context.services
        let settings = services.configuration.voiceMessages
        let longForm = request.longForm ?? false
        // The live transcription is one provider operation, reserved for the longest recording allowed and settled to
        // what it really took.
        let estimate = services.configuration.prices.transcriptionCostMicrodollars(
            model: settings.liveTranscriptionModel, seconds: (longForm ? settings.longFormMaxSeconds : settings.maxSeconds).rounded(.up))
        let reservation: SpendReservation
        do {
            reservation = try await services.messaging.meter.reserve(estimate: estimate, operation: .transcription)
        } catch let error as APIError {
            throw Failure(code: "limit_reached", detail: Self.detail(of: error), close: .unknown(1013))
        }
        let spool = services.messaging.spoolDirectory.appendingPathComponent("stream-\(UUID().uuidString)")
        let handle: FileHandle
        do {
            handle = try await context.threadPool.runIfActive {
                guard FileManager.default.createFile(atPath: spool.path, contents: try PCMWAV.header(dataByteCount: 0, sampleRate: RealtimeTranscriptionSession.sampleRate), attributes: [.posixPermissions: 0o600])
                else { throw Failure(code: "internal", detail: "Could not store the recording", close: .unexpectedServerError) }
                let handle = try FileHandle(forWritingTo: spool)
                try handle.seekToEnd()
                return handle
            }
        } catch {
            await release(reservation)
            throw error
        }
        var recording = Recording(spool: spool, handle: handle, language: request.language?.lowercased(), longForm: longForm, reservation: reservation)
        do {
            let live = try await RealtimeTranscriptionSession.open(
                connector: services.realtime, model: settings.liveTranscriptionModel, language: recording.language, on: context.eventLoop)
            recording.live = live
            recording.forwarder = Task { [self] in
                for await event in live.events {
                    switch event {
                    case .delta(let delta):
                        send(AudioStreamEvent(type: "transcript.delta", delta: delta))
                    case .completed, .failed:
                        return (event, ContinuousClock.now)
                    }
                }
                return nil
            }
        } catch {
            // The recording is still kept and transcribed as a file at the end.
            context.logger.warning("live transcription unavailable: the recording will be transcribed as a file", metadata: ["error": .string("\(error)")])
        }
        return recording
    }

    /// A binary frame: checked against the limits, spooled and relayed.
    private func append(_ chunk: ByteBuffer, to recording: inout Recording) async throws {
        let count = chunk.readableBytes
        guard count <= AudioStreamController.maxChunkBytes else {
            throw Failure(
                code: "chunk_too_large", detail: "Send audio in frames of at most \(AudioStreamController.maxChunkBytes) bytes", close: .messageTooLarge)
        }
        guard count % 2 == 0 else { throw Failure(code: "invalid_chunk", detail: "Frames hold whole 16-bit samples (an even number of bytes)") }
        guard count > 0 else { return }
        let settings = context.services.configuration.voiceMessages
        let total = recording.bytes + count
        guard total + PCMWAV.headerSize <= settings.maxUploadBytes else {
            throw Failure(
                code: "too_large", detail: "Recordings are limited to \(settings.maxUploadBytes / (1024 * 1024)) MB", close: .messageTooLarge)
        }
        let maxSeconds = recording.longForm ? settings.longFormMaxSeconds : settings.maxSeconds
        guard Double(total) / Double(AudioStreamController.bytesPerSecond) <= maxSeconds + 0.5 else {
            throw Failure(code: "too_long", detail: "Recordings are limited to \(AudioController.describe(seconds: maxSeconds))")
        }
        recording.bytes = total
        let data = Data(chunk.readableBytesView)
        let handle = recording.handle
        try await context.threadPool.runIfActive { try handle.write(contentsOf: data) }
        recording.live?.append(chunk)
    }

    /// `end`: commits the live session, stores the recording, and answers the transcript.
    private func finish(_ recording: Recording) async throws {
        let ended = ContinuousClock.now
        let services = context.services
        let settings = services.configuration.voiceMessages
        // The WAV header now that the size is known.
        let handle = recording.handle
        let bytes = recording.bytes
        try await context.threadPool.runIfActive {
            try handle.seek(toOffset: 0)
            try handle.write(contentsOf: PCMWAV.header(dataByteCount: bytes, sampleRate: RealtimeTranscriptionSession.sampleRate))
            try handle.close()
        }
        recording.live?.commit()
        let committed = ContinuousClock.now
        defer { try? FileManager.default.removeItem(at: recording.spool) }

        let record: AudioRecord
        do {
            record = try await AudioController(services: services).storeSpooled(
                recording.spool, size: Int64(bytes + PCMWAV.headerSize), declared: .wav, mediaType: "audio/wav", longForm: recording.longForm,
                userID: context.userID, profile: context.profile, store: context.store, threadPool: context.threadPool, logger: context.logger)
        } catch let error as APIError {
            recording.live?.close()
            if let reservation = recording.reservation { await release(reservation) }
            throw Failure(code: "recording_rejected", detail: Self.detail(of: error))
        }
        let audio = AudioController.dto(record)

        // The live transcript, within the timeout.
        var outcome: (LiveTranscriptionEvent, ContinuousClock.Instant)?
        if let forwarder = recording.forwarder {
            outcome = await Self.value(of: forwarder, within: AudioStreamController.completionTimeout)
            recording.live?.close()
        }
        let transcript: TranscriptionResponse
        let source: AudioStreamTranscriptSource
        var provider = Duration.zero
        if case .completed(let text, let usage)? = outcome?.0, let completedAt = outcome?.1 {
            provider = completedAt - committed
            var transcription = Transcription(
                text: text.trimmingCharacters(in: .whitespacesAndNewlines), language: recording.language, durationSeconds: usage?.seconds,
                evidence: .none, model: settings.liveTranscriptionModel)
            transcription.inputTokens = usage?.inputTokens
            transcription.outputTokens = usage?.outputTokens
            await services.messaging.meter.record(
                .transcription, provider: services.providerNames["transcription"] ?? "openai", model: settings.liveTranscriptionModel,
                consumption: Consumption(
                    inputTokens: usage?.inputTokens ?? 0, outputTokens: usage?.outputTokens ?? 0,
                    audioSeconds: usage?.seconds ?? Double(record.durationMs) / 1_000),
                settling: recording.reservation)
            let spool = recording.spool
            let wav = try? await context.threadPool.runIfActive { try Data(contentsOf: spool) }
            transcript = try await VoiceTranscription(services: services).keepLive(
                transcription, of: record, wav: wav, language: recording.language, store: context.store, logger: context.logger)
            source = .stream
        } else {
            if let reservation = recording.reservation { await release(reservation) }
            let reason: String
            switch outcome?.0 {
            case .failed(let detail)?: reason = detail
            case nil where recording.live == nil: reason = "no live session"
            default: reason = "no transcript within \(AudioStreamController.completionTimeout)"
            }
            context.logger.warning(
                "live transcription failed: transcribing the stored recording", metadata: ["audio_id": .string(record.id), "reason": .string(reason)])
            do {
                (transcript, provider) = try await VoiceTranscription(services: services).transcribe(
                    record, language: recording.language, store: context.store, logger: context.logger)
            } catch let error as APIError {
                throw Failure(code: "transcription_failed", detail: Self.detail(of: error), close: .unexpectedServerError, audio: audio)
            }
            source = .file
        }
        let timing = AudioStreamTiming(totalMs: Self.milliseconds(ContinuousClock.now - ended), providerMs: Self.milliseconds(provider))
        send(AudioStreamEvent(type: "transcript.completed", transcript: transcript, audio: audio, source: source, timing: timing))
        try? await socket.close(code: .normalClosure)
    }

    /// A recording that will not be finished: the live session closed, the spool deleted, the reservation given back.
    private func abandon(_ recording: Recording) async {
        recording.live?.close()
        recording.forwarder?.cancel()
        try? recording.handle.close()
        try? FileManager.default.removeItem(at: recording.spool)
        if let reservation = recording.reservation { await release(reservation) }
    }

    private func release(_ reservation: SpendReservation) async {
        do {
            try await context.store.metering.releaseFeatureSpend(reservation)
        } catch {
            context.logger.error("could not give a spend reservation back", metadata: ["error": .string("\(error)")])
        }
    }

    private func send(_ event: AudioStreamEvent) {
        guard let data = try? Self.encoder.encode(event) else { return }
        socket.send(String(decoding: data, as: UTF8.self), promise: nil)
    }

    /// The task's value, or `nil` when it takes longer than `timeout`.
    static func value<T: Sendable>(of task: Task<T?, Never>, within timeout: Duration) async -> T? {
        await withTaskGroup(of: T?.self) { group in
            group.addTask { await task.value }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return ((Double(seconds) * 1_000 + Double(attoseconds) / 1e15) * 10).rounded() / 10
    }

    /// What an ``APIError`` tells the person.
    static func detail(of error: APIError) -> String {
        switch error {
        case .detail(_, let message), .unavailable(_, let message), .limitReached(_, let message): message
        case .validation(let summary, _): summary
        default: "\(error)"
        }
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(clampingRounded: seconds)) : String(format: "%.1f", seconds)
    }
}
