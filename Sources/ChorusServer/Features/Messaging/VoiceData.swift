import ChorusAPI
import ChorusProviders
import Foundation
import Logging
import Vapor

/// Deleting recordings everywhere: the blob first, then the row (a failure leaves the row, so the deletion is retried
/// by the retention job rather than leaving an orphaned file).
struct VoiceData {
    let services: ChorusServices

    func deleteRecording(id: String, store: ChorusStore) async throws {
        guard let record = try await store.audio(id: id) else { return }
        if let key = BlobKey(rawValue: record.blobKey) { try await services.messaging.blobs.delete(key) }
        try await store.deleteAudio(id: id)
    }
}

extension VoiceData {
    /// Deletes a cloned voice at the provider (a voice it no longer knows counts as deleted) and every speech generated
    /// with it. A provider outage is a 503: the voice stays until the deletion succeeds.
    func deleteClonedVoice(_ profile: VoiceProfileRecord, store: ChorusStore, logger: Logger) async throws {
        do {
            try await services.messaging.cloner.deleteVoice(id: profile.providerVoiceID)
        } catch let error as ProviderError {
            logger.error("could not delete a cloned voice at the provider", metadata: ["error": .string("\(error)")])
            throw APIError.unavailable(retryAfter: 30, detail: "The voice could not be deleted right now; try again in a moment")
        }
        for blob in try await store.deleteSpeech(voiceOwnerID: profile.userID) {
            if let key = BlobKey(rawValue: blob) { try await services.messaging.blobs.delete(key) }
        }
    }
}

/// Transcribes the recording of a voice message sent before its transcript existed, then tells the members.
struct MessageTranscriptionJob {
    let services: ChorusServices

    func run(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        guard let record = try await store.audio(id: job.payload) else { return }
        if record.transcript == nil {
            // A provider failure throws: the job queue retries with backoff.
            _ = try await VoiceTranscription(services: services).transcribe(record, language: nil, store: store, logger: logger)
        }
        let now = services.now()
        for message in try await store.messages(withAudio: record.id) {
            let members = try await store.memberIDs(conversationID: message.conversationID)
            var dto = services.messageDTO(message, now: now)
            dto.starred = false
            await services.messaging.fanout.publish(
                RealtimeEventDTO(type: "transcript.ready", conversationID: message.conversationID, message: dto), to: members)
        }
    }
}
