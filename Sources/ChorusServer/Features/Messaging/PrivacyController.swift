import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Vapor

/// The user's rights over their voice data (PRD Appendix C: GDPR portability and erasure, CCPA, COPPA):
/// - `GET /me/voice-data` exports every recording (with a signed URL), transcript and voice-profile fact of the user;
/// - `DELETE /me/voice-data` erases them everywhere: recordings and their blobs, the transcripts of the user's
///   messages, the cloned voice at the provider and every speech generated with it. Text messages stay.
struct PrivacyController: RouteCollection {
    let services: ChorusServices

    func boot(routes: any RoutesBuilder) throws {
        let routes = routes.grouped(UserAuthenticator(services: services))
        routes.get("me", "voice-data", use: export)
        routes.delete("me", "voice-data", use: erase)
    }

    @Sendable
    func export(_ req: Request) async throws -> Response {
        let user = try req.user
        let now = services.now()
        guard let profile = try await req.store.messaging.messagingProfile(userID: user.id) else { throw APIError.notAuthenticated }
        let recordings = try await req.store.messaging.audio(ownerID: user.id).map { record in
            VoiceDataExport.Recording(
                audioID: record.id, createdAt: record.createdAt, format: record.format, durationSeconds: Double(record.durationMs) / 1000,
                sizeBytes: record.sizeBytes, expiresAt: record.expiresAt, transcript: record.transcript,
                transcriptConfidence: record.transcriptConfidence, transcriptLanguage: record.transcriptLanguage,
                audioURL: services.absoluteURL(services.messaging.audioURLs.path(audioID: record.id, now: now)))
        }
        let messages = try await req.store.messaging.voiceMessages(senderID: user.id).map {
            VoiceDataExport.VoiceMessage(
                messageID: $0.id, conversationID: $0.conversationID, createdAt: $0.createdAt, sendMode: $0.sendMode, content: $0.content,
                transcript: $0.transcript, audioID: $0.audioID)
        }
        let voice = try await req.store.voices.voiceProfile(userID: user.id).map {
            VoiceDataExport.ClonedVoice(
                provider: $0.provider, createdAt: $0.createdAt, consentedAt: $0.consentedAt, consentStatement: $0.consentStatement,
                script: $0.script, sampleAudioID: $0.sampleAudioID)
        }
        let export = VoiceDataExport(
            exportedAt: now, profile: ConversationsController.dto(profile), recordings: recordings, voiceMessages: messages,
            clonedVoice: voice, generatedSpeechInYourVoice: try await req.store.voices.speechCount(voiceOwnerID: user.id))
        let response = try req.json(export)
        response.headers.replaceOrAdd(name: .contentDisposition, value: "attachment; filename=\"chorus-voice-data.json\"")
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return response
    }

    @Sendable
    func erase(_ req: Request) async throws -> Response {
        let user = try req.user
        let erased = try await VoiceData(services: services).eraseAll(userID: user.id, store: req.store, logger: req.logger)
        req.logger.notice(
            "erased a user's voice data",
            metadata: ["recordings": .stringConvertible(erased.recordings), "cloned_voice": .stringConvertible(erased.clonedVoice)])
        return try req.json(erased)
    }
}

/// `GET /me/voice-data`.
struct VoiceDataExport: Codable, Sendable {
    struct Recording: Codable, Sendable {
        var audioID: String
        var createdAt: Date
        var format: String
        var durationSeconds: Double
        var sizeBytes: Int
        var expiresAt: Date?
        var transcript: String?
        var transcriptConfidence: Double?
        var transcriptLanguage: String?
        var audioURL: String

        enum CodingKeys: String, CodingKey {
            case audioID = "audio_id"
            case createdAt = "created_at"
            case format
            case durationSeconds = "duration_seconds"
            case sizeBytes = "size_bytes"
            case expiresAt = "expires_at"
            case transcript
            case transcriptConfidence = "transcript_confidence"
            case transcriptLanguage = "transcript_language"
            case audioURL = "audio_url"
        }
    }

    struct VoiceMessage: Codable, Sendable {
        var messageID: String
        var conversationID: String
        var createdAt: Date
        var sendMode: String
        var content: String?
        var transcript: String?
        var audioID: String?

        enum CodingKeys: String, CodingKey {
            case messageID = "message_id"
            case conversationID = "conversation_id"
            case createdAt = "created_at"
            case sendMode = "send_mode"
            case content
            case transcript
            case audioID = "audio_id"
        }
    }

    struct ClonedVoice: Codable, Sendable {
        var provider: String
        var createdAt: Date
        var consentedAt: Date
        var consentStatement: String
        var script: String
        var sampleAudioID: String?

        enum CodingKeys: String, CodingKey {
            case provider
            case createdAt = "created_at"
            case consentedAt = "consented_at"
            case consentStatement = "consent_statement"
            case script
            case sampleAudioID = "sample_audio_id"
        }
    }

    var exportedAt: Date
    var profile: MessagingProfileDTO
    var recordings: [Recording]
    var voiceMessages: [VoiceMessage]
    var clonedVoice: ClonedVoice?
    var generatedSpeechInYourVoice: Int

    enum CodingKeys: String, CodingKey {
        case exportedAt = "exported_at"
        case profile
        case recordings
        case voiceMessages = "voice_messages"
        case clonedVoice = "cloned_voice"
        case generatedSpeechInYourVoice = "generated_speech_in_your_voice"
    }
}

/// `DELETE /me/voice-data` answer: what was erased.
struct VoiceDataErasure: Codable, Sendable {
    var recordings: Int
    var transcripts: Int
    var clonedVoice: Bool
    var generatedSpeech: Int

    enum CodingKeys: String, CodingKey {
        case recordings
        case transcripts
        case clonedVoice = "cloned_voice"
        case generatedSpeech = "generated_speech"
    }
}

extension ChorusServices {
    /// `path` (with its query) on this server's public URL.
    func absoluteURL(_ path: String) -> String {
        let base = configuration.publicURL.absoluteString
        return (base.hasSuffix("/") ? String(base.dropLast()) : base) + path
    }
}
