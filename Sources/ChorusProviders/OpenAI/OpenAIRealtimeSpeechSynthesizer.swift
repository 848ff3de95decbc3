import ChorusCore
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Text to speech on the OpenAI Realtime API (GA WebSocket protocol): the replacement of `/v1/audio/speech`, whose
/// models (`tts-1`, `tts-1-hd`, `gpt-4o-mini-tts`) shut down on 2027-01-06, by a Realtime model such as
/// `gpt-realtime-2.1-mini`.
///
/// Each piece of text is one fresh session (`wss://…/v1/realtime?model=<request.model>` through the
/// ``RealtimeConnector`` the calls use), which receives, in one write:
/// 1. `session.update`: `type: realtime`, `output_modalities: ["audio"]`, 24 kHz `audio/pcm` output in the request's
///    voice, `audio.input.turn_detection: null` (nothing is listened to), instructions to read the user's message aloud
///    verbatim in the style of `request.instructions`, and `reasoning: {effort: minimal}` for the reasoning models
///    (`gpt-realtime-2…`);
/// 2. `conversation.item.create`: a user message with the text as `input_text`;
/// 3. `response.create`.
///
/// It then collects `response.output_audio.delta` (base64 PCM16 LE, 24 kHz mono), the
/// `response.output_audio_transcript.done` transcript and `response.done` (status, usage). An `error` event, a response
/// that is not `completed`, the session closing first, or no `response.done` within ``responseTimeout`` end the
/// attempt with a ``ProviderError``.
///
/// **Verbatim is checked.** A speech model may paraphrase, skip or add words. The transcript is compared with the text
/// (``VerbatimCheck``); above ``maximumWordErrorRate`` the text is spoken again in a fresh session, up to
/// ``attempts`` in all. When every attempt deviates, the closest one is kept and a warning is logged. Every piece,
/// retry and acceptance with deviation is counted in ``statistics``.
///
/// **Voices.** The Realtime voices are alloy, ash, ballad, coral, echo, sage, shimmer, verse, marin and cedar; the
/// product ids `nova`, `fable` and `onyx` (voices of `/v1/audio/speech` only) are sent as their nearest Realtime voice
/// (``voiceMapping``). A `voice_…` id is sent as a custom voice (`{"id": …}`); any other id is sent as given (the API
/// refuses an unknown one).
///
/// **Audio.** `.wav` requests get the PCM in a RIFF/WAVE file; `.mp3` requests are encoded by ``MP3Encoder``
/// (libmp3lame, loaded at run time). Without the library the audio is WAV (``SynthesizedSpeech/format``), logged once.
///
/// ``SynthesizedSpeech/billedCharacters`` is the input's length (the metering prices speech per character).
public struct OpenAIRealtimeSpeechSynthesizer: SpeechSynthesizer {
    /// Pieces of at most ~1,000 characters (about 70 seconds of speech): long enough for whole paragraphs, short
    /// enough that a model reads them reliably verbatim and a retry costs little.
    public static let defaultMaxInputCharacters = 1_000
    /// The Realtime API's built-in voices (`VoiceIdsShared`).
    public static let realtimeVoices: Set<String> = ["alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse", "marin", "cedar"]
    /// Product voice ids of `/v1/audio/speech` that the Realtime API does not have → their nearest Realtime voice.
    public static let voiceMapping: [String: String] = ["nova": "marin", "fable": "ballad", "onyx": "cedar"]
    /// The PCM the sessions ask for: 24 kHz (the only rate of `audio/pcm`), 16-bit little-endian, mono.
    public static let sampleRate = 24_000
    /// The most audio accepted for one piece: 10 minutes (a piece of 1,000 characters is about 70 seconds).
    public static let maximumAudioBytes = 10 * 60 * sampleRate * 2

    public let maxInputCharacters: Int
    /// The largest word error rate of the transcript against the text that still counts as verbatim.
    public let maximumWordErrorRate: Double
    /// Sessions per piece at most (the first and the retries).
    public let attempts: Int
    /// How long one session may take from connecting to `response.done`.
    public let responseTimeout: Duration
    /// Pieces, retries and acceptances with deviation, for logs and benchmarks.
    public let statistics: SpeechVerbatimStatistics
    private let connector: any RealtimeConnector
    private let eventLoopGroup: any EventLoopGroup
    private let encoder: MP3Encoder?
    private let fallbackNotice = FallbackNotice()
    private let logger: Logger

