import Foundation
import NIOCore
import NIOFoundationCompat

/// Pictures with OpenAI's `POST /v1/images/generations` (GPT image models).
///
/// The body is `{model, prompt, n: 1, size, quality, output_format: "png", moderation: "auto", user?}`; the answer's
/// `data[0].b64_json` is the PNG and `usage` its token cost. A 400 whose code is `moderation_blocked` (GPT image
/// models) or `content_policy_violation` (DALL·E, Azure) becomes ``ImageGenerationError/contentPolicy(_:)``; other
/// failures are ``ProviderError``s. The connection's own timeout and retry policy apply: stories give it a 30 s
/// deadline and no transport retries, because their illustration queue does the retrying.
public struct OpenAIImageGenerator: ImageGenerator {
    private let connection: OpenAIConnection

    public init(connection: OpenAIConnection) {
        self.connection = connection
    }

    /// The JSON body sent for `request` (also what tests inspect).
    public func body(for request: ImageGenerationRequest) throws -> Data {
        try JSONEncoder().encode(
            Body(
                model: request.model, prompt: request.prompt, n: 1, size: request.size, quality: request.quality, outputFormat: "png",
                moderation: "auto", user: request.safetyIdentifier.flatMap { $0.isEmpty ? nil : $0 }))
    }

    public func generate(_ request: ImageGenerationRequest) async throws -> GeneratedImage {
        let response: ProviderHTTP.Response
        do {
            response = try await connection.post(
                operation: "images.generations", path: "images/generations", contentType: "application/json", accept: "application/json",
                body: ByteBuffer(data: try body(for: request)))
        } catch ProviderError.rejected(_, let code, let message) where code == "moderation_blocked" || code == "content_policy_violation" {
            throw ImageGenerationError.contentPolicy(message)
        }
        let answer = try OpenAIConnection.decode(Answer.self, from: response, operation: "images.generations")
        guard let encoded = answer.data.first?.b64JSON, let png = Data(base64Encoded: encoded), !png.isEmpty else {
            throw ProviderError.invalidResponse("OpenAI images.generations returned no image")
        }
        return GeneratedImage(png: png, model: request.model, inputTokens: answer.usage?.inputTokens, outputTokens: answer.usage?.outputTokens)
    }

    struct Body: Encodable {
        let model: String
        let prompt: String
        let n: Int
        let size: String
        let quality: String
        let outputFormat: String
        let moderation: String
        let user: String?

        enum CodingKeys: String, CodingKey {
            case model, prompt, n, size, quality, moderation, user
            case outputFormat = "output_format"
        }
    }

    struct Answer: Decodable {
        struct Item: Decodable {
            let b64JSON: String?
            enum CodingKeys: String, CodingKey { case b64JSON = "b64_json" }
        }

        struct Usage: Decodable {
            let inputTokens: Int?
            let outputTokens: Int?
            enum CodingKeys: String, CodingKey {
                case inputTokens = "input_tokens"
                case outputTokens = "output_tokens"
            }
        }

        let data: [Item]
        let usage: Usage?
    }
}

/// Text moderation with OpenAI's `POST /v1/moderations` (`{model, input}` → `results[0].flagged` and `categories`).
public struct OpenAIModerator: ContentModerator {
    private let connection: OpenAIConnection

    public init(connection: OpenAIConnection) {
        self.connection = connection
    }

    public func moderate(_ text: String, model: String) async throws -> ModerationResult {
        let body = try JSONEncoder().encode(["model": model, "input": text])
        let response = try await connection.post(
            operation: "moderations", path: "moderations", contentType: "application/json", accept: "application/json", body: ByteBuffer(data: body))
        let answer = try OpenAIConnection.decode(Answer.self, from: response, operation: "moderations")
        guard let result = answer.results.first else { throw ProviderError.invalidResponse("OpenAI moderations returned no result") }
        return ModerationResult(flagged: result.flagged, categories: result.categories.filter(\.value).map(\.key).sorted())
    }

    struct Answer: Decodable {
        struct Result: Decodable {
            let flagged: Bool
            let categories: [String: Bool]
        }

        let results: [Result]
    }
}
