import ChorusCore
import Foundation
import NIOCore
import NIOFoundationCompat

/// Chat completions with OpenAI's `POST /v1/chat/completions`.
///
/// The body is `{model, messages, response_format?, max_completion_tokens?, temperature?, reasoning_effort?, safety_identifier?,
/// store: false}`. A ``StructuredOutputFormat`` becomes `response_format: {type: "json_schema", json_schema: {name,
/// strict: true, schema}}` with the schema text inserted as it is (its key order is the order the model writes
/// the answer in). The answer is checked the way the API asks: `message.refusal` → ``TextGenerationError/refused(_:)``,
/// `finish_reason` `length` or `content_filter` → ``TextGenerationError/incomplete(finishReason:)``; token usage is
/// returned with the content.
///
/// Reasoning models (``isReasoningModel(_:)``: `gpt-5*`, `o1*`, `o3*`, `o4*`) also get `reasoning_effort`. With an
/// effort of `none` they answer without hidden reasoning and accept `temperature`; with any other effort the API
/// accepts only the default temperature, so none is sent, and `max_completion_tokens` (which counts reasoning tokens)
/// is raised by ``ReasoningEffort/allowanceTokens`` so the visible answer keeps the budget the product asked for.
public struct OpenAITextGenerator: TextGenerator {
    /// `reasoning_effort` (OpenAI's `ReasoningEffort`), sent to reasoning models only.
    public enum ReasoningEffort: String, Sendable, Equatable, CaseIterable {
        case none, minimal, low, medium, high, xhigh

        /// Tokens added to `max_completion_tokens` for the reasoning itself.
        public var allowanceTokens: Int {
            switch self {
            case .none: 0
            case .minimal: 512
            case .low: 2_048
            case .medium: 8_192
            case .high, .xhigh: 16_384
            }
        }
    }

    private let connection: OpenAIConnection
    /// The effort sent to reasoning models.
    public let reasoningEffort: ReasoningEffort

    /// A generator; the model is chosen per request (``TextGenerationRequest/model``).
    public init(connection: OpenAIConnection, reasoningEffort: ReasoningEffort = .none) {
        self.connection = connection
        self.reasoningEffort = reasoningEffort
    }

    /// Whether `model` is one of OpenAI's reasoning models (`gpt-5` and its successors, the `o` series).
    public static func isReasoningModel(_ model: String) -> Bool {
        ["gpt-5", "o1", "o3", "o4"].contains { model == $0 || model.hasPrefix($0 + "-") || model.hasPrefix($0 + ".") }
    }