    /// - Parameters:
    ///   - connector: Opens Realtime sessions (OpenAI, or the sandbox emulator at the same path).
    ///   - encoder: The MP3 encoder; `nil` (no libmp3lame) makes `.mp3` requests answer WAV.
    public init(
        connector: any RealtimeConnector, eventLoopGroup: any EventLoopGroup, encoder: MP3Encoder? = MP3Encoder.system,
        maxInputCharacters: Int = defaultMaxInputCharacters, maximumWordErrorRate: Double = VerbatimCheck.defaultMaximumWordErrorRate,
        attempts: Int = 3, responseTimeout: Duration = .seconds(120), statistics: SpeechVerbatimStatistics = SpeechVerbatimStatistics(),
        logger: Logger
    ) {
        self.connector = connector
        self.eventLoopGroup = eventLoopGroup
        self.encoder = encoder
        self.maxInputCharacters = max(1, maxInputCharacters)
        self.maximumWordErrorRate = maximumWordErrorRate.isFinite ? max(0, maximumWordErrorRate) : VerbatimCheck.defaultMaximumWordErrorRate
        self.attempts = max(1, attempts)
        self.responseTimeout = responseTimeout
        self.statistics = statistics
        self.logger = logger
    }

    /// Whether `model` is a reasoning Realtime model (`gpt-realtime-2`, `gpt-realtime-2.1`, `gpt-realtime-2.1-mini`, …),
    /// which accepts `reasoning.effort`.
    public static func isReasoningModel(_ model: String) -> Bool {
        model.hasPrefix("gpt-realtime-2")
    }

    /// The Realtime voice sent for a product voice id.
    public static func realtimeVoice(for voiceID: String) -> String {
        voiceMapping[voiceID] ?? voiceID
    }

    /// The session's instructions: read the text verbatim, in the style asked for.
    public static func instructions(style: String?) -> String {
        var text =
            "You are a narrator. Read the user's message aloud exactly as written, word for word, in the language it is "
            + "written in. Do not add anything before or after it, do not leave anything out, do not answer, translate, "
            + "explain or comment on it: only read it."
        if let style = style?.trimmingCharacters(in: .whitespacesAndNewlines), !style.isEmpty {
            text += "\n\nHow to read it: " + style
        }
        return text
    }

    /// The three client events of one piece (`session.update`, `conversation.item.create`, `response.create`), as sent.
    public static func clientEvents(for request: SpeechRequest) -> [String] {
        [
            RealtimeClientEvent.speechSessionUpdate(
                instructions: instructions(style: request.instructions), voice: realtimeVoice(for: request.voiceID),
                sampleRate: sampleRate, reasoningEffort: isReasoningModel(request.model) ? "minimal" : nil),
            RealtimeClientEvent.userText(request.text),
            RealtimeClientEvent.responseCreate(),
        ]
    }

    // MARK: - Speaking

