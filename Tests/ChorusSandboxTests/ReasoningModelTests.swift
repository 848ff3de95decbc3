import ChorusCore
import ChorusProviders
import Foundation
import AsyncHTTPClient
import NIOCore
import NIOFoundationCompat
import Testing

/// The text defaults moved to a reasoning model (`gpt-5.4-mini`, issue 22): what the client sends to such models and
/// what the emulator, like the API, refuses.
@Suite("Reasoning text models", .serialized)
struct ReasoningModelTests {
    static let messages = [ChatMessage(role: .system, content: "Be brief."), ChatMessage(role: .user, content: "Dinner at seven?")]

    @Test func reasoningModelsAreRecognisedByFamily() {
        for model in ["gpt-5", "gpt-5-mini", "gpt-5-nano-2025-08-07", "gpt-5.1", "gpt-5.4-mini", "gpt-5.5-pro", "o3", "o4-mini"] {
            #expect(OpenAITextGenerator.isReasoningModel(model), "\(model)")
        }
        for model in ["gpt-4.1-mini", "gpt-4o", "gpt-50", "o2", "gpt-realtime-2.1", "omni-moderation-latest"] {
            #expect(!OpenAITextGenerator.isReasoningModel(model), "\(model)")
        }
    }

    @Test func bodiesCarryTheEffortOnlyForReasoningModels() throws {
        func body(_ model: String, effort: OpenAITextGenerator.ReasoningEffort) throws -> [String: Any] {
            let generator = OpenAITextGenerator(connection: SandboxOpenAITests.offlineConnection, reasoningEffort: effort)
            let data = try generator.body(
                for: TextGenerationRequest(model: model, messages: Self.messages, maxOutputTokens: 800, temperature: 0.8))
            return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        }
        // `none`: no hidden reasoning, so the temperature stays and the budget is the product's.
        let none = try body("gpt-5.4-mini", effort: .none)
        #expect(none["reasoning_effort"] as? String == "none")
        #expect(none["temperature"] as? Double == 0.8)
        #expect(none["max_completion_tokens"] as? Int == 800)
        // Any other effort: only the default temperature is accepted, and reasoning tokens get their own allowance.
        let low = try body("gpt-5.4-mini", effort: .low)
        #expect(low["reasoning_effort"] as? String == "low")
        #expect(low["temperature"] == nil)
        #expect(low["max_completion_tokens"] as? Int == 800 + 2_048)
        // Older models never get the member.
        let older = try body("gpt-4.1-mini", effort: .low)
        #expect(older["reasoning_effort"] == nil && older["temperature"] as? Double == 0.8 && older["max_completion_tokens"] as? Int == 800)
    }

    @Test func theEmulatorAnswersReasoningModelsLikeTheAPI() async throws {
        try await withOpenAI { harness in
            // The default configuration: gpt-5.4-mini with effort none and a temperature.
            let answer = try await OpenAITextGenerator(connection: harness.connection(), reasoningEffort: .none).generate(
                TextGenerationRequest(model: "gpt-5.4-mini", messages: Self.messages, maxOutputTokens: 400, temperature: 0.8))
            #expect(!answer.content.isEmpty && answer.model == "gpt-5.4-mini")

            // With reasoning the hidden tokens are billed as output and count against the limit; the client's
            // allowance keeps the visible answer whole.
            let thinking = try await OpenAITextGenerator(connection: harness.connection(), reasoningEffort: .low).generate(
                TextGenerationRequest(model: "gpt-5.4-mini", messages: Self.messages, maxOutputTokens: 400, temperature: 0.8))
            #expect(thinking.content == answer.content)
            #expect(thinking.completionTokens == answer.completionTokens + 128)

            // What the API refuses, with its messages.
            let refusals: [(model: String, effort: OpenAITextGenerator.ReasoningEffort, message: String)] = [
                ("gpt-4.1-mini", .none, "Unsupported parameter: 'reasoning_effort' is not supported with this model."),
                ("gpt-5-mini", .none, "Unsupported value: 'reasoning_effort' does not support 'none' with this model."),
                ("o3", .none, "Unsupported value: 'reasoning_effort' does not support 'none' with this model."),
            ]
            for refusal in refusals {
                do {
                    _ = try await OpenAITextGenerator(connection: harness.connection(), reasoningEffort: refusal.effort).generate(
                        TextGenerationRequest(model: refusal.model, messages: Self.messages))
                    // gpt-4.1-mini never gets the member from the client, so it answers: send it by hand below.
                    #expect(refusal.model == "gpt-4.1-mini", "\(refusal.model) accepted effort \(refusal.effort)")
                } catch let ProviderError.rejected(status, code, message) {
                    #expect(status == 400 && code == "unsupported_value" && message.hasPrefix(refusal.message), "\(message)")
                }
            }
            let raw: [(body: String, message: String, code: String)] = [
                (
                    #"{"model":"gpt-4.1-mini","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"low"}"#,
                    "Unsupported parameter: 'reasoning_effort' is not supported with this model.", "unsupported_parameter"
                ),
                (
                    #"{"model":"gpt-5.4-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":50}"#,
                    "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                    "unsupported_parameter"
                ),
                (
                    #"{"model":"gpt-5.4-mini","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"low","temperature":0.3}"#,
                    "Unsupported value: 'temperature' does not support 0.3 with this model. Only the default (1) value is supported.",
                    "unsupported_value"
                ),
                (
                    #"{"model":"gpt-5-mini","messages":[{"role":"user","content":"hi"}],"temperature":0.3}"#,
                    "Unsupported value: 'temperature' does not support 0.3 with this model. Only the default (1) value is supported.",
                    "unsupported_value"
                ),
            ]
            for (body, message, code) in raw {
                let (status, json) = try await harness.postJSON("/openai/v1/chat/completions", body: body)
                let error = json["error"] as? [String: Any]
                #expect(status == 400, "\(body)")
                #expect(error?["message"] as? String == message && error?["code"] as? String == code, "\(json)")
            }
            // A reasoning model's own default temperature, and a cut-off: the reasoning (512 tokens at gpt-5-mini's
            // default effort, medium) uses the whole budget of 100 first, leaving no visible answer.
            let (status, json) = try await harness.postJSON(
                "/openai/v1/chat/completions",
                body: #"{"model":"gpt-5-mini","messages":[{"role":"user","content":"hi there, how are you"}],"temperature":1,"max_completion_tokens":100}"#)
            #expect(status == 200)
            let choice = (json["choices"] as? [[String: Any]])?.first
            let usage = json["usage"] as? [String: Any]
            #expect(choice?["finish_reason"] as? String == "length")
            #expect(((usage?["completion_tokens_details"] as? [String: Any])?["reasoning_tokens"] as? Int) == 100)
            #expect((choice?["message"] as? [String: Any])?["content"] as? String == "")
            #expect(usage?["completion_tokens"] as? Int == 100)
        }
    }
}

extension OpenAIHarness {
    /// `POST <path>` with a JSON body and the harness's key: status and JSON object body.
    func postJSON(_ path: String, body: String) async throws -> (status: Int, json: [String: Any]) {
        var request = HTTPClientRequest(url: baseURL.absoluteString + path)
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(OpenAIHarness.apiKey)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let collected = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), try JSONSerialization.jsonObject(with: Data(buffer: collected)) as? [String: Any] ?? [:])
    }
}