    /// The JSON body sent for `request` (also what tests inspect). Throws ``ProviderError/rejected(httpStatus:code:message:)``
    /// (status 400, nothing sent) when the format's schema is not a JSON object.
    public func body(for request: TextGenerationRequest) throws -> Data {
        let reasoning = Self.isReasoningModel(request.model) ? reasoningEffort : nil
        let thinks = reasoning.map { $0 != .none } ?? false
        let body = ChatBody(
            model: request.model,
            messages: request.messages.map { ChatBody.Message(role: $0.role.rawValue, content: $0.content) },
            maxCompletionTokens: request.maxOutputTokens.map { thinks ? $0.addingClamped(reasoningEffort.allowanceTokens) : $0 },
            temperature: thinks ? nil : request.temperature,
            reasoningEffort: reasoning?.rawValue,
            safetyIdentifier: request.safetyIdentifier.flatMap { $0.isEmpty ? nil : $0 }, store: false)
        var json = try JSONEncoder().encode(body)
        guard let format = request.format else { return json }
        let schema = Data(format.schemaJSON.utf8)
        guard (try? JSONSerialization.jsonObject(with: schema)) is [String: Any] else {
            throw ProviderError.rejected(
                httpStatus: 400, code: "invalid_json_schema", message: "The schema of response format '\(format.name)' is not a JSON object.")
        }
        // `{…}` → `{…,"response_format":{…}}`: the schema text goes in verbatim, keeping its key order.
        var formatJSON = Data(#","response_format":{"type":"json_schema","json_schema":{"name":"#.utf8)
        formatJSON.append(try JSONEncoder().encode(format.name))
        formatJSON.append(contentsOf: Array(#","strict":true,"schema":"#.utf8))
        formatJSON.append(schema)
        formatJSON.append(contentsOf: Array("}}}".utf8))
        json.removeLast()
        json.append(formatJSON)
        return json
    }

    /// Generates one answer. Throws ``ProviderError`` or ``TextGenerationError``.
    public func generate(_ request: TextGenerationRequest) async throws -> GeneratedText {
        let response = try await connection.post(
            operation: "chat.completions", path: "chat/completions", contentType: "application/json", accept: "application/json",
            body: ByteBuffer(data: try body(for: request)))
        let completion = try OpenAIConnection.decode(ChatCompletion.self, from: response, operation: "chat.completions")
        guard let choice = completion.choices.first else {
            throw ProviderError.invalidResponse("OpenAI chat.completions returned no choices")
        }
        if let refusal = choice.message.refusal, !refusal.isEmpty { throw TextGenerationError.refused(refusal) }
        if let reason = choice.finishReason, reason == "length" || reason == "content_filter" {
            throw TextGenerationError.incomplete(finishReason: reason)
        }
        guard let content = choice.message.content else {
            throw ProviderError.invalidResponse("OpenAI chat.completions returned a message without content")
        }
        return GeneratedText(
            content: content, model: completion.model ?? request.model, promptTokens: completion.usage?.promptTokens ?? 0,
            completionTokens: completion.usage?.completionTokens ?? 0)
    }

    /// Streams the answer (`stream: true`, `stream_options.include_usage: true`): each `chat.completion.chunk`'s
    /// `delta.content` goes to `onDelta`; the last chunk's `usage` is returned with the whole text. A refusal or a
    /// `finish_reason` of `length` / `content_filter` throws as ``generate(_:)`` does, after the pieces seen so far.
    public func stream(_ request: TextGenerationRequest, onDelta: @escaping @Sendable (String) async -> Void) async throws -> GeneratedText {
        var json = try body(for: request)
        json.removeLast()
        json.append(contentsOf: Array(#","stream":true,"stream_options":{"include_usage":true}}"#.utf8))
        var pending = Data()
        var content = ""
        var refusal = ""
        var finishReason: String?
        var model: String?
        var usage: ChatCompletion.Usage?
        let decoder = JSONDecoder()
        try await connection.postStreaming(operation: "chat.completions", path: "chat/completions", body: ByteBuffer(data: json)) { chunk in
            pending.append(contentsOf: chunk.readableBytesView)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self).trimmingCharacters(in: .whitespaces)
                pending.removeSubrange(pending.startIndex...newline)
                guard line.hasPrefix("data:") else { continue }
                let payload = line.dropFirst(5).trimmingCharacters(in: .whitespaces)
                guard payload != "[DONE]" else { continue }
                guard let event = try? decoder.decode(StreamChunk.self, from: Data(payload.utf8)) else {
                    throw ProviderError.invalidResponse("OpenAI chat.completions streamed an unreadable chunk")
                }
                model = event.model ?? model
                usage = event.usage ?? usage
                for choice in event.choices where choice.index == 0 {
                    if let reason = choice.finishReason { finishReason = reason }
                    if let piece = choice.delta?.refusal { refusal += piece }
                    if let piece = choice.delta?.content, !piece.isEmpty {
                        content += piece
                        await onDelta(piece)
                    }
                }
            }
        }
        if !refusal.isEmpty { throw TextGenerationError.refused(refusal) }
        if let finishReason, finishReason == "length" || finishReason == "content_filter" {
            throw TextGenerationError.incomplete(finishReason: finishReason)
        }
        guard finishReason != nil else { throw ProviderError.invalidResponse("OpenAI chat.completions stream ended without a finish reason") }
        return GeneratedText(
            content: content, model: model ?? request.model, promptTokens: usage?.promptTokens ?? 0, completionTokens: usage?.completionTokens ?? 0)
    }

    // MARK: - Wire

    struct StreamChunk: Decodable {
        struct Choice: Decodable {
            struct Delta: Decodable {
                let content: String?
                let refusal: String?
            }

            let index: Int
            let delta: Delta?
            let finishReason: String?

            enum CodingKeys: String, CodingKey {
                case index, delta
                case finishReason = "finish_reason"
            }
        }

        let model: String?
        let choices: [Choice]
        let usage: ChatCompletion.Usage?
    }

    struct ChatBody: Encodable {
        struct Message: Encodable {
            let role: String
            let content: String
        }

        let model: String
        let messages: [Message]
        let maxCompletionTokens: Int?
        let temperature: Double?
        let reasoningEffort: String?
        let safetyIdentifier: String?
        let store: Bool

        enum CodingKeys: String, CodingKey {
            case model, messages
            case maxCompletionTokens = "max_completion_tokens"
            case temperature
            case reasoningEffort = "reasoning_effort"
            case safetyIdentifier = "safety_identifier"
            case store
        }
    }

    struct ChatCompletion: Decodable {
        struct Choice: Decodable {
            struct Message: Decodable {
                let content: String?
                let refusal: String?
            }

            let message: Message
            let finishReason: String?

            enum CodingKeys: String, CodingKey {
                case message
                case finishReason = "finish_reason"
            }
        }

        struct Usage: Decodable {
            let promptTokens: Int
            let completionTokens: Int

            enum CodingKeys: String, CodingKey {
                case promptTokens = "prompt_tokens"
                case completionTokens = "completion_tokens"
            }
        }

        let model: String?
        let choices: [Choice]
        let usage: Usage?
    }
}
