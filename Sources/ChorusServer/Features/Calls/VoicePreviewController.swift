import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Vapor

/// `GET /mobile/voices/{voice_id}/preview`: a short spoken sample of an AI voice of `GET /mobile/voices`, so people can
/// hear the voices before choosing one (seed 000, "Preview Voices").
///
/// The sample is made once per voice, text and speech model by the speech synthesizer of default voices (the one
/// that reads voice messages, on the Realtime API by default like calls) through ``SpeechService``: concurrent first
/// requests in this process share one generation, other instances wait for the cache row's claim, and the audio is
/// then served from blob storage with `Range`, `ETag`/`If-None-Match` and `Cache-Control` (``AudioController/serve``).
///
/// No token is needed (the catalog is public); requests are limited per client IP. The generation is the operator's
/// cost: metered for the voice-message feature's budget without a user, charging nobody's allowance.
struct VoicePreviewController: RouteCollection {
    let services: ChorusServices

    /// Previews change only when the speech model does (a new sample with a new `ETag`).
    static let cacheControl = "public, max-age=86400"
    static let unavailableMessage = "The voice preview is unavailable right now. Please try again in a moment."

    func boot(routes: any RoutesBuilder) throws {
        routes.on(API.Calls.voicePreview, use: preview)
    }

    /// What the voice says.
    static func text(for voice: VoiceProfile) -> String {
        "Hi, I'm \(voice.displayName). This is how I'll sound when we talk on your calls."
    }

    /// How the preview of `voice` is spoken: the default voices' synthesizer and speech model.
    func plan(for voice: VoiceProfile) -> SpeechPlan {
        let text = Self.text(for: voice)
        return SpeechPlan(
            text: text, synthesizer: services.messaging.defaultSpeech,
            template: SpeechRequest(text: text, voiceID: voice.id, model: services.configuration.voiceMessages.speechModel, format: .mp3),
            voiceKind: "preview", voiceOwnerID: nil, provider: "openai")
    }

    /// A strong entity tag of one generation: the cache key, when its row was made and the size (a sample generated
    /// again after the cache sweep gets a new one).
    static func etag(_ entry: SpeechCacheEntry) -> String {
        let made = entry.createdAt.map { String($0.epochMillis) } ?? "0"
        return "\"\(entry.key.prefix(24))-\(made)-\(entry.sizeBytes ?? 0)\""
    }

    @Sendable
    func preview(_ req: Request) async throws -> Response {
        if let limit = services.configuration.rateLimits.user {
            try services.checkRateLimit("voice-preview:\(req.clientIP)", limit)
        }
        guard let id = req.parameters.get("voice_id"), let voice = services.voices.voice(id: id) else {
            throw APIError.notFound("Voice not found; see GET /mobile/voices")
        }
        let plan = plan(for: voice)
        let key = plan.key.hexDigest
        let speech = services.messaging.speech
        let entry: SpeechCacheEntry?
        if let served = try await speech.servedEntry(key: key, store: req.store) {
            // Keeps a sample people still listen to from the unused-speech sweep (one write a day at most).
            try await req.store.voices.touchSpeech(key: key, now: services.now())
            entry = served
        } else {
            do {
                _ = try await speech.speech(plan, requester: nil, store: req.store, logger: req.logger)
            } catch APIError.unavailable(let retryAfter, let detail) where detail == SpeechService.failureMessage {
                throw APIError.unavailable(retryAfter: retryAfter, detail: Self.unavailableMessage)
            }
            entry = try await req.store.voices.speechCacheEntry(key: key)
        }
        guard let entry, entry.status == "ready", let blob = entry.blobKey.flatMap(BlobKey.init) else {
            throw APIError.unavailable(retryAfter: 5, detail: Self.unavailableMessage)
        }
        return try await AudioController.serve(
            blob, from: services.messaging.blobs, request: req, etag: Self.etag(entry), cacheControl: Self.cacheControl)
    }
}
