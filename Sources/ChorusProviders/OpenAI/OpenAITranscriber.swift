import ChorusCore
import Foundation
import NIOCore
import NIOFoundationCompat

/// Speech to text with OpenAI's `POST /v1/audio/transcriptions` (multipart/form-data).
///
/// What is asked for, and what ``Transcription/evidence`` holds, depends on the model (see ``EvidenceKind``):
/// - `whisper-1`: `response_format=verbose_json`, `timestamp_granularities[]=segment` → segments with `avg_logprob`,
///   `compression_ratio` and `no_speech_prob`, the detected language (Whisper names such as `english` are mapped to
///   ISO-639-1 for about 60 common languages, others become `nil`) and the duration;
/// - `gpt-4o-transcribe` and `gpt-4o-mini-transcribe*`: `response_format=json`, `include[]=logprobs` → token
///   log-probabilities;
/// - `gpt-transcribe` (the replacement of all three from 2027-02-26): `response_format=json` only, no logprobs → the
///   languages it detected (`languages`; empty when it could not tell), which ``TranscriptQuality`` judges with the
///   recording itself. The language hint goes out as `languages[]` (its "possible languages", so the model still
///   reports what it heard) instead of `language`;
/// - any other model (`gpt-4o-transcribe-diarize`, …): `response_format=json` → no evidence.
///
/// The request's language hint is sent as `language` (`languages[]` for `gpt-transcribe`); when the model reports no
/// language, the hint is returned. `usage` is read whichever form it takes: `{type: "duration", seconds}` gives the
/// duration, `{type: "tokens", input_tokens, output_tokens, …}` the tokens; numbers out of range are refused.
public struct OpenAITranscriber: Transcriber {
    /// What a model reports about its certainty.
    public enum EvidenceKind: Sendable, Equatable {
        /// `verbose_json` segments (`whisper-1`).
        case segments
        /// Token log-probabilities (`gpt-4o-transcribe`, `gpt-4o-mini-transcribe*`).
        case tokenLogprobs
        /// The detected languages (`gpt-transcribe`).
        case languages
        /// Nothing.
        case none
    }

    /// The model id (configuration).
    public let model: String
    private let connection: OpenAIConnection

    /// A transcriber using `model`.
    public init(connection: OpenAIConnection, model: String) {
        self.connection = connection
        self.model = model
    }

    /// What `model` reports, and therefore what is requested from it.
    public static func evidenceKind(forModel model: String) -> EvidenceKind {
        if model == "whisper-1" { return .segments }
        if model.hasPrefix("gpt-4o-mini-transcribe") { return .tokenLogprobs }
        if model.hasPrefix("gpt-4o-transcribe"), !model.contains("diarize") { return .tokenLogprobs }
        if model == "gpt-transcribe" || model.hasPrefix("gpt-transcribe-") { return .languages }
        return .none
    }

    /// The multipart form sent for `request` (also what tests inspect).
    public func form(for request: TranscriptionRequest) -> MultipartFormData {
        var form = MultipartFormData()
        form.append(name: "file", filename: request.filename, contentType: request.contentType, data: request.audio)
        form.append(name: "model", value: model)
        let kind = Self.evidenceKind(forModel: model)
        if let language = request.language, !language.isEmpty {
            form.append(name: kind == .languages ? "languages[]" : "language", value: language)
        }
        switch kind {
        case .segments:
            form.append(name: "response_format", value: "verbose_json")
            form.append(name: "timestamp_granularities[]", value: "segment")
        case .tokenLogprobs:
            form.append(name: "response_format", value: "json")
            form.append(name: "include[]", value: "logprobs")
        case .languages, .none:
            form.append(name: "response_format", value: "json")
        }
        return form
    }

