import ChorusAPI
import Foundation
import Logging

/// Transcribes the recording of a voice message sent before its transcript existed, then tells the members.
struct MessageTranscriptionJob {
    let services: ChorusServices

    func run(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        guard let record = try await store.messaging.audio(id: job.payload) else { return }
        let transcribedNow = record.transcript == nil
        if transcribedNow {
            // A provider failure throws: the job queue retries with backoff.
            _ = try await VoiceTranscription(services: services).transcribe(record, language: nil, store: store, logger: logger)
        }
        let now = services.now()
        for message in try await store.messaging.messages(withAudio: record.id) {
            // Audio-only messages get their first text now: the urgency reading was not possible at sending.
            if transcribedNow, message.content == nil {
                try await MessageUrgency.enqueueIfNeeded(
                    message, senderChose: message.urgentReasons.contains("sender"), services: services, store: store)
            }
            let members = try await store.messaging.memberIDs(conversationID: message.conversationID)
            var dto = services.messageDTO(message, now: now)
            dto.starred = false
            await services.messaging.fanout.publish(
                RealtimeEventDTO(type: "transcript.ready", conversationID: message.conversationID, message: dto), to: members)
        }
    }
}
