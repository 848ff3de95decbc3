import Foundation

/// One picture to draw.
public struct ImageGenerationRequest: Sendable, Equatable {
    /// The provider's model id (configuration).
    public var model: String
    public var prompt: String
    /// `WxH` (`1024x1024`, `1536x1024`, …) or `auto`.
    public var size: String
    /// `low`, `medium`, `high` or `auto`.
    public var quality: String
    /// A hashed user id for the provider's abuse detection.
    public var safetyIdentifier: String?

    public init(model: String, prompt: String, size: String, quality: String, safetyIdentifier: String? = nil) {
        self.model = model
        self.prompt = prompt
        self.size = size
        self.quality = quality
        self.safetyIdentifier = safetyIdentifier
    }
}

/// A drawn picture.
public struct GeneratedImage: Sendable, Equatable {
    /// PNG bytes.
    public var png: Data
    public var model: String
    /// Token usage, when the provider reported it (GPT image models).
    public var inputTokens: Int?
    public var outputTokens: Int?

    public init(png: Data, model: String, inputTokens: Int?, outputTokens: Int?) {
        self.png = png
        self.model = model
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
    }
}

/// Why a picture was not drawn, beyond the transport failures of ``ProviderError``.
public enum ImageGenerationError: Error, Sendable, Equatable {
    /// The provider's safety system refused the prompt (`moderation_blocked`, `content_policy_violation`): the same
    /// prompt fails again; a softer one may not.
    case contentPolicy(String)
}

/// Image generation (OpenAI `POST /v1/images/generations`, or a sandbox twin).
public protocol ImageGenerator: Sendable {
    /// Draws one picture. Throws ``ImageGenerationError`` or ``ProviderError``.
    func generate(_ request: ImageGenerationRequest) async throws -> GeneratedImage
}

/// A second opinion on text (OpenAI `POST /v1/moderations`).
public protocol ContentModerator: Sendable {
    /// Whether the provider flags `text`, and for which categories.
    func moderate(_ text: String, model: String) async throws -> ModerationResult
}

/// The provider's verdict.
public struct ModerationResult: Sendable, Equatable {
    public var flagged: Bool
    /// The categories that were flagged (`violence`, `sexual/minors`, …).
    public var categories: [String]

    public init(flagged: Bool, categories: [String]) {
        self.flagged = flagged
        self.categories = categories
    }
}