    /// Transcribes one recording. Throws ``ProviderError``.
    public func transcribe(_ request: TranscriptionRequest) async throws -> Transcription {
        let form = form(for: request)
        let response = try await connection.post(
            operation: "audio.transcriptions", path: "audio/transcriptions", contentType: form.contentType,
            accept: "application/json", body: ByteBuffer(data: form.encoded()))
        let hint = request.language.flatMap { $0.isEmpty ? nil : $0.lowercased() }
        switch Self.evidenceKind(forModel: model) {
        case .segments:
            let body = try OpenAIConnection.decode(VerboseBody.self, from: response, operation: "audio.transcriptions")
            let usage = try Self.checkedUsage(body.usage)
            if let duration = body.duration, !(duration.isFinite && (0...86_400).contains(duration)) {
                throw ProviderError.invalidResponse("OpenAI audio.transcriptions returned a duration out of range")
            }
            let segments = (body.segments ?? []).map {
                TranscriptEvidence.Segment(
                    start: $0.start, end: $0.end, text: $0.text.trimmingCharacters(in: .whitespacesAndNewlines),
                    averageLogprob: $0.avgLogprob, compressionRatio: $0.compressionRatio, noSpeechProbability: $0.noSpeechProb)
            }
            return Transcription(
                text: body.text.trimmingCharacters(in: .whitespacesAndNewlines),
                language: body.language.flatMap(Self.isoLanguage) ?? hint,
                durationSeconds: body.duration ?? usage.seconds,
                evidence: TranscriptEvidence(segments: segments), model: model)
        case .tokenLogprobs, .languages, .none:
            let body = try OpenAIConnection.decode(JSONBody.self, from: response, operation: "audio.transcriptions")
            let logprobs = (body.logprobs ?? []).map(\.logprob)
            guard logprobs.allSatisfy({ $0.isFinite && $0 <= 0 }) else {
                throw ProviderError.invalidResponse("OpenAI audio.transcriptions returned a log-probability outside (-inf, 0]")
            }
            let usage = try Self.checkedUsage(body.usage)
            // Detected languages as ISO-639-1; a code that is not one is dropped rather than trusted.
            let detected = body.languages.map { $0.compactMap { Self.isoLanguage($0.code) } }
            var evidence = logprobs.isEmpty ? TranscriptEvidence.none : TranscriptEvidence(tokenLogprobs: logprobs)
            if Self.evidenceKind(forModel: model) == .languages {
                // gpt-transcribe always answers `languages`; its absence is read as "could not detect", like `[]`.
                evidence.detectedLanguages = detected ?? []
            }
            var transcription = Transcription(
                text: body.text.trimmingCharacters(in: .whitespacesAndNewlines), language: detected?.first ?? hint,
                durationSeconds: usage.seconds, evidence: evidence, model: model)
            transcription.inputTokens = usage.inputTokens
            transcription.outputTokens = usage.outputTokens
            return transcription
        }
    }

    /// `usage` as read: the duration of `{type: "duration"}` (0 … 1 day) or the tokens of `{type: "tokens"}`
    /// (0 … 100 million each); another `type` is ignored, numbers out of range are an invalid response.
    static func checkedUsage(_ usage: Usage?) throws -> (seconds: Double?, inputTokens: Int?, outputTokens: Int?) {
        guard let usage else { return (nil, nil, nil) }
        func invalid(_ what: String) -> ProviderError {
            ProviderError.invalidResponse("OpenAI audio.transcriptions returned usage with \(what) out of range")
        }
        switch usage.type {
        case "duration":
            guard let seconds = usage.seconds else { return (nil, nil, nil) }
            guard seconds.isFinite, (0...86_400).contains(seconds) else { throw invalid("seconds") }
            return (seconds, nil, nil)
        case "tokens":
            let limit = 100_000_000
            for (name, value) in [("input_tokens", usage.inputTokens), ("output_tokens", usage.outputTokens), ("total_tokens", usage.totalTokens)] {
                if let value, !(0...limit).contains(value) { throw invalid(name) }
            }
            return (nil, usage.inputTokens, usage.outputTokens)
        default:
            return (nil, nil, nil)
        }
    }

