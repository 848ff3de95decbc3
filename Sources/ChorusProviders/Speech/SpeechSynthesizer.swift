import Foundation

/// Audio containers a synthesizer can produce.
public enum SpeechAudioFormat: String, Sendable, Equatable, Hashable {
    case mp3
    case wav

    /// The media type served to clients.
    public var contentType: String {
        switch self {
        case .mp3: "audio/mpeg"
        case .wav: "audio/wav"
        }
    }
}

/// One piece of text to speak.
public struct SpeechRequest: Sendable, Equatable, Hashable {
    /// The text, at most the synthesizer's ``SpeechSynthesizer/maxInputCharacters``.
    public var text: String
    /// The provider's voice id: an OpenAI voice name (`coral`) or an ElevenLabs voice id.
    public var voiceID: String
    /// The provider's model id (configuration, never a literal).
    public var model: String
    /// Delivery instructions (OpenAI `gpt-4o-mini-tts` family; ignored by providers without them).
    public var instructions: String?
    public var format: SpeechAudioFormat
    /// ElevenLabs voice settings (ignored by OpenAI).
    public var stability: Double?
    public var similarityBoost: Double?

    public init(
        text: String, voiceID: String, model: String, instructions: String? = nil, format: SpeechAudioFormat = .mp3,
        stability: Double? = nil, similarityBoost: Double? = nil
    ) {
        self.text = text
        self.voiceID = voiceID
        self.model = model
        self.instructions = instructions
        self.format = format
        self.stability = stability
        self.similarityBoost = similarityBoost
    }
}

/// Spoken audio.
public struct SynthesizedSpeech: Sendable, Equatable {
    public var audio: Data
    public var format: SpeechAudioFormat
    /// Characters billed (the provider's count when it reports one, else the input length).
    public var billedCharacters: Int

    public init(audio: Data, format: SpeechAudioFormat, billedCharacters: Int) {
        self.audio = audio
        self.format = format
        self.billedCharacters = billedCharacters
    }
}

/// Text to speech (OpenAI `POST /v1/audio/speech`, ElevenLabs `POST /v1/text-to-speech/{voice_id}`, or sandbox twins).
public protocol SpeechSynthesizer: Sendable {
    /// The longest text one request may carry; longer text is split by the caller at sentence boundaries.
    var maxInputCharacters: Int { get }
    /// Speaks one piece of text. Throws ``ProviderError``.
    func synthesize(_ request: SpeechRequest) async throws -> SynthesizedSpeech
}
