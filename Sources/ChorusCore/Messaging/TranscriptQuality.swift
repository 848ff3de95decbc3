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
    /// The model reports no certainty but Chorus can judge the transcript from what it does report and from the
    /// recording (`gpt-transcribe`: detected languages, words against the audio, repetition, the audio's levels).
    case signals
    /// Nothing to judge from (a model reporting neither certainty nor languages, e.g. `gpt-4o-transcribe-diarize`):
    /// no confidence is claimed.
    case none
}

/// Why a transcript judged from signals (``ConfidenceMethod/signals``) is doubted; each caps the confidence.
public enum TranscriptDoubt: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    /// The same word or phrase repeated in a loop: what speech models produce when they lose the audio.
    case repetition
    /// The model could not reliably detect any language (`languages: []`): it did not understand the speech.
    case languageUndetected = "language_undetected"
    /// The model detected a language other than the ones the user said they speak.
    case unexpectedLanguage = "unexpected_language"
    /// More text than the audio could hold: invented words.
    case tooManyWords = "too_many_words"
    /// Far less text than the audio's syllables: words were lost.
    case missingWords = "missing_words"
    /// Far less text than the audio's syllables: most words were lost.
    case mostWordsMissing = "most_words_missing"
    /// Speech barely stands above the background noise.
    case noisy
    /// Speech faster than people articulate clearly.
    case fastSpeech = "fast_speech"
    /// The recording stops while someone is speaking: the end of the message is missing.
    case cutOff = "cut_off"
}

/// What Chorus knows about a recording apart from the model's answer.
public struct RecordingFacts: Sendable, Equatable {
    /// The recording's duration from its container, when known.
    public var durationSeconds: Double?
    /// The languages the user said the recording is in (ISO-639-1), if any.
    public var expectedLanguages: [String]
    /// The recording's levels, when its samples can be read (WAV).
    public var activity: SpeechActivity?

    public init(durationSeconds: Double? = nil, expectedLanguages: [String] = [], activity: SpeechActivity? = nil) {
        self.durationSeconds = durationSeconds
        self.expectedLanguages = expectedLanguages
        self.activity = activity
    }

    /// Nothing known.
    public static let unknown = RecordingFacts()
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
    /// Why the transcript is doubted (``ConfidenceMethod/signals`` only), weakest first.
    public var doubts: [TranscriptDoubt]

