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
        // The export is a download: fixed Content-Disposition and Cache-Control headers on top of the JSON.
        routes.onResponse(API.Messaging.exportVoiceData, use: export)
        routes.on(API.Messaging.eraseVoiceData, use: erase)
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
                messageID: $0.id, conversationID: $0.conversationID, createdAt: $0.createdAt, sendMode: MessageSendMode(rawValue: $0.sendMode), content: $0.content,
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
    func erase(_ req: Request) async throws -> VoiceDataErasure {
        let user = try req.user
        let erased = try await VoiceData(services: services).eraseAll(userID: user.id, store: req.store, logger: req.logger)
        req.logger.notice(
            "erased a user's voice data",
            metadata: ["recordings": .stringConvertible(erased.recordings), "cloned_voice": .stringConvertible(erased.clonedVoice)])
        return erased
    }
}

extension ChorusServices {
    /// `path` (with its query) on this server's public URL.
    func absoluteURL(_ path: String) -> String {
        let base = configuration.publicURL.absoluteString
        return (base.hasSuffix("/") ? String(base.dropLast()) : base) + path
    }
}
