import Foundation
import NIOCore
import NIOFoundationCompat

/// Text to speech with OpenAI's `POST /v1/audio/speech` (JSON in, audio bytes out).
///
/// The body is `{model, input, voice, instructions?, response_format, speed?}`: `instructions` only when the request
/// has them (the `gpt-4o-mini-tts` family uses them, `tts-1` ignores them), `speed` only when configured. A voice id
/// starting with `voice_` is sent as a custom voice (`{"id": "voice_…"}`), anything else as a built-in voice name.
/// The API bills per input character, so ``SynthesizedSpeech/billedCharacters`` is the input's length.
public struct OpenAISpeechSynthesizer: SpeechSynthesizer {
    /// OpenAI's limit on `input`: 4,096 characters (Unicode code points, as the API counts them).
    public let maxInputCharacters = 4_096
    /// The playback speed sent as `speed` (0.25–4), or `nil` for the API's default of 1.
    public let speed: Double?
    private let connection: OpenAIConnection

    /// Whether `model` is a `/v1/audio/speech` model (`tts-1`, `tts-1-hd`, `gpt-4o-mini-tts` and its snapshots; all shut
    /// down on 2027-01-06). Other OpenAI speech models (`gpt-realtime-2.1-mini`) speak through
    /// ``OpenAIRealtimeSpeechSynthesizer``.
    public static func serves(model: String) -> Bool {
        model == "tts-1" || model == "tts-1-hd" || model.hasPrefix("gpt-4o-mini-tts")
    }

    /// A synthesizer; `speed` applies to every request (brought into 0.25…4; a non-finite value means the default).
    public init(connection: OpenAIConnection, speed: Double? = nil) {
        self.connection = connection
        self.speed = speed.flatMap { $0.isFinite ? min(max($0, 0.25), 4) : nil }
    }

    /// The JSON body sent for `request` (also what tests inspect). Encoding strings and a finite speed cannot fail.
    public func body(for request: SpeechRequest) throws -> Data {
        let voice: SpeechBody.Voice = request.voiceID.hasPrefix("voice_") ? .custom(id: request.voiceID) : .builtIn(request.voiceID)
        let body = SpeechBody(
            model: request.model, input: request.text, voice: voice,
            instructions: request.instructions.flatMap { $0.isEmpty ? nil : $0 },
            responseFormat: request.format.rawValue, speed: speed)
        return try JSONEncoder().encode(body)
    }

    /// Speaks one piece of text. Throws ``ProviderError``.
    public func synthesize(_ request: SpeechRequest) async throws -> SynthesizedSpeech {
        let response = try await connection.post(
            operation: "audio.speech", path: "audio/speech", contentType: "application/json", accept: request.format.contentType,
            body: ByteBuffer(data: try body(for: request)))
        guard response.body.readableBytes > 0 else {
            throw ProviderError.invalidResponse("OpenAI audio.speech returned no audio")
        }
        return SynthesizedSpeech(audio: response.data, format: request.format, billedCharacters: request.text.unicodeScalars.count)
    }

    struct SpeechBody: Encodable {
        enum Voice: Encodable {
            case builtIn(String)
            case custom(id: String)

            func encode(to encoder: any Encoder) throws {
                switch self {
                case .builtIn(let name):
                    var container = encoder.singleValueContainer()
                    try container.encode(name)
                case .custom(let id):
                    var container = encoder.container(keyedBy: CustomKeys.self)
                    try container.encode(id, forKey: .id)
                }
            }

            enum CustomKeys: String, CodingKey {
                case id
            }
        }

        let model: String
        let input: String
        let voice: Voice
        let instructions: String?
        let responseFormat: String
        let speed: Double?

        enum CodingKeys: String, CodingKey {
            case model, input, voice, instructions
            case responseFormat = "response_format"
            case speed
        }
    }
}