    public init(
        text: String, confidence: Double?, label: ConfidenceLabel?, method: ConfidenceMethod, isSilent: Bool,
        doubts: [TranscriptDoubt] = []
    ) {
        self.text = text
        self.confidence = confidence
        self.label = label
        self.method = method
        self.isSilent = isSilent
        self.doubts = doubts
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
/// - `gpt-transcribe`: no segments and no logprobs, but the detected `languages` (empty: could not detect) →
///   ``ConfidenceMethod/signals``, judged with what Chorus knows of the recording (``RecordingFacts``): each
///   ``TranscriptDoubt`` found caps the confidence (poor: a repetition loop, no language detected, more text than the
///   audio could hold, most syllables without words; fair: an unexpected language, some syllables without words, noise,
///   fast speech, speech cut off by the end of the recording); with no doubt it is ``signalsCeiling``, good. The audio
///   checks need the recording's samples (WAV); for m4a/mp3 only the text, the languages and the duration count.
///   This is a plausibility judgement, not a probability: see `docs/voice-messages.md` for how it was measured.
/// - a model reporting neither (`gpt-4o-transcribe-diarize`) with nothing known of the recording →
///   ``ConfidenceMethod/none``, confidence and label `nil`.
///
/// Whatever the evidence, an empty transcript (every segment dropped, or no text at all) is reported as silence:
/// empty text, confidence 0, label poor. So is any text over a recording whose samples are silent.
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

    /// The confidence of a transcript judged from signals with no doubt: good, but never certainty.
    public static let signalsCeiling = 0.9
    /// The confidence cap of each doubt: below ``fairThreshold`` for the poor ones, below ``goodThreshold`` for the fair.
    public static func cap(_ doubt: TranscriptDoubt) -> Double {
        switch doubt {
        case .repetition: 0.3
        case .mostWordsMissing, .tooManyWords: 0.4
        case .languageUndetected: 0.45
        case .unexpectedLanguage, .missingWords, .noisy, .fastSpeech, .cutOff: 0.7
        }
    }
    /// Below this many transcript syllables per syllable heard in the audio, words were lost (fair)…
    public static let missingWordsCoverage = 0.75
    /// … and below this one, most of them (poor).
    public static let mostWordsMissingCoverage = 0.5
    /// Above this many transcript syllables per syllable heard (plus two), the text holds more than was said.
    public static let tooManyWordsCoverage = 2.0
    /// Without the samples: more words a second than anyone speaks (plus two words for short clips).
    public static let maximumWordsPerSecond = 6.0
    /// Without the samples: fewer words a second than this over at least ``sparseTextMinimumSeconds`` means lost words.
    public static let minimumWordsPerSecond = 0.4
    public static let sparseTextMinimumSeconds = 5.0
    /// Speech standing less than this above the background is noisy (fair).
    public static let noisyBelowDecibels = 15.0
    /// Syllables per voiced second above which speech is too fast to be heard reliably (fair). Conversational speech
    /// articulates about 4–7 syllables a second, fast speakers 8.
    public static let fastSyllablesPerSecond = 10.0

    /// Assesses a transcript from the evidence its model returned (segments win when both are present) and, when the
    /// model reports no certainty, from what is known of the recording.
    public static func assess(text: String, evidence: TranscriptEvidence, recording: RecordingFacts = .unknown) -> TranscriptAssessment {
        if !evidence.segments.isEmpty { return assessSegments(text: text, segments: evidence.segments) }
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if evidence.tokenLogprobs.isEmpty, evidence.detectedLanguages != nil || recording.activity != nil {
            return assessSignals(text: text, languages: evidence.detectedLanguages, recording: recording)
        }
        guard !text.isEmpty else { return silent(method: evidence.tokenLogprobs.isEmpty ? .none : .tokenLogprobs) }
        guard !evidence.tokenLogprobs.isEmpty else {
            return TranscriptAssessment(text: text, confidence: nil, label: nil, method: .none, isSilent: false)
        }
        return rated(text: text, confidence: tokenConfidence(evidence.tokenLogprobs), method: .tokenLogprobs)
    }

    /// The doubts about `text` (already trimmed, not empty) given the detected languages and the recording.
    public static func doubts(text: String, languages: [String]?, recording: RecordingFacts) -> [TranscriptDoubt] {
        var doubts: [TranscriptDoubt] = []
        let words = text.split(whereSeparator: \.isWhitespace)
        if isRepetitionLoop(words) { doubts.append(.repetition) }
        if let languages {
            if languages.isEmpty {
                doubts.append(.languageUndetected)
            } else if !recording.expectedLanguages.isEmpty,
                Set(languages.map { $0.lowercased() }).isDisjoint(with: recording.expectedLanguages.map { $0.lowercased() })
            {
                doubts.append(.unexpectedLanguage)
            }
        }
        if let activity = recording.activity {
            let heard = Double(activity.syllables)
            let written = Double(spokenSyllables(in: text))
            if written > tooManyWordsCoverage * heard + 2 {
                doubts.append(.tooManyWords)
            } else if heard > 0, written < mostWordsMissingCoverage * heard {
                doubts.append(.mostWordsMissing)
            } else if heard > 0, written < missingWordsCoverage * heard {
                doubts.append(.missingWords)
            }
            if activity.signalToNoiseDecibels < noisyBelowDecibels { doubts.append(.noisy) }
            if activity.voicedSeconds > 0.5, heard / activity.voicedSeconds > fastSyllablesPerSecond { doubts.append(.fastSpeech) }
            if activity.endsInSpeech { doubts.append(.cutOff) }
        } else if let seconds = recording.durationSeconds, seconds > 0 {
            let count = Double(words.count)
            if count > maximumWordsPerSecond * seconds + 2 {
                doubts.append(.tooManyWords)
            } else if seconds >= sparseTextMinimumSeconds, count < minimumWordsPerSecond * seconds {
                doubts.append(.missingWords)
            }
        }
        return doubts.sorted { cap($0) < cap($1) }
    }

    /// Whether a transcript loops: one word four times in a row, a phrase of two to four words three times in a row, or
    /// (from twelve words on) fewer than three different words in ten.
    public static func isRepetitionLoop<S: StringProtocol>(_ words: [S]) -> Bool {
        let normalized = words.map { word in
            String(word.lowercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(Character.init))
        }.filter { !$0.isEmpty }
        if normalized.count >= 12, Double(Set(normalized).count) < 0.3 * Double(normalized.count) { return true }
        for length in 1...4 {
            let needed = length == 1 ? 4 : 3
            guard normalized.count >= length * needed else { continue }
            var start = 0
            while start + length * needed <= normalized.count {
                let phrase = normalized[start..<start + length]
                var repeats = 1
                var next = start + length
                while next + length <= normalized.count, normalized[next..<next + length].elementsEqual(phrase) {
                    repeats += 1
                    next += length
                }
                if repeats >= needed { return true }
                start += 1
            }
        }
        return false
    }

    /// About how many syllables saying `text` takes: vowel groups of each word (a final silent `e` dropped) in
    /// alphabets with vowel letters, one per character in CJK, kana and Hangul, one per digit, and one per two letters in
    /// scripts that write few or no vowels (Arabic, Hebrew, Thai, Devanagari…).
    public static func spokenSyllables(in text: String) -> Int {
        let vowels = Set("aeiouyàáâãäåæèéêëìíîïòóôõöøœùúûüýÿаеёиоуыэюяіїєαεηιουωάέήίόύώ")
        var total = 0
        for word in text.lowercased().split(whereSeparator: \.isWhitespace) {
            var groups = 0
            var syllabic = 0
            var otherLetters = 0
            var inVowel = false
            for character in word {
                if let scalar = character.unicodeScalars.first, isSyllabic(scalar) {
                    syllabic += 1
                    inVowel = false
                } else if character.isNumber {
                    syllabic += 1
                    inVowel = false
                } else if vowels.contains(character) {
                    if !inVowel { groups += 1 }
                    inVowel = true
                } else {
                    inVowel = false
                    if let scalar = character.unicodeScalars.first, writesFewVowels(scalar) { otherLetters += 1 }
                }
            }
            let bare = word.filter(\.isLetter)
            if groups > 1, bare.hasSuffix("e"), !bare.hasSuffix("le"), !bare.hasSuffix("ee") { groups -= 1 }
            var count = groups + syllabic + (otherLetters + 1) / 2
            if count == 0, word.contains(where: \.isLetter) { count = 1 }
            total += count
        }
        return total
    }

    /// CJK ideographs, kana, Hangul syllables: one syllable a character.
    private static func isSyllabic(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3040...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7AF, 0xF900...0xFAFF: true
        default: false
        }
    }

    /// Hebrew, Arabic and their neighbours, the Indic scripts, Thai, Lao, Myanmar, Khmer: vowels are marks or unwritten.
    private static func writesFewVowels(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0590...0x08FF, 0x0900...0x0DFF, 0x0E00...0x0EFF, 0x1000...0x109F, 0x1780...0x17FF: true
        default: false
        }
    }

    private static func assessSignals(text: String, languages: [String]?, recording: RecordingFacts) -> TranscriptAssessment {
        // Nothing audible: whatever the model wrote was invented.
        if recording.activity?.isSilent == true || text.isEmpty { return silent(method: .signals) }
        let doubts = doubts(text: text, languages: languages, recording: recording)
        let confidence = doubts.map(cap).min() ?? signalsCeiling
        return TranscriptAssessment(
            text: text, confidence: confidence, label: label(for: confidence), method: .signals, isSilent: false, doubts: doubts)
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
