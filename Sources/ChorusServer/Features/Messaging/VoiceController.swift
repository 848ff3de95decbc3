import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Vapor

/// Voice profiles and text-to-speech (PRD Phase 2):
/// - `POST /voice-profile` clones the caller's voice from their recording (18+, 30 s – 3 min, explicit consent) as
///   `pending_confirmation`, with a preview in the new voice; re-recording replaces the voice (pending or not) and
///   deletes the old one at the provider; `GET` shows it; `DELETE` discards or revokes it at the provider and erases
///   every speech generated with it;
/// - `POST /voice-profile/confirm`: the owner heard the preview and keeps the voice: only then (`ready`) does it speak
///   their messages to others. A voice never confirmed (or one ElevenLabs holds for verification) is deleted after
///   ``VoiceData/confirmationWindow`` by the retention sweep;
/// - `GET /voices/defaults`: the voices used when there is no cloned voice;
/// - `POST /messages/{id}/speech`: the message spoken in its sender's voice (their default voice without a clone),
///   generated once and then served from storage (`GET /speech/{key}` with a signed URL).
struct VoiceController: RouteCollection {
    let services: ChorusServices
    var messaging: MessagingServices { services.messaging }

    /// The PRD's message when cloning fails (Appendix B).
    static let cloningFailedMessage =
        "We couldn't process your voice sample. Please re-record in a quiet space and speak clearly for 30 seconds."
    /// What the user agrees to by sending `consent: true`.
    static let consentStatement =
        "I confirm this recording is my own voice, and I agree that Chorus creates a synthetic copy of it, used only to read my "
        + "messages aloud to the members of my conversations, until I delete it."
    static let previewText = "Hi! This is how my messages will sound when you play them."
    /// The PRD's voice settings for cloned voices (Feature 2.2): `stability` 0.5, `similarity_boost` 0.8.
    static let clonedVoiceStability = 0.5
    static let clonedVoiceSimilarityBoost = 0.8

    func boot(routes: any RoutesBuilder) throws {
        let authenticated = routes.grouped(UserAuthenticator(services: services))
        authenticated.on(API.Messaging.createVoiceProfile, use: createProfile)
        authenticated.on(API.Messaging.voiceProfile, use: profile)
        authenticated.on(API.Messaging.confirmVoiceProfile, use: confirmProfile)
        authenticated.on(API.Messaging.deleteVoiceProfile, use: deleteProfile)
        authenticated.on(API.Messaging.defaultVoices, use: defaultVoices)
        authenticated.on(API.Messaging.speech, use: speech)
        routes.on(API.Messaging.speechAudio, use: download)
    }

    // MARK: Profile

    @Sendable
    func createProfile(_ req: Request) async throws -> VoiceProfileResponse {
        let user = try req.user
        let body = try req.body(of: API.Messaging.createVoiceProfile)
        let now = services.now()
        let account = try await VoicePrivacy.requireVoiceAllowed(userID: user.id, store: req.store, now: now)
        guard account.birthYear != nil else {
            throw APIError.detail(.forbidden, "Add your birth year (PUT /me/profile): voice cloning is for adults (18+) only")
        }
        guard VoiceDataPolicy.canCloneVoice(birthYear: account.birthYear, now: now) else {
            throw APIError.detail(.forbidden, "Voice cloning is for adults (18+) only; your messages use your default voice")
        }
        var validator = FieldValidator()
        validator.check(body.consent, "consent", "Voice cloning needs your explicit consent")
        let script = body.script.trimmingCharacters(in: .whitespacesAndNewlines)
        validator.check((10...2_000).contains(script.count), "script", "Send the script you read (10 to 2,000 characters)")
        try validator.throwIfInvalid()
        guard let sample = try await req.store.messaging.audio(id: body.audioID), sample.ownerID == user.id,
            let key = BlobKey(rawValue: sample.blobKey)
        else { throw APIError.invalid("audio_id", "No recording of yours has this id") }
        do {
            try VoiceDataPolicy.checkCloningSample(durationSeconds: Double(sample.durationMs) / 1000)
        } catch {
            throw APIError.invalid("audio_id", "The voice sample must be 30 seconds to 3 minutes long. \(error.message)")
        }
        guard let audio = try await messaging.blobs.data(key, limit: services.configuration.voiceMessages.maxUploadBytes + 1) else {
            throw APIError.invalid("audio_id", "No recording of yours has this id")
        }
        let cloned: ClonedVoice
        do {
            cloned = try await messaging.cloner.cloneVoice(
                VoiceCloneRequest(
                    name: "chorus-\(user.id.prefix(8))",
                    samples: [VoiceSample(audio: audio, filename: "sample.\(sample.format)", contentType: sample.contentType)]))
        } catch let error as ProviderError {
            req.logger.warning("voice cloning failed", metadata: ["error": .string("\(error)")])
            switch error {
            case .quotaExceeded: throw APIError.unavailable(retryAfter: 3_600, detail: Self.cloningFailedMessage)
            case _ where error.isTransient: throw APIError.unavailable(retryAfter: 30, detail: Self.cloningFailedMessage)
            default: throw APIError.detail(.unprocessableEntity, Self.cloningFailedMessage)
            }
        }
        let record = VoiceProfileRecord(
            userID: user.id, provider: messaging.cloneProvider, providerVoiceID: cloned.voiceID, sampleAudioID: sample.id, script: script,
            consentStatement: Self.consentStatement, consentedAt: now, previewBlobKey: nil, createdAt: now,
            state: cloned.requiresVerification ? .requiresVerification : .pendingConfirmation)
        let previous = try await req.store.voices.replaceVoiceProfile(record)
        if let previous {
            try await VoiceData(services: services).deleteClonedVoice(previous, store: req.store, logger: req.logger)
        }
        req.logger.info(
            "cloned a voice",
            metadata: ["replaced": .stringConvertible(previous != nil), "state": .string(record.state.rawValue)])
        return try await profileResponse(userID: user.id, store: req.store, logger: req.logger)
    }

