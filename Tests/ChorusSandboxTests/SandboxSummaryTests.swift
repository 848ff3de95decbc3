import ChorusCore
import ChorusProviders
import Foundation
import Testing

@testable import ChorusSandbox

/// Summaries of the product's own summary prompt (``SummaryPrompt``) as the chat emulator answers them: the senders
/// counted and named from the messages only, what the messages say, urgent first, in the conversation's language.
@Suite("Sandbox OpenAI: summaries of the product's prompt")
struct SandboxSummaryTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    static func summarize(_ messages: [SummarySourceMessage], harness: OpenAIHarness) async throws -> ConversationSummary {
        let prompt = SummaryPrompt.messages(for: messages, now: now, timeZone: TimeZone(identifier: "Europe/Paris")!)
        let answer = try await harness.generator().generate(
            TextGenerationRequest(
                model: "gpt-4.1-mini",
                messages: [ChatMessage(role: .system, content: prompt.system), ChatMessage(role: .user, content: prompt.user)],
                format: StructuredOutputFormat(name: ConversationSummary.schemaName, schemaJSON: ConversationSummary.jsonSchema)))
        return try JSONDecoder().decode(ConversationSummary.self, from: Data(answer.content.utf8))
    }

    @Test("one message is one message from its sender, and the summary says what it is about")
    func oneMessage() async throws {
        try await withOpenAI { harness in
            let summary = try await Self.summarize(
                [SummarySourceMessage(sender: "mom", text: "Dinner is at 7 tonight. Please bring the bread on your way home.", sentAt: Self.now)],
                harness: harness)
            #expect(summary.overview.hasPrefix("1 message from mom."), "\(summary.overview)")
            #expect(summary.overview.contains("mom: Dinner is at 7 tonight."))
            #expect(!summary.overview.contains("Current time") && !summary.overview.contains("MESSAGES"))
            #expect(summary.actionItems.map(\.task) == ["Please bring the bread on your way home."] && summary.actionItems.first?.owner == "mom")
            #expect(summary.urgentItems.isEmpty)
        }
    }

    @Test("urgent messages come first, in the overview and the urgent items; senders are counted once each")
    func urgentFirst() async throws {
        try await withOpenAI { harness in
            let summary = try await Self.summarize(
                [
                    SummarySourceMessage(sender: "Dad", text: "Soccer practice is on Saturday at 9 am.", sentAt: Self.now),
                    SummarySourceMessage(sender: "Mom", text: "Can someone pick up Leo from school?", sentAt: Self.now),
                    SummarySourceMessage(sender: "School office", text: "Leo has a temperature and should go home.", sentAt: Self.now, urgent: true),
                    SummarySourceMessage(sender: "Dad", text: "I will get him in ten minutes.", sentAt: Self.now),
                ], harness: harness)
            #expect(summary.overview.hasPrefix("4 messages from Dad, Mom and School office. Urgent, from School office: Leo has a temperature"), "\(summary.overview)")
            #expect(summary.overview.contains("Dad: Soccer practice is on Saturday at 9 am."))
            #expect(summary.urgentItems.first == "Leo has a temperature and should go home.")
            #expect(summary.dates.first?.date == "Saturday 9 am")
        }
    }

    @Test("a conversation in another language is summarised in it", arguments: [
        ("Maman", "Papa", "Le dîner est à 19 heures ce soir.", "Je prends le pain en rentrant.", "2 messages de Maman et Papa.", "Maman : Le dîner"),
        ("Mamá", "Papá", "La cena es a las siete esta noche.", "Yo compro el pan de camino a casa.", "2 mensajes de Mamá y Papá.", "Mamá: La cena"),
        ("Mama", "Papa", "Das Abendessen ist heute um sieben.", "Ich bringe noch das Brot mit.", "2 Nachrichten von Mama und Papa.", "Mama: Das Abendessen"),
        ("Mamma", "Papà", "La cena è alle sette stasera.", "Io compro il pane per la cena.", "2 messaggi da Mamma e Papà.", "Mamma: La cena"),
    ])
    func otherLanguages(_ first: String, _ second: String, _ one: String, _ two: String, _ opening: String, _ quoted: String) async throws {
        try await withOpenAI { harness in
            let summary = try await Self.summarize(
                [SummarySourceMessage(sender: first, text: one, sentAt: Self.now), SummarySourceMessage(sender: second, text: two, sentAt: Self.now)],
                harness: harness)
            #expect(summary.overview.hasPrefix(opening), "\(summary.overview)")
            #expect(summary.overview.contains(quoted), "\(summary.overview)")
            #expect(!summary.overview.contains("message from") && !summary.overview.contains("messages from"))
        }
    }

    @Test("the text-mode summary of a French thread is framed in French")
    func textModeInFrench() async throws {
        try await withOpenAI { harness in
            let prompt = SummaryPrompt.messages(
                for: [
                    SummarySourceMessage(sender: "Maman", text: "Nous avons décidé de partir samedi.", sentAt: Self.now),
                    SummarySourceMessage(sender: "Papa", text: "Je vais réserver le train pour la famille.", sentAt: Self.now),
                ], now: Self.now, timeZone: TimeZone(identifier: "Europe/Paris")!)
            let answer = try await harness.generator().generate(
                TextGenerationRequest(model: "gpt-4.1-mini", messages: [ChatMessage(role: .system, content: prompt.system), ChatMessage(role: .user, content: prompt.user)]))
            #expect(answer.content.hasPrefix("Voici un résumé. 2 messages de Maman et Papa."), "\(answer.content)")
            #expect(answer.content.contains("Dates : Maman : Nous avons décidé de partir samedi."), "\(answer.content)")
        }
    }

    @Test("header lines of a prompt are not senders")
    func headerLines() {
        let thread = SandboxThread("Current time: Friday 27 November 2026, 10:00 (UTC).\nmom: Hi there.\nDad [urgent]: The car broke down.")
        #expect(thread.senders == ["mom", "Dad"])
        #expect(thread.lines.map(\.flagged) == [false, true])
    }
}