    public func synthesize(_ request: SpeechRequest) async throws -> SynthesizedSpeech {
        var closest: (reading: Reading, rate: Double)?
        var retries = 0
        for attempt in 1...attempts {
            let reading: Reading
            let started = ContinuousClock.now
            defer { statistics.addSessionTime(ContinuousClock.now - started) }
            do {
                reading = try await speakOnce(request)
            } catch let error as ProviderError {
                // A retry that fails keeps the closest reading so far, if there is one.
                guard let closest else {
                    statistics.record(retries: retries, acceptedWithDeviation: false, failed: true)
                    throw error
                }
                logger.warning(
                    "realtime speech retry failed: the closest reading is kept",
                    metadata: ["error": .string("\(error)"), "word_error_rate": .stringConvertible(closest.rate)])
                statistics.record(retries: retries, acceptedWithDeviation: true, failed: false)
                return try await finish(closest.reading, request: request)
            }
            let rate = VerbatimCheck.wordErrorRate(text: request.text, transcript: reading.transcript)
            logger.debug(
                "realtime speech reading",
                metadata: [
                    "model": .string(request.model), "attempt": .stringConvertible(attempt), "samples": .stringConvertible(reading.samples.count),
                    "audio_tokens": .string(reading.audioTokens.map(String.init) ?? "-"), "word_error_rate": .string(String(format: "%.3f", rate)),
                ])
            if rate <= maximumWordErrorRate {
                statistics.record(retries: retries, acceptedWithDeviation: false, failed: false)
                return try await finish(reading, request: request)
            }
            if closest == nil || rate < closest!.rate { closest = (reading, rate) }
            if attempt < attempts {
                retries += 1
                logger.info(
                    "realtime speech deviated from the text: speaking it again",
                    metadata: [
                        "model": .string(request.model), "attempt": .stringConvertible(attempt),
                        "word_error_rate": .string(String(format: "%.3f", rate)),
                    ])
            }
        }
        // Every attempt deviated: the closest is used (documented in decisions: better audio that is nearly right than none).
        let kept = closest!
        logger.warning(
            "realtime speech deviated from the text on every attempt: the closest reading is used",
            metadata: [
                "model": .string(request.model), "attempts": .stringConvertible(attempts),
                "word_error_rate": .string(String(format: "%.3f", kept.rate)),
            ])
        statistics.record(retries: retries, acceptedWithDeviation: true, failed: false)
        return try await finish(kept.reading, request: request)
    }

    /// The reading in the container asked for (WAV when MP3 was asked for but there is no encoder).
    private func finish(_ reading: Reading, request: SpeechRequest) async throws -> SynthesizedSpeech {
        let characters = TextChunker.length(request.text)
        if request.format == .mp3 {
            if let encoder {
                do {
                    // About 2 ms of CPU per second of audio: on the I/O thread pool, not a cooperative thread.
                    let samples = reading.samples
                    let mp3 = try await NIOThreadPool.singleton.runIfActive { try encoder.encode(samples, sampleRate: Self.sampleRate) }
                    return SynthesizedSpeech(audio: mp3, format: .mp3, billedCharacters: characters)
                } catch {
                    throw ProviderError.invalidResponse("MP3 encoding failed: \(error)")
                }
            }
            fallbackNotice.once {
                logger.warning("libmp3lame is not available: speech asked for as MP3 is returned as WAV")
            }
        }
        let wav = WAVSplicer.encode(PCM16Audio(samples: reading.samples, sampleRate: Self.sampleRate))
        return SynthesizedSpeech(audio: wav, format: .wav, billedCharacters: characters)
    }

    /// What one session produced.
    struct Reading: Sendable {
        var samples: [Int16]
        var transcript: String
        /// `usage.output_token_details.audio_tokens` of `response.done`, when reported.
        var audioTokens: Int?
    }

