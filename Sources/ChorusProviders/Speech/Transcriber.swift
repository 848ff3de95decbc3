import ChorusCore
import Foundation

/// One recording to transcribe.
public struct TranscriptionRequest: Sendable, Equatable {
    /// The encoded recording (m4a/AAC, mp3 or wav), as stored.
    public var audio: Data
    /// A file name with the right extension (`message.m4a`); providers use it to recognise the format.
    public var filename: String
    /// The recording's media type (`audio/mp4`, `audio/mpeg`, `audio/wav`).
    public var contentType: String
    /// An ISO-639-1 language hint (`en`), or `nil` to let the model detect it.
    public var language: String?

    public init(audio: Data, filename: String, contentType: String, language: String? = nil) {
        self.audio = audio
        self.filename = filename
        self.contentType = contentType
        self.language = language
    }
}

/// What the model heard.
public struct Transcription: Sendable, Equatable {
    /// The transcript as the model returned it (trimmed of surrounding whitespace).
    public var text: String
    /// The detected or given language (ISO-639-1), when the model reports it.
    public var language: String?
    /// The audio's duration as the model measured it, in seconds.
    public var durationSeconds: Double?
    /// The model's certainty, as far as it reports it.
    public var evidence: TranscriptEvidence
    /// The model that produced it (for cost tracking and the confidence method).
    public var model: String
    /// The tokens billed, when the model reports token usage (`usage.type == "tokens"`).
    public var inputTokens: Int?
    public var outputTokens: Int?

    public init(text: String, language: String?, durationSeconds: Double?, evidence: TranscriptEvidence, model: String) {
        self.text = text
        self.language = language
        self.durationSeconds = durationSeconds
        self.evidence = evidence
        self.model = model
    }
}

/// Speech to text (OpenAI `POST /v1/audio/transcriptions`, or a sandbox twin).
public protocol Transcriber: Sendable {
    /// Transcribes one recording. Throws ``ProviderError``.
    func transcribe(_ request: TranscriptionRequest) async throws -> Transcription
}
