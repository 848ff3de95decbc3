import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Logging
import NIOPosix
import Vapor

/// Who may use voice features: not accounts that opted out, and never children under 13 (COPPA, ``VoiceDataPolicy``).
enum VoicePrivacy {
    /// The profile of an account allowed to store voice data, or 403 with the reason.
    static func requireVoiceAllowed(userID: String, store: ChorusStore, now: Date) async throws -> MessagingProfileRecord {
        guard let profile = try await store.messaging.messagingProfile(userID: userID) else { throw APIError.notAuthenticated }
        guard profile.voiceEnabled else {
            throw APIError.detail(.forbidden, "Voice features are turned off for this account (PUT /me/profile to turn them on)")
        }
        guard VoiceDataPolicy.mayStoreVoiceData(birthYear: profile.birthYear, now: now) else {
            throw APIError.detail(.forbidden, "Voice features are not available for accounts of children under 13")
        }
        return profile
    }
}

/// Transcribes a stored recording through the configured ``Transcriber`` and keeps the result: once per recording and
/// requested language (`auto` when none is given). Later requests are answered from storage without a provider call;
/// concurrent requests on any instance wait for the one that claimed the transcription (`audio_transcripts`, a
/// compare-and-set claim). The provider call is reserved against the voice budgets and the owner's daily operations
/// first (``UsageMeter/metered(_:provider:estimate:_:consumption:)``).
struct VoiceTranscription {
    let services: ChorusServices

    /// The PRD's message when transcription fails (Appendix B).
    static let failureMessage = "Couldn't transcribe audio. Please try again in a quieter environment."
    /// How long a transcription may hold its claim before another request may take over.
    static let claimLifetime: TimeInterval = 120