    @Sendable
    func profile(_ req: Request) async throws -> VoiceProfileResponse {
        let user = try req.user
        return try await profileResponse(userID: user.id, store: req.store, logger: req.logger)
    }

    /// What `GET`/`POST /voice-profile` say about each state that is not `ready`.
    static let pendingMessage =
        "Listen to the preview, then confirm your voice (POST /voice-profile/confirm) or re-record. Until you confirm, your messages "
        + "play in your default voice; an unconfirmed voice is deleted after a day."
    static let verificationMessage =
        "ElevenLabs asked to verify this voice before it can be used, which the app cannot do: your messages play in your default "
        + "voice. Re-record in a quiet space, reading the script in your natural voice; this voice is deleted after a day."

    private func profileResponse(userID: String, store: ChorusStore, logger: Logger) async throws -> VoiceProfileResponse {
        guard let account = try await store.messaging.messagingProfile(userID: userID) else { throw APIError.notAuthenticated }
        let defaultVoice = account.defaultVoice ?? services.configuration.voiceMessages.defaultVoice
        guard let profile = try await store.voices.voiceProfile(userID: userID) else {
            return VoiceProfileResponse(
                status: "none", createdAt: nil, consentedAt: nil, consentStatement: nil, script: nil, previewURL: nil,
                defaultVoice: defaultVoice)
        }
        // The preview is generated speech like any other (cached after the first request, erased with the voice): in
        // the cloned voice even before confirmation, as hearing it is what the owner confirms. A voice awaiting
        // verification cannot speak.
        var previewURL: String?
        if profile.state != .requiresVerification {
            let plan = clonedPlan(text: Self.previewText, profile: profile)
            let generated = try? await messaging.speech.speech(plan, requester: userID, store: store, logger: logger)
            previewURL = generated.map { services.speechURL(key: $0.entry.key, now: services.now()) }
        }
        let status: VoiceProfileStatus
        let message: String?
        switch profile.state {
        case .ready: (status, message) = (.ready, nil)
        case .pendingConfirmation: (status, message) = (.pendingConfirmation, Self.pendingMessage)
        case .requiresVerification: (status, message) = (.requiresVerification, Self.verificationMessage)
        }
        return VoiceProfileResponse(
            status: status, createdAt: profile.createdAt, consentedAt: profile.consentedAt, consentStatement: profile.consentStatement,
            script: profile.script, previewURL: previewURL, defaultVoice: defaultVoice, confirmedAt: profile.confirmedAt,
            expiresAt: profile.state == .ready ? nil : profile.createdAt.addingTimeInterval(VoiceData.confirmationWindow), message: message)
    }

    /// `POST /voice-profile/confirm`: a pending voice becomes `ready` (a compare-and-set on its state and voice: a
    /// discard, re-recording or expiry that came first wins); confirming a `ready` voice again answers it unchanged.
    @Sendable
    func confirmProfile(_ req: Request) async throws -> VoiceProfileResponse {
        let user = try req.user
        _ = try await VoicePrivacy.requireVoiceAllowed(userID: user.id, store: req.store, now: services.now())
        guard let profile = try await req.store.voices.voiceProfile(userID: user.id) else {
            throw APIError.notFound("No voice profile to confirm: record a sample first (POST /voice-profile)")
        }
        switch profile.state {
        case .ready:
            break
        case .requiresVerification:
            throw APIError.detail(.conflict, Self.verificationMessage)
        case .pendingConfirmation:
            let confirmed = try await req.store.voices.confirmVoiceProfile(
                userID: user.id, providerVoiceID: profile.providerVoiceID, now: services.now())
            if confirmed == nil {
                // Discarded, replaced or expired in between: say what is there now.
                let current = try await req.store.voices.voiceProfile(userID: user.id)
                guard let current else { throw APIError.notFound("No voice profile to confirm: it was discarded or expired") }
                if current.state != .ready {
                    throw APIError.detail(.conflict, "Your voice was re-recorded meanwhile: listen to the new preview before confirming")
                }
            } else {
                req.logger.info("confirmed a cloned voice")
            }
        }
        return try await profileResponse(userID: user.id, store: req.store, logger: req.logger)
    }

