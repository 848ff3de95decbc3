/// What a speech-to-text model reported about its own certainty, the input of ``TranscriptQuality``.
///
/// Different models report different evidence (see `docs/voice-messages.md`): `whisper-1` segments with average
/// log-probabilities and no-speech probabilities (`verbose_json`), `gpt-4o(-mini)-transcribe` token log-probabilities
/// (`include[]=logprobs`), `gpt-transcribe` only the languages it detected (an empty list: it could not tell).
public struct TranscriptEvidence: Sendable, Equatable {
    /// One decoded stretch of audio (`verbose_json` segment).
    public struct Segment: Sendable, Equatable {
        /// Start and end in seconds from the beginning of the audio.
        public var start: Double
        public var end: Double
        public var text: String
        /// The mean log-probability of the segment's tokens.
        public var averageLogprob: Double
        /// gzip compression ratio of the text; high values mean repetitive (hallucinated) output.
        public var compressionRatio: Double
        /// The model's probability that the segment holds no speech.
        public var noSpeechProbability: Double

        public init(
            start: Double, end: Double, text: String, averageLogprob: Double, compressionRatio: Double,
            noSpeechProbability: Double
        ) {
            self.start = start
            self.end = end
            self.text = text
            self.averageLogprob = averageLogprob
            self.compressionRatio = compressionRatio
            self.noSpeechProbability = noSpeechProbability
        }
    }

    /// Segments, when the model returns them (`whisper-1`).
    public var segments: [Segment]
    /// Per-token log-probabilities, when the model returns them (`gpt-4o(-mini)-transcribe`).
    public var tokenLogprobs: [Double]

    /// The languages the model detected (ISO-639-1, `gpt-transcribe`'s `languages`): `nil` when the model does not report
    /// them, empty when it could not reliably detect any.
    public var detectedLanguages: [String]?

    public init(segments: [Segment] = [], tokenLogprobs: [Double] = [], detectedLanguages: [String]? = nil) {
        self.segments = segments
        self.tokenLogprobs = tokenLogprobs
        self.detectedLanguages = detectedLanguages
    }

    /// No evidence (models that report none).
    public static let none = TranscriptEvidence()
}