    /// The transcript, and how long the provider took (reported as `Server-Timing`; zero when answered from storage).
    func transcribe(
        _ record: AudioRecord, language: String?, store: ChorusStore, logger: Logger
    ) async throws -> (
        TranscriptionResponse, provider: Duration
    ) {
        let languageKey = language?.lowercased() ?? "auto"
        let waitUntil = ContinuousClock.now + .seconds(Self.claimLifetime)
        while true {
            if let stored = try await store.usageLimits.storedTranscript(audioID: record.id, languageKey: languageKey), stored.status == "ready",
                let text = stored.transcript
            {
                return (
                    TranscriptionResponse(
                        transcript: text, confidence: stored.confidence, confidenceLabel: stored.label.map(ConfidenceLabel.init(rawValue:)), language: stored.language,
                        durationSeconds: Double(record.durationMs) / 1000), .zero
                )
            }
            let now = services.now()
            if try await store.usageLimits.claimTranscript(
                audioID: record.id, languageKey: languageKey, now: now, until: now.addingTimeInterval(Self.claimLifetime))
            {
                do {
                    return try await transcribeClaimed(record, language: language, languageKey: languageKey, store: store, logger: logger)
                } catch {
                    try? await store.usageLimits.abandonTranscript(audioID: record.id, languageKey: languageKey)
                    throw error
                }
            }
            // Another request is transcribing it.
            guard ContinuousClock.now < waitUntil else { throw APIError.unavailable(retryAfter: 5, detail: Self.failureMessage) }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    private func transcribeClaimed(
        _ record: AudioRecord, language: String?, languageKey: String, store: ChorusStore, logger: Logger
    ) async throws -> (
        TranscriptionResponse, provider: Duration
    ) {
        let messaging = services.messaging
        guard let key = BlobKey(rawValue: record.blobKey),
            let audio = try await messaging.blobs.data(key, limit: services.configuration.voiceMessages.maxUploadBytes + 1)
        else { throw APIError.notFound("Recording not found") }
        let seconds = Double(record.durationMs) / 1_000
        // OpenAI bills transcription by the whole second (`usage: {type: "duration", seconds}`): the estimate rounds up
        // the same way, so what is reserved against the budgets is not less than what is then metered.
        let estimate = services.configuration.prices.transcriptionCostMicrodollars(
            model: services.configuration.voiceMessages.transcriptionModel, seconds: seconds.rounded(.up))
        var provider = Duration.zero
        let transcription: Transcription
        do {
            transcription = try await MeteringContext.with(userID: record.ownerID) {
                try await messaging.meter.metered(
                    .transcription, provider: services.providerNames["transcription"] ?? "openai", estimate: estimate
                ) {
                    let started = ContinuousClock.now
                    defer { provider = ContinuousClock.now - started }
                    return try await messaging.transcriber.transcribe(
                        TranscriptionRequest(
                            audio: audio, filename: "recording.\(record.format)", contentType: record.contentType, language: language))
                } consumption: { transcription in
                    (
                        transcription.model,
                        Consumption(
                            inputTokens: transcription.inputTokens ?? 0, outputTokens: transcription.outputTokens ?? 0,
                            audioSeconds: transcription.durationSeconds ?? seconds)
                    )
                }
            }
        } catch let error as ProviderError {
            logger.warning("transcription failed", metadata: ["audio_id": .string(record.id), "error": .string("\(error)")])
            throw APIError.unavailable(retryAfter: 5, detail: Self.failureMessage)
        }
        let response = try await keep(transcription, of: record, audio: audio, language: language, languageKey: languageKey, store: store, logger: logger)
        return (response, provider)
    }

    /// Keeps the transcript a live transcription session made of `record` while it was recorded (`GET /audio/stream`):
    /// judged and stored exactly like a file transcript for `language` (`auto` when none), so `POST /transcriptions`
    /// answers it from storage without another provider call. `wav` is the recording (for its levels).
    func keepLive(
        _ transcription: Transcription, of record: AudioRecord, wav: Data?, language: String?, store: ChorusStore, logger: Logger
    ) async throws -> TranscriptionResponse {
        let languageKey = language?.lowercased() ?? "auto"
        let now = services.now()
        // A new recording: nobody else can hold its claim, but the claim row is what `completeTranscript` fills in.
        _ = try await store.usageLimits.claimTranscript(
            audioID: record.id, languageKey: languageKey, now: now, until: now.addingTimeInterval(Self.claimLifetime))
        return try await keep(transcription, of: record, audio: wav, language: language, languageKey: languageKey, store: store, logger: logger)
    }

    /// Judges a transcript (``TranscriptQuality``) and stores it as the recording's transcript for `languageKey`.
    private func keep(
        _ transcription: Transcription, of record: AudioRecord, audio: Data?, language: String?, languageKey: String, store: ChorusStore,
        logger: Logger
    ) async throws -> TranscriptionResponse {
        let seconds = Double(record.durationMs) / 1_000
        // What the recording itself says (its levels; WAV only: Chorus decodes no AAC or MP3), for models that report
        // no certainty of their own (gpt-transcribe).
        var activity: SpeechActivity?
        if transcription.evidence.segments.isEmpty, transcription.evidence.tokenLogprobs.isEmpty, record.format == AudioFormat.wav.rawValue,
            let audio
        {
            activity = try await NIOThreadPool.singleton.runIfActive { SpeechActivity.measure(wav: audio) }
        }
        let facts = RecordingFacts(
            durationSeconds: seconds, expectedLanguages: language.map { [$0.lowercased()] } ?? [], activity: activity)
        let assessment = TranscriptQuality.assess(text: transcription.text, evidence: transcription.evidence, recording: facts)
        if !assessment.doubts.isEmpty {
            logger.info(
                "transcript doubted",
                metadata: [
                    "audio_id": .string(record.id), "label": .string(assessment.label?.rawValue ?? "none"),
                    "doubts": .string(assessment.doubts.map(\.rawValue).joined(separator: ",")),
                ])
        }
        try await store.usageLimits.completeTranscript(
            audioID: record.id, languageKey: languageKey, text: assessment.text, confidence: assessment.confidence,
            label: assessment.label?.rawValue, language: transcription.language ?? language)
        return TranscriptionResponse(
            transcript: assessment.text, confidence: assessment.confidence,
            confidenceLabel: assessment.label.map { ConfidenceLabel(rawValue: $0.rawValue) },
            language: transcription.language ?? language, durationSeconds: seconds)
    }
}