    /// One session: connect, send the three events, collect until `response.done`.
    func speakOnce(_ request: SpeechRequest) async throws -> Reading {
        let loop = eventLoopGroup.next()
        let (messages, continuation) = AsyncStream<ByteBuffer>.makeStream(bufferingPolicy: .unbounded)
        let socketBox = NIOLockedValueBox<MediaWebSocket?>(nil)
        let timedOut = NIOLockedValueBox(false)
        do {
            try await connector.connect(model: request.model, on: loop) { socket in
                socketBox.withLockedValue { $0 = socket }
                socket.onText { continuation.yield($0) }
                socket.onClose.whenComplete { _ in continuation.finish() }
            }
        } catch RealtimeConnectionError.timedOut {
            throw ProviderError.unavailable("the OpenAI Realtime API did not answer the connection in time")
        } catch RealtimeConnectionError.unavailable(let reason) {
            throw ProviderError.unavailable("the OpenAI Realtime API could not be reached: \(reason)")
        }
        guard let socket = socketBox.withLockedValue({ $0 }) else {
            throw ProviderError.unavailable("the OpenAI Realtime session did not open")
        }
        let (seconds, attoseconds) = responseTimeout.components
        let whole = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let total = whole.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000)
        let deadline = loop.scheduleTask(in: .nanoseconds(whole.overflow || total.overflow ? .max : max(0, total.partialValue))) {
            timedOut.withLockedValue { $0 = true }
            socket.close(code: .normalClosure)
            continuation.finish()
        }
        defer {
            deadline.cancel()
            socket.close(code: .normalClosure)
        }
        for event in Self.clientEvents(for: request) { socket.send(ByteBuffer(string: event)) }
        return try await withTaskCancellationHandler {
            var collector = Collector()
            for await message in messages {
                if let reading = try collector.receive(message) { return reading }
            }
            if timedOut.withLockedValue({ $0 }) {
                throw ProviderError.unavailable("the OpenAI Realtime API did not finish speaking within \(responseTimeout)")
            }
            try Task.checkCancellation()
            throw ProviderError.unavailable("the OpenAI Realtime session closed before the response was done")
        } onCancel: {
            socket.close(code: .normalClosure)
            continuation.finish()
        }
    }

    /// Reads one session's server messages as ``synthesize(_:)`` does: the samples and transcript once `response.done`
    /// completed the response, `nil` before. Throws the ``ProviderError`` the session would fail with. (The fuzz
    /// target `realtime-event` feeds arbitrary messages through it.)
    public static func reading(of messages: [ByteBuffer]) throws -> (samples: [Int16], transcript: String)? {
        var collector = Collector()
        for message in messages {
            if let reading = try collector.receive(message) { return (reading.samples, reading.transcript) }
        }
        return nil
    }

    /// Collects one response's events.
    struct Collector {
        var pcm: [UInt8] = []
        var transcript: String?
        var transcriptDeltas = ""

        /// Reads one server event; the reading once `response.done` completed it. Every other event
        /// (`session.created`, `response.created`, item and part events…) is skipped.
        mutating func receive(_ message: ByteBuffer) throws -> Reading? {
            guard let event = RealtimeServerEvent.parse(message) else {
                throw ProviderError.invalidResponse("the OpenAI Realtime API sent an unreadable event")
            }
            switch event {
            case .audioDelta(_, let delta):
                guard let audio = Data(base64Encoded: Data(delta.readableBytesView)) else {
                    throw ProviderError.invalidResponse("the OpenAI Realtime API sent an audio delta that is not base64")
                }
                guard pcm.count <= OpenAIRealtimeSpeechSynthesizer.maximumAudioBytes - audio.count else {
                    throw ProviderError.invalidResponse("the OpenAI Realtime API sent more than 10 minutes of audio for one piece")
                }
                pcm.append(contentsOf: audio)
            case .malformed(let type, let reason):
                throw ProviderError.invalidResponse(
                    type == "response.output_audio.delta" ? "the OpenAI Realtime API sent \(reason)" : "the OpenAI Realtime API sent an unreadable \(type) event")
            case .assistantTranscriptDelta(_, let text):
                if transcriptDeltas.utf8.count < 1 << 20 { transcriptDeltas += text }
            case .assistantTranscript(_, let text):
                transcript = text
            case .error(let detail):
                throw Self.providerError(detail)
            case .responseDone(let response):
                switch response.status {
                case "completed":
                    break
                case "failed":
                    throw Self.providerError(response.error, fallback: "the speech response failed")
                case "incomplete":
                    let reason = response.reason ?? "unknown"
                    throw ProviderError.rejected(
                        httpStatus: 400, code: reason, message: "the OpenAI Realtime API stopped the speech response early (\(reason))")
                default:
                    throw ProviderError.unavailable("the OpenAI Realtime speech response ended as \(response.status ?? "unknown")")
                }
                guard pcm.count >= 2 else { throw ProviderError.invalidResponse("the OpenAI Realtime API returned no audio") }
                let count = pcm.count / 2
                let samples = [Int16](unsafeUninitializedCapacity: count) { buffer, initialized in
                    for index in 0..<count {
                        buffer[index] = Int16(bitPattern: UInt16(pcm[2 * index]) | UInt16(pcm[2 * index + 1]) << 8)
                    }
                    initialized = count
                }
                return Reading(samples: samples, transcript: transcript ?? transcriptDeltas, audioTokens: response.usage?.outputAudioTokens)
            case .sessionCreated, .sessionUpdated, .speechStarted, .speechStopped, .calleeTranscript, .responseCreated, .functionCall, .other:
                break
            }
            return nil
        }

        /// The ``ProviderError`` of an `error` event's or a failed response's error object.
        static func providerError(_ error: RealtimeErrorDetail?, fallback: String = "the OpenAI Realtime API reported an error") -> ProviderError {
            let message = error.flatMap { $0.message.isEmpty ? nil : $0.message } ?? fallback
            // A missing `type` reads as `unknown` (RealtimeErrorDetail): like no error object, the service's fault.
            switch (error.flatMap { $0.type == "unknown" ? nil : $0.type }, error?.code) {
            case (_, "insufficient_quota"), ("insufficient_quota", _):
                return .quotaExceeded(message: message)
            case (_, "rate_limit_exceeded"), ("rate_limit_exceeded", _), ("rate_limit_error", _):
                return .rateLimited(retryAfter: nil, message: message)
            case ("server_error", _), (nil, _):
                return .unavailable("OpenAI Realtime: \(message)")
            default:
                return .rejected(httpStatus: 400, code: error?.code, message: message)
            }
        }
    }
}

