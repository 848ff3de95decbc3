import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Logging
import SQLKit
import Vapor

/// The text model could not produce a usable summary.
struct SummaryFailed: Error {
    var underlying: any Error
}

/// Summarises messages with the configured ``TextGenerator`` (strict JSON schema), narrates the result with the
/// narrator voice and stores it. Shared by `POST /conversations/{id}/summary` and the daily digests.
struct ConversationSummarizer {
    let services: ChorusServices

    func summarize(
        _ messages: [MessageRecord], conversationID: String, selection: String, requester: String, store: ChorusStore, logger: Logger,
        timeZone: TimeZone = TimeZone(identifier: "UTC")!
    ) async throws -> SummaryRecord {
        let messaging = services.messaging
        let settings = services.configuration.voiceMessages
        let now = services.now()
        let prompt = SummaryPrompt.messages(
            for: messages.map {
                SummarySourceMessage(sender: $0.senderName, text: $0.content ?? $0.transcript ?? "", sentAt: $0.createdAt, urgent: $0.urgent)
            }, now: now, timeZone: timeZone)
        let structured: ConversationSummary
        do {
            let generated = try await MeteringContext.with(userID: requester) {
                try await messaging.textGenerator.generate(
                    TextGenerationRequest(
                        model: settings.summaryModel,
                        messages: [ChatMessage(role: .system, content: prompt.system), ChatMessage(role: .user, content: prompt.user)],
                        format: StructuredOutputFormat(name: ConversationSummary.schemaName, schemaJSON: ConversationSummary.jsonSchema),
                        maxOutputTokens: 1_200, safetyIdentifier: String(requester.prefix(64))))
            }
            structured = try ConversationSummary.decode(json: Data(generated.content.utf8))
        } catch {
            throw SummaryFailed(underlying: error)
        }
        let narration = structured.narration(maxWords: SummaryPrompt.maxWords)
        // The narration is spoken by the narrator voice; a speech failure still keeps the text.
        let plan = SpeechPlan(
            text: narration, synthesizer: messaging.defaultSpeech,
            template: SpeechRequest(text: narration, voiceID: settings.narratorVoice, model: settings.speechModel, format: .mp3),
            voiceKind: "default", voiceOwnerID: nil, provider: "openai")
        let speechKey: String?
        do {
            speechKey = try await messaging.speech.speech(plan, requester: requester, store: store, logger: logger).entry.key
        } catch {
            logger.warning("the summary's narration could not be spoken", metadata: ["error": .string("\(error)")])
            speechKey = nil
        }
        let record = SummaryRecord(
            id: UUID().uuidString.lowercased(), conversationID: conversationID, selection: selection, lastSeq: messages.last?.seq ?? 0,
            messageCount: messages.count, summary: structured, narration: narration, speechKey: speechKey, createdAt: now)
        try await store.voices.saveSummary(record)
        return record
    }
}