    /// The ISO-639-1 code for a language as OpenAI reports it: a code (`en`, `en-US`) or a Whisper language name
    /// (`english`); `nil` for names outside the common languages.
    public static func isoLanguage(_ reported: String) -> String? {
        let value = reported.trimmingCharacters(in: .whitespaces).lowercased()
        let primary = value.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map(String.init) ?? value
        if primary.count == 2, primary.allSatisfy(\.isLetter) { return primary }
        return whisperLanguages[value]
    }

    /// Whisper's language names (its tokenizer's table) for the languages it transcribes best.
    static let whisperLanguages: [String: String] = [
        "afrikaans": "af", "arabic": "ar", "armenian": "hy", "azerbaijani": "az", "belarusian": "be", "bengali": "bn",
        "bosnian": "bs", "bulgarian": "bg", "catalan": "ca", "chinese": "zh", "croatian": "hr", "czech": "cs",
        "danish": "da", "dutch": "nl", "english": "en", "estonian": "et", "finnish": "fi", "french": "fr",
        "galician": "gl", "georgian": "ka", "german": "de", "greek": "el", "gujarati": "gu", "hebrew": "he",
        "hindi": "hi", "hungarian": "hu", "icelandic": "is", "indonesian": "id", "italian": "it", "japanese": "ja",
        "kannada": "kn", "kazakh": "kk", "korean": "ko", "latvian": "lv", "lithuanian": "lt", "macedonian": "mk",
        "malay": "ms", "malayalam": "ml", "marathi": "mr", "maori": "mi", "nepali": "ne", "norwegian": "no",
        "persian": "fa", "polish": "pl", "portuguese": "pt", "punjabi": "pa", "romanian": "ro", "russian": "ru",
        "serbian": "sr", "slovak": "sk", "slovenian": "sl", "spanish": "es", "swahili": "sw", "swedish": "sv",
        "tagalog": "tl", "tamil": "ta", "telugu": "te", "thai": "th", "turkish": "tr", "ukrainian": "uk", "urdu": "ur",
        "vietnamese": "vi", "welsh": "cy",
    ]

    // MARK: - Wire

    /// `TranscriptTextUsageDuration` or `TranscriptTextUsageTokens`, told apart by `type`.
    struct Usage: Decodable {
        let type: String?
        let seconds: Double?
        let inputTokens: Int?
        let outputTokens: Int?
        let totalTokens: Int?

        enum CodingKeys: String, CodingKey {
            case type, seconds
            case inputTokens = "input_tokens"
            case outputTokens = "output_tokens"
            case totalTokens = "total_tokens"
        }
    }

    struct VerboseBody: Decodable {
        struct Segment: Decodable {
            let start: Double
            let end: Double
            let text: String
            let avgLogprob: Double
            let compressionRatio: Double
            let noSpeechProb: Double

            enum CodingKeys: String, CodingKey {
                case start, end, text
                case avgLogprob = "avg_logprob"
                case compressionRatio = "compression_ratio"
                case noSpeechProb = "no_speech_prob"
            }
        }

        let text: String
        let language: String?
        let duration: Double?
        let segments: [Segment]?
        let usage: Usage?

        enum CodingKeys: String, CodingKey {
            case text, language, duration, segments, usage
        }
    }

    struct JSONBody: Decodable {
        struct Logprob: Decodable {
            let logprob: Double

            enum CodingKeys: String, CodingKey {
                case logprob
            }
        }

        /// `TranscriptionLanguage`.
        struct Language: Decodable {
            let code: String

            enum CodingKeys: String, CodingKey {
                case code
            }
        }

        let text: String
        let logprobs: [Logprob]?
        let languages: [Language]?
        let usage: Usage?

        enum CodingKeys: String, CodingKey {
            case text, logprobs, languages, usage
        }
    }
}
