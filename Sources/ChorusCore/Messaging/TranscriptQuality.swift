import Foundation

/// The confidence indicator shown next to a transcript (PRD feature 1.2: Good / Fair / Poor).
public enum ConfidenceLabel: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    case good, fair, poor
}

/// Which evidence a confidence was computed from.
public enum ConfidenceMethod: String, Sendable, Equatable, Hashable, Codable {
    /// `whisper-1` `verbose_json` segments: average log-probabilities weighted by duration.
    case segments
    /// `gpt-4o(-mini)-transcribe` `include[]=logprobs`: per-token probabilities.
    case tokenLogprobs = "token_logprobs"
    /// The model reports nothing (`gpt-transcribe`): no confidence is claimed.
    case none
}

/// A transcript as it should be shown and stored: hallucinated text removed, with its confidence.
public struct TranscriptAssessment: Sendable, Equatable {
    /// The transcript to show: the model's text, less any segments judged to be silence hallucinations.
    public var text: String
    /// 0 (certainly wrong) … 1 (certainly right), or `nil` when the model gave no evidence.
    public var confidence: Double?
    /// The label for ``confidence``, `nil` exactly when it is.
    public var label: ConfidenceLabel?
    public var method: ConfidenceMethod
    /// The recording held no speech: the transcript is empty and rated poor rather than invented.
    public var isSilent: Bool

    public init(text: String, confidence: Double?, label: ConfidenceLabel?, method: ConfidenceMethod, isSilent: Bool) {
        self.text = text
        self.confidence = confidence
        self.label = label
        self.method = method
        self.isSilent = isSilent
    }
}

/// Turns what a speech-to-text model reported about its own certainty into a transcript confidence and label.
///
/// What each OpenAI model reports (research notes §0 and §1.2):
/// - `whisper-1` (`response_format=verbose_json`): segments with `avg_logprob`, `compression_ratio` and
///   `no_speech_prob` → ``ConfidenceMethod/segments``. Each segment's probability is `exp(avg_logprob)`; the
///   confidence is their mean weighted by segment duration. Segments Whisper most likely invented over silence
///   (``noSpeechProbabilityThreshold`` and ``silenceLogprobThreshold`` both crossed) are removed from the text;
///   suspect segments (repetitive or improbable) count at most ``suspectSegmentCeiling``.
/// - `gpt-4o-transcribe`, `gpt-4o-mini-transcribe` (`include[]=logprobs`): token log-probabilities →
///   ``ConfidenceMethod/tokenLogprobs``. The mean token probability, blended with the mean of the weakest tokens
///   (``tokenTailFraction``, weight ``tokenTailWeight``) so that one misheard name or time is not averaged away.
/// - `gpt-transcribe`: no segments and no logprobs → ``ConfidenceMethod/none``, confidence and label `nil`.
///
/// Whatever the evidence, an empty transcript (every segment dropped, or no text at all) is reported as silence:
/// empty text, confidence 0, label poor.
public enum TranscriptQuality {
    /// At or above this confidence a transcript is labelled good: about one token in five in doubt at most.
    /// Starting point from the research notes; to be calibrated on real recordings and user feedback.
    public static let goodThreshold = 0.80
    /// At or above this (and below ``goodThreshold``) a transcript is fair; below it, poor. `exp(-0.6)` ≈ 0.55: an
    /// average log-probability under -0.6 is where Whisper's output starts to read as wrong words.
    public static let fairThreshold = 0.55
    /// Whisper's default `no_speech_threshold`: above it the model believes the segment holds no speech.
    public static let noSpeechProbabilityThreshold = 0.6
    /// Whisper's default `logprob_threshold`: below it decoding is considered failed. Combined with
    /// ``noSpeechProbabilityThreshold`` it marks a segment as text invented over silence.
    public static let silenceLogprobThreshold = -1.0
    /// Whisper's default `compression_ratio_threshold`: text compressing better than this is repetitive (a loop).
    public static let suspectCompressionRatio = 2.4
    /// An average log-probability below this makes a segment suspect (Whisper's own failure threshold).
    public static let suspectLogprobThreshold = -1.0
    /// The most a suspect segment can contribute: below ``fairThreshold``, so it counts as poor. Repetition loops
    /// are often decoded with high probability, so their own log-probability cannot be trusted.
    public static let suspectSegmentCeiling = 0.5
    /// The share of a transcript's tokens, weakest first, whose mean probability is blended into the confidence
    /// (at least one token: for short messages this is the single weakest token).
    public static let tokenTailFraction = 0.1
    /// How much the weakest tokens' mean counts against the overall mean: with 0.25 a short message whose other
    /// tokens are near-certain but whose weakest token is at 0.2 ends up fair, not good.
    public static let tokenTailWeight = 0.25

