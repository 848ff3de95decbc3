import ChorusCore
import Foundation
import NIOCore
import NIOFoundationCompat

/// Text to speech with ElevenLabs: `POST /v1/text-to-speech/{voice_id}?output_format=…` (JSON in, audio bytes out).
///
/// The body is `{text, model_id, voice_settings?}`; `voice_settings` carries `stability` and `similarity_boost` when
/// the request sets either (ElevenLabs applies the voice's own settings to what is left out). MP3 requests ask for
/// ``mp3OutputFormat`` (default `mp3_44100_128`, every plan). WAV requests ask for raw PCM, `pcm_<``wavSampleRate``>`
/// (default `pcm_24000`): the API's `output_format` enum has no `wav_*` member, so Chorus writes the 44-byte WAV header
/// itself (``PCMWAV``); 44.1 kHz PCM needs a Pro plan. Billed characters are ElevenLabs' `character-cost` header when
/// it is sent, else the text's length.
public struct ElevenLabsSpeechSynthesizer: SpeechSynthesizer {
    /// The longest text one request may carry: the configured model's limit (see ``maxInputCharacters(model:)``).
    public let maxInputCharacters: Int
    /// The `output_format` of MP3 requests.
    public let mp3OutputFormat: String
    /// The sample rate of WAV requests, one of ``pcmSampleRates``: they ask for `pcm_<rate>` and get a WAV header.
    public let wavSampleRate: Int
    /// The `pcm_<rate>` sample rates the API documents.
    public static let pcmSampleRates = [8_000, 16_000, 22_050, 24_000, 44_100, 48_000]
    private let connection: ElevenLabsConnection

    /// A synthesizer.
    ///
    /// - Parameters:
    ///   - maxInputCharacters: The configured model's per-request limit; ``maxInputCharacters(model:)`` knows the
    ///     current models, and `GET /v1/models` (`maximum_text_length_per_request`) is authoritative.
    ///   - wavSampleRate: A rate of ``pcmSampleRates``; any other rate is replaced by 24,000.
    public init(
        connection: ElevenLabsConnection, maxInputCharacters: Int, mp3OutputFormat: String = "mp3_44100_128", wavSampleRate: Int = 24_000
    ) {
        self.connection = connection
        self.maxInputCharacters = max(1, maxInputCharacters)
        self.mp3OutputFormat = mp3OutputFormat
        self.wavSampleRate = Self.pcmSampleRates.contains(wavSampleRate) ? wavSampleRate : 24_000
    }

    /// The per-request character limit of an ElevenLabs model: `eleven_multilingual_v2` 10,000, `eleven_flash_v2_5`
    /// and `eleven_turbo_v2_5` 40,000, `eleven_flash_v2` and `eleven_turbo_v2` 30,000, `eleven_v3` 5,000; 5,000 for
    /// a model not listed (the smallest current limit).
    public static func maxInputCharacters(model: String) -> Int {
        switch model {
        case "eleven_multilingual_v2": 10_000
        case "eleven_flash_v2_5", "eleven_turbo_v2_5": 40_000
        case "eleven_flash_v2", "eleven_turbo_v2": 30_000
        default: 5_000
        }
    }

    /// The JSON body sent for `request` (also what tests inspect).
    public func body(for request: SpeechRequest) throws -> Data {
        let settings: VoiceSettings? =
            request.stability == nil && request.similarityBoost == nil
            ? nil : VoiceSettings(stability: request.stability, similarityBoost: request.similarityBoost)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(SpeechBody(text: request.text, modelID: request.model, voiceSettings: settings))
    }

    /// The `output_format` query value for a format.
    public func outputFormat(for format: SpeechAudioFormat) -> String {
        switch format {
        case .mp3: mp3OutputFormat
        case .wav: "pcm_\(wavSampleRate)"
        }
    }

    /// Speaks one piece of text. Throws ``ProviderError`` (a text over ``maxInputCharacters`` is refused before any
    /// request, as `rejected(400, "max_character_limit_exceeded")`).
    public func synthesize(_ request: SpeechRequest) async throws -> SynthesizedSpeech {
        guard request.text.count <= maxInputCharacters else {
            throw ProviderError.rejected(
                httpStatus: 400, code: "max_character_limit_exceeded",
                message: "The text has \(request.text.count) characters; the limit is \(maxInputCharacters)")
        }
        let response = try await connection.send(
            operation: "text-to-speech", method: .POST,
            path: "/v1/text-to-speech/\(ElevenLabsConnection.pathSegment(request.voiceID))",
            query: [("output_format", outputFormat(for: request.format))], contentType: "application/json",
            accept: request.format == .wav ? "audio/pcm" : request.format.contentType, body: ByteBuffer(data: try body(for: request)))
        guard response.body.readableBytes > 0 else {
            throw ProviderError.invalidResponse("ElevenLabs text-to-speech returned no audio")
        }
        let billed = response.headers.first(name: "character-cost").flatMap(Int.init) ?? request.text.count
        var audio = response.data
        if request.format == .wav {
            do {
                audio = try PCMWAV.wrap(pcm16LittleEndian: audio, sampleRate: wavSampleRate)
            } catch {
                throw ProviderError.invalidResponse("ElevenLabs text-to-speech returned PCM that is not 16-bit frames: \(error)")
            }
        }
        return SynthesizedSpeech(audio: audio, format: request.format, billedCharacters: billed)
    }

    struct VoiceSettings: Encodable {
        let stability: Double?
        let similarityBoost: Double?

        enum CodingKeys: String, CodingKey {
            case stability
            case similarityBoost = "similarity_boost"
        }
    }

    struct SpeechBody: Encodable {
        let text: String
        let modelID: String
        let voiceSettings: VoiceSettings?

        enum CodingKeys: String, CodingKey {
            case text
            case modelID = "model_id"
            case voiceSettings = "voice_settings"
        }
    }
}
