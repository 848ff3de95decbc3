import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Logging
import Vapor

/// Who may use voice features: not accounts that opted out, and never children under 13 (COPPA, ``VoiceDataPolicy``).
enum VoicePrivacy {
    /// The profile of an account allowed to store voice data, or 403 with the reason.
    static func requireVoiceAllowed(userID: String, store: ChorusStore, now: Date) async throws -> MessagingProfileRecord {
        guard let profile = try await store.messagingProfile(userID: userID) else { throw APIError.notAuthenticated }
        guard profile.voiceEnabled else {
            throw APIError.detail(.forbidden, "Voice features are turned off for this account (PUT /me/profile to turn them on)")
        }
        guard VoiceDataPolicy.mayStoreVoiceData(birthYear: profile.birthYear, now: now) else {
            throw APIError.detail(.forbidden, "Voice features are not available for accounts of children under 13")
        }
        return profile
    }
}

/// Transcribes a stored recording through the configured ``Transcriber`` and keeps the result.
struct VoiceTranscription {
    let services: ChorusServices

    /// The PRD's message when transcription fails (Appendix B).
    static let failureMessage = "Couldn't transcribe audio. Please try again in a quieter environment."

    /// The transcript, and how long the provider took (reported as `Server-Timing`).
    func transcribe(
        _ record: AudioRecord, language: String?, store: ChorusStore, logger: Logger
    ) async throws -> (
        TranscriptionResponse, provider: Duration
    ) {
        let messaging = services.messaging
        guard let key = BlobKey(rawValue: record.blobKey),
            let audio = try await messaging.blobs.data(key, limit: services.configuration.voiceMessages.maxUploadBytes + 1)
        else { throw APIError.notFound("Recording not found") }
        let transcription: Transcription
        let started = ContinuousClock.now
        do {
            transcription = try await messaging.transcriber.transcribe(
                TranscriptionRequest(
                    audio: audio, filename: "recording.\(record.format)", contentType: record.contentType, language: language))
        } catch let error as ProviderError {
            logger.warning("transcription failed", metadata: ["audio_id": .string(record.id), "error": .string("\(error)")])
            throw APIError.unavailable(retryAfter: 5, detail: Self.failureMessage)
        }
        let provider = ContinuousClock.now - started
        await MeteringContext.with(userID: record.ownerID) {
            await messaging.meter.record(
                .transcription, provider: services.providerNames["transcription"] ?? "openai", model: transcription.model,
                consumption: Consumption(audioSeconds: transcription.durationSeconds ?? Double(record.durationMs) / 1_000))
        }
        let assessment = TranscriptQuality.assess(text: transcription.text, evidence: transcription.evidence)
        try await store.saveTranscript(
            audioID: record.id, text: assessment.text, confidence: assessment.confidence, label: assessment.label?.rawValue,
            language: transcription.language ?? language)
        return (
            TranscriptionResponse(
                transcript: assessment.text, confidence: assessment.confidence, confidenceLabel: assessment.label?.rawValue,
                language: transcription.language ?? language, durationSeconds: Double(record.durationMs) / 1000), provider
        )
    }
}