    /// Assesses a transcript from the evidence its model returned (segments win when both are present).
    public static func assess(text: String, evidence: TranscriptEvidence) -> TranscriptAssessment {
        if !evidence.segments.isEmpty { return assessSegments(text: text, segments: evidence.segments) }
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return silent(method: evidence.tokenLogprobs.isEmpty ? .none : .tokenLogprobs) }
        guard !evidence.tokenLogprobs.isEmpty else {
            return TranscriptAssessment(text: text, confidence: nil, label: nil, method: .none, isSilent: false)
        }
        return rated(text: text, confidence: tokenConfidence(evidence.tokenLogprobs), method: .tokenLogprobs)
    }

    /// The label of a confidence (0…1).
    public static func label(for confidence: Double) -> ConfidenceLabel {
        if confidence >= goodThreshold { return .good }
        if confidence >= fairThreshold { return .fair }
        return .poor
    }

    /// Whether Whisper most likely invented this segment over silence.
    public static func isSilenceHallucination(_ segment: TranscriptEvidence.Segment) -> Bool {
        segment.noSpeechProbability > noSpeechProbabilityThreshold && segment.averageLogprob < silenceLogprobThreshold
    }

    /// Whether a segment's text is doubtful: repetitive or improbable.
    public static func isSuspect(_ segment: TranscriptEvidence.Segment) -> Bool {
        segment.compressionRatio > suspectCompressionRatio || segment.averageLogprob < suspectLogprobThreshold
    }

    private static func assessSegments(text: String, segments: [TranscriptEvidence.Segment]) -> TranscriptAssessment {
        let kept = segments.filter { !isSilenceHallucination($0) }
        let shown =
            kept.count == segments.count
            ? text.trimmingCharacters(in: .whitespacesAndNewlines)
            : kept.map(\.text).joined().trimmingCharacters(in: .whitespacesAndNewlines)
        guard !kept.isEmpty, !shown.isEmpty else { return silent(method: .segments) }
        let durations = kept.map { max(0, $0.end - $0.start) }
        let weights = durations.allSatisfy { $0 == 0 } ? durations.map { _ in 1.0 } : durations
        var weighted = 0.0
        for (segment, weight) in zip(kept, weights) {
            let probability = exp(segment.averageLogprob)
            weighted += weight * (isSuspect(segment) ? min(probability, suspectSegmentCeiling) : probability)
        }
        return rated(text: shown, confidence: weighted / weights.reduce(0, +), method: .segments)
    }

    private static func tokenConfidence(_ logprobs: [Double]) -> Double {
        let probabilities = logprobs.map { exp($0) }.sorted()
        let mean = probabilities.reduce(0, +) / Double(probabilities.count)
        let tailCount = max(1, Int((Double(probabilities.count) * tokenTailFraction).rounded(.down)))
        let tail = probabilities.prefix(tailCount).reduce(0, +) / Double(tailCount)
        return (1 - tokenTailWeight) * mean + tokenTailWeight * tail
    }

    private static func rated(text: String, confidence: Double, method: ConfidenceMethod) -> TranscriptAssessment {
        let confidence = min(1, max(0, confidence))
        return TranscriptAssessment(text: text, confidence: confidence, label: label(for: confidence), method: method, isSilent: false)
    }

    private static func silent(method: ConfidenceMethod) -> TranscriptAssessment {
        TranscriptAssessment(text: "", confidence: 0, label: .poor, method: method, isSilent: true)
    }
}