    /// `DELETE /voice-profile`: discards a pending voice or revokes a ready one. The row is deleted first (one
    /// statement), so a confirmation racing it either came first or finds nothing.
    @Sendable
    func deleteProfile(_ req: Request) async throws {
        let user = try req.user
        guard let profile = try await req.store.voices.deleteVoiceProfile(userID: user.id) else { throw APIError.notFound("No voice profile") }
        try await VoiceData(services: services).deleteClonedVoice(profile, store: req.store, logger: req.logger)
    }

    @Sendable
    func defaultVoices(_ req: Request) async throws -> VoicesResponse {
        let items = services.voices.voices.map {
            VoiceDTO(
                id: $0.id, displayName: $0.displayName, gender: .init(rawValue: $0.gender.rawValue),
                accent: .init(rawValue: $0.accent.rawValue), personality: .init(rawValue: $0.personality.rawValue),
                description: $0.description)
        }
        return VoicesResponse(voices: items)
    }

    // MARK: Speech

    /// How `speakerID` speaks `text`: their cloned voice when they have a confirmed (`ready`) one and voice features
    /// on, otherwise their default voice. `nil` only for an unknown account.
    func speechPlan(text: String, speakerID: String, store: ChorusStore) async throws -> SpeechPlan? {
        guard let account = try await store.messaging.messagingProfile(userID: speakerID) else { return nil }
        let settings = services.configuration.voiceMessages
        if account.voiceEnabled, let profile = try await store.voices.voiceProfile(userID: speakerID), profile.state == .ready {
            return clonedPlan(text: text, profile: profile)
        }
        return SpeechPlan(
            text: text, synthesizer: messaging.defaultSpeech,
            template: SpeechRequest(text: text, voiceID: account.defaultVoice ?? settings.defaultVoice, model: settings.speechModel, format: .mp3),
            voiceKind: "default", voiceOwnerID: nil, provider: "openai")
    }

    /// `text` in `profile`'s cloned voice, with the PRD's voice settings.
    func clonedPlan(text: String, profile: VoiceProfileRecord) -> SpeechPlan {
        SpeechPlan(
            text: text, synthesizer: messaging.clonedSpeech,
            template: SpeechRequest(
                text: text, voiceID: profile.providerVoiceID, model: services.configuration.voiceMessages.cloneSpeechModel, format: .mp3,
                stability: Self.clonedVoiceStability, similarityBoost: Self.clonedVoiceSimilarityBoost),
            voiceKind: "cloned", voiceOwnerID: profile.userID, provider: messaging.cloneProvider)
    }

    @Sendable
    func speech(_ req: Request) async throws -> SpeechResponse {
        let user = try req.user
        guard let id = req.parameters.get("message_id"), let message = try await req.store.messaging.message(id: id, viewer: user.id) else {
            throw APIError.notFound("Message not found")
        }
        guard message.deletedAt == nil, let text = (message.content ?? message.transcript)?.trimmingCharacters(in: .whitespacesAndNewlines),
            !text.isEmpty
        else { throw APIError.badRequest("This message has no text to speak") }
        guard let plan = try await speechPlan(text: text, speakerID: message.senderID, store: req.store) else {
            throw APIError.notFound("Message not found")
        }
        let (entry, cached) = try await messaging.speech.speech(plan, requester: user.id, store: req.store, logger: req.logger)
        return SpeechResponse(
            audioURL: services.speechURL(key: entry.key, now: services.now()), contentType: entry.contentType ?? "audio/mpeg",
            voice: SpeechVoiceKind(rawValue: plan.voiceKind), cached: cached)
    }

    @Sendable
    func download(_ req: Request) async throws -> Response {
        guard let key = req.parameters.get("speech_key"), let signed = AudioURLSigner.signedQuery(req.url.query),
            messaging.audioURLs.isValid(audioID: "speech:\(key)", expires: signed.expires, signature: signed.signature, now: services.now())
        else { throw APIError.detail(.forbidden, "This audio link is invalid or has expired; request the speech again for a new one") }
        guard let entry = try await messaging.speech.servedEntry(key: key, store: req.store), let blob = entry.blobKey.flatMap(BlobKey.init)
        else { throw APIError.notFound("Audio not found") }
        return try await AudioController.serve(blob, from: messaging.blobs, request: req)
    }
}

extension ChorusServices {
    /// A signed URL of generated speech.
    func speechURL(key: String, now: Date) -> String {
        absoluteURL("/speech/\(key)?" + messaging.audioURLs.query(id: "speech:\(key)", now: now))
    }
}
