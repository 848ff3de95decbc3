import Foundation

/// One chat message.
public struct ChatMessage: Sendable, Equatable {
    public enum Role: String, Sendable, Equatable {
        case system, user, assistant
    }

    public var role: Role
    public var content: String

    public init(role: Role, content: String) {
        self.role = role
        self.content = content
    }
}

/// A JSON Schema the answer must follow (OpenAI `response_format: {type: json_schema, strict: true}`).
public struct StructuredOutputFormat: Sendable, Equatable {
    /// `[a-zA-Z0-9_-]{1,64}`.
    public var name: String
    /// The schema as JSON text (strict mode: every property required, `additionalProperties: false`).
    public var schemaJSON: String

    public init(name: String, schemaJSON: String) {
        self.name = name
        self.schemaJSON = schemaJSON
    }
}

/// One generation.
public struct TextGenerationRequest: Sendable, Equatable {
    /// The provider's model id (configuration).
    public var model: String
    public var messages: [ChatMessage]
    /// Structured output, or `nil` for free text.
    public var format: StructuredOutputFormat?
    /// `max_completion_tokens`.
    public var maxOutputTokens: Int?
    public var temperature: Double?
    /// A hashed user id for the provider's abuse detection (`safety_identifier`, ≤ 64 characters).
    public var safetyIdentifier: String?

    public init(
        model: String, messages: [ChatMessage], format: StructuredOutputFormat? = nil, maxOutputTokens: Int? = nil,
        temperature: Double? = nil, safetyIdentifier: String? = nil
    ) {
        self.model = model
        self.messages = messages
        self.format = format
        self.maxOutputTokens = maxOutputTokens
        self.temperature = temperature
        self.safetyIdentifier = safetyIdentifier
    }
}

/// The model's answer.
public struct GeneratedText: Sendable, Equatable {
    /// The content (JSON text when a format was requested).
    public var content: String
    public var model: String
    public var promptTokens: Int
    public var completionTokens: Int

    public init(content: String, model: String, promptTokens: Int, completionTokens: Int) {
        self.content = content
        self.model = model
        self.promptTokens = promptTokens
        self.completionTokens = completionTokens
    }
}

/// Why a generation produced no usable content, beyond transport failures (``ProviderError``).
public enum TextGenerationError: Error, Sendable, Equatable {
    /// The model refused (`message.refusal`).
    case refused(String)
    /// The answer was cut off (`finish_reason` `length`) or filtered (`content_filter`): unusable, especially as JSON.
    case incomplete(finishReason: String)
}

/// Chat completions (OpenAI `POST /v1/chat/completions`, or a sandbox twin).
public protocol TextGenerator: Sendable {
    /// Generates one answer. Throws ``ProviderError`` or ``TextGenerationError``.
    func generate(_ request: TextGenerationRequest) async throws -> GeneratedText

    /// Generates one answer, handing each piece of text to `onDelta` as the model writes it, and returns the whole
    /// answer. Generators that cannot stream hand over the whole text once.
    func stream(_ request: TextGenerationRequest, onDelta: @escaping @Sendable (String) async -> Void) async throws -> GeneratedText
}

extension TextGenerator {
    public func stream(_ request: TextGenerationRequest, onDelta: @escaping @Sendable (String) async -> Void) async throws -> GeneratedText {
        let generated = try await generate(request)
        await onDelta(generated.content)
        return generated
    }
}
