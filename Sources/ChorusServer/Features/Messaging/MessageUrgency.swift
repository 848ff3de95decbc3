import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Logging

/// Urgency by the summary model (`CHORUS_VOICE_URGENCY=model`, the default): after a message with text is sent (or a
/// voice message's transcript arrives) and neither the sender nor the keyword policy marked it, a durable job asks the
/// summary model (``UrgencyPrompt``); a message it finds urgent is flagged with reason `model` and announced to the
/// members as `message.updated`. The model only adds flags: the keyword policy answers at once and a false alarm costs
/// less than a missed emergency. A sender's explicit `urgent: false` is final.
struct MessageUrgency {
    let services: ChorusServices

    /// Queues the model's reading of `message` when it is wanted.
    static func enqueueIfNeeded(_ message: MessageRecord, senderChose: Bool, services: ChorusServices, store: ChorusStore) async throws {
        guard services.configuration.voiceMessages.urgencyByModel, !senderChose, !message.urgent, message.deletedAt == nil,
            let text = message.content ?? message.transcript, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        else { return }
        let now = services.now()
        try await store.jobs.enqueueJob(kind: JobKind.classifyMessageUrgency, payload: message.id, runAt: now, now: now, maxAttempts: 3)
    }

    /// The job: a provider failure throws, so the queue retries with backoff.
    func run(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        guard let message = try await store.messaging.message(id: job.payload), !message.urgent, message.deletedAt == nil,
            let text = message.content ?? message.transcript
        else { return }
        let generated: GeneratedText
        do {
            generated = try await MeteringContext.with(userID: message.senderID) {
                try await services.messaging.textGenerator.generate(
                    TextGenerationRequest(
                        model: services.configuration.voiceMessages.summaryModel,
                        messages: [
                            ChatMessage(role: .system, content: UrgencyPrompt.system), ChatMessage(role: .user, content: UrgencyPrompt.user(text: text)),
                        ],
                        format: StructuredOutputFormat(name: UrgencyPrompt.schemaName, schemaJSON: UrgencyPrompt.jsonSchema),
                        maxOutputTokens: 120, safetyIdentifier: String(message.senderID.prefix(64))))
            }
        } catch let refused as APIError {
            // The voice budget or the sender's daily operations are spent: the keyword policy's answer stands.
            logger.notice(
                "urgency not read by the model: a limit is reached", metadata: ["message_id": .string(message.id), "error": .string("\(refused)")])
            return
        }
        let verdict = try UrgencyVerdict.decode(json: Data(generated.content.utf8))
        guard verdict.urgent, try await store.messaging.flagUrgentByModel(id: message.id), let flagged = try await store.messaging.message(id: message.id) else { return }
        logger.info("message flagged urgent by the summary model", metadata: ["message_id": .string(message.id)])
        let members = try await store.messaging.memberIDs(conversationID: flagged.conversationID)
        await services.messaging.fanout.publish(
            RealtimeEventDTO(
                type: "message.updated", conversationID: flagged.conversationID, message: services.messageDTO(flagged, now: services.now())),
            to: members)
    }
}