/// Counts of ``OpenAIRealtimeSpeechSynthesizer``'s verbatim check: how often a piece had to be spoken again and how
/// often a reading that still deviated had to be kept.
public final class SpeechVerbatimStatistics: Sendable {
    public struct Snapshot: Sendable, Equatable {
        /// Pieces of text spoken (each a ``SpeechSynthesizer/synthesize(_:)`` call that returned audio).
        public var chunks = 0
        /// Extra sessions because a reading deviated.
        public var retries = 0
        /// Pieces whose every reading deviated (the closest was kept).
        public var acceptedWithDeviation = 0
        /// Pieces that failed with an error.
        public var failed = 0
        /// Wall-clock seconds spent in sessions (connecting to `response.done`), every attempt included.
        public var sessionSeconds = 0.0

        public init() {}

        /// Retries per piece spoken.
        public var retryRate: Double { chunks == 0 ? 0 : Double(retries) / Double(chunks) }
        /// The share of pieces kept with a deviation.
        public var deviationRate: Double { chunks == 0 ? 0 : Double(acceptedWithDeviation) / Double(chunks) }

        /// The counts since `earlier` (the same statistics, read before).
        public func since(_ earlier: Snapshot) -> Snapshot {
            var difference = Snapshot()
            difference.chunks = chunks - earlier.chunks
            difference.retries = retries - earlier.retries
            difference.acceptedWithDeviation = acceptedWithDeviation - earlier.acceptedWithDeviation
            difference.failed = failed - earlier.failed
            difference.sessionSeconds = sessionSeconds - earlier.sessionSeconds
            return difference
        }

        /// `chunks N, retries R (rate), accepted with deviation D (rate), failed F` for reports.
        public var summary: String {
            String(
                format: "%d chunks, %d retries (%.1f %% of chunks), %d accepted with deviation (%.1f %%), %d failed; %.2f s in Realtime sessions",
                chunks, retries, retryRate * 100, acceptedWithDeviation, deviationRate * 100, failed, sessionSeconds)
        }
    }

    private let counts = NIOLockedValueBox(Snapshot())

    public init() {}

    public var snapshot: Snapshot { counts.withLockedValue { $0 } }

    func addSessionTime(_ duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        counts.withLockedValue { $0.sessionSeconds += seconds }
    }

    func record(retries: Int, acceptedWithDeviation: Bool, failed: Bool) {
        counts.withLockedValue { counts in
            counts.retries += retries
            if failed {
                counts.failed += 1
            } else {
                counts.chunks += 1
                if acceptedWithDeviation { counts.acceptedWithDeviation += 1 }
            }
        }
    }
}

/// Runs something once (the warning that MP3 falls back to WAV).
final class FallbackNotice: Sendable {
    private let done = NIOLockedValueBox(false)

    func once(_ body: () -> Void) {
        let first = done.withLockedValue { done in
            defer { done = true }
            return !done
        }
        if first { body() }
    }
}
