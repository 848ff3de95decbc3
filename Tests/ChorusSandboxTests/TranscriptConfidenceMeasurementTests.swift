import ChorusCore
import ChorusProviders
import ChorusSandbox
import Foundation
import Testing

/// The labelled recordings the `gpt-transcribe` confidence label is measured on (docs/voice-messages.md, "How the
/// label was measured"): eight family messages spoken by ``SandboxSpeech``'s synthetic voice (no espeak-ng, so the
/// set is the same on every machine), each in nine conditions.
enum LabelledRecordings {
    /// A recording condition, with the label a reviewer should see.
    enum Condition: String, CaseIterable, Sendable {
        case clean, slow, fast, veryFast = "very fast", lightNoise = "light noise", noisy, veryNoisy = "very noisy", truncated
        case stoppedEarly = "stopped early", noiseOnly = "noise only", silence

        /// What a reviewer needs: `good` (no review), `flagged` (fair or poor: "⚠ Low confidence"), `poor` (an empty
        /// transcript included), or `silent` (no transcript, poor).
        var expected: String {
            switch self {
            case .clean, .slow, .fast, .lightNoise, .stoppedEarly: "good"
            case .veryFast, .noisy, .truncated: "flagged"
            case .veryNoisy: "poor"
            case .noiseOnly, .silence: "silent"
            }
        }

        var description: String {
            switch self {
            case .clean: "as spoken"
            case .slow: "0.7× speed"
            case .fast: "1.5× speed"
            case .veryFast: "2.5× speed"
            case .lightNoise: "white noise, 20 dB below the speech"
            case .noisy: "white noise, 6 dB below the speech"
            case .veryNoisy: "white noise, 6 dB above the speech"
            case .truncated: "cut 80 ms into the word at 60 % of the message"
            case .stoppedEarly: "stopped 0.4 s after the word before 60 % of the message"
            case .noiseOnly: "white noise only, no speech"
            case .silence: "a quiet room (−80 dBFS), no speech"
            }
        }
    }

    static let messages = [
        "Pick up Emma from soccer at five, please.",
        "Dinner is at seven tonight, bring the salad.",
        "Grandma lands on Tuesday morning at ten.",
        "Remember the dentist appointment after school tomorrow.",
        "Can someone feed the dog before the game starts?",
        "I left the blue folder on the kitchen table.",
        "Running late, the bus broke down near the library.",
        "Happy birthday! We are so proud of you, sweetheart.",
    ]

    static let sampleRate = 16_000

    /// A recording: the WAV sent, and the words audible in it, whole or in part (empty for no speech).
    struct Recording: Sendable {
        var condition: Condition
        var said: String
        var wav: Data
    }

    static func recordings() -> [Recording] {
        var recordings: [Recording] = []
        for (index, message) in messages.enumerated() {
            let voice = SandboxSpeech.synthetic(message, voice: index)
            let speech = resample(MuLaw.decode(voice), by: Double(sampleRate) / Double(MuLaw.sampleRate))
            let padded = quiet(0.3) + speech + quiet(0.4)
            let speechLevel = rms(speech.filter { $0 != 0 })
            for condition in Condition.allCases {
                var samples = padded
                var said = message
                switch condition {
                case .clean: break
                case .slow: samples = quiet(0.3) + resample(speech, by: 1 / 0.7) + quiet(0.4)
                case .fast: samples = quiet(0.3) + resample(speech, by: 1 / 1.5) + quiet(0.4)
                case .veryFast: samples = quiet(0.3) + resample(speech, by: 1 / 2.5) + quiet(0.4)
                case .lightNoise: samples = addNoise(padded, level: speechLevel / 10, seed: UInt64(index))
                case .noisy: samples = addNoise(padded, level: speechLevel / 2, seed: UInt64(index))
                case .veryNoisy: samples = addNoise(padded, level: speechLevel * 2, seed: UInt64(index))
                case .truncated, .stoppedEarly:
                    // Where each word starts (the synthetic voice speaks a prefix of words in exactly their time).
                    let words = message.split(separator: " ")
                    let starts = (0...words.count).map { count in
                        SandboxSpeech.synthetic(words.prefix(count).joined(separator: " "), voice: index).count * (sampleRate / MuLaw.sampleRate)
                    }
                    let word = (0..<words.count).last { starts[$0] <= Int(Double(speech.count) * 0.6) } ?? 0
                    if condition == .truncated {
                        // Cut inside the word: it is heard in part.
                        said = words.prefix(word + 1).joined(separator: " ")
                        samples = quiet(0.3) + Array(speech.prefix(starts[word] + sampleRate * 8 / 100))
                    } else {
                        // The speaker stopped after the previous word, and the recording a moment later.
                        said = words.prefix(word).joined(separator: " ")
                        samples = quiet(0.3) + Array(speech.prefix(starts[word])) + quiet(0.4)
                    }
                case .noiseOnly: samples = addNoise(quiet(3), level: speechLevel / 2, seed: UInt64(index))
                case .silence: samples = addNoise(quiet(3), level: 3, seed: UInt64(index))
                }
                let hasSpeech = condition != .noiseOnly && condition != .silence
                // Recordings without speech carry no text, like a phone's; the others carry what was said.
                var wav = SandboxAudioFiles.wav(pcm16: samples, sampleRate: sampleRate, text: said)
                if !hasSpeech, let range = wav.range(of: Data("LIST".utf8)) { wav.replaceSubrange(range, with: Data("JUNK".utf8)) }
                recordings.append(Recording(condition: condition, said: hasSpeech ? said : "", wav: wav))
            }
        }
        return recordings
    }

    static func quiet(_ seconds: Double) -> [Int16] { [Int16](repeating: 0, count: Int(seconds * Double(sampleRate))) }

    /// Linear-interpolation resampling by `factor` (more samples: slower and lower when played at the same rate).
    static func resample(_ samples: [Int16], by factor: Double) -> [Int16] {
        let count = Int(Double(samples.count) * factor)
        return (0..<count).map { index in
            let position = Double(index) / factor
            let base = min(samples.count - 1, Int(position))
            let next = min(base + 1, samples.count - 1)
            let fraction = position - Double(base)
            return Int16(Double(samples[base]) * (1 - fraction) + Double(samples[next]) * fraction)
        }
    }

    /// White noise of RMS `level` added (deterministic).
    static func addNoise(_ samples: [Int16], level: Double, seed: UInt64) -> [Int16] {
        var state = seed &+ 0x9E37_79B9_7F4A_7C15
        return samples.map { sample in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let uniform = Double(state >> 11) / Double(1 << 53) * 2 - 1
            return Int16(max(-32_767, min(32_767, Double(sample) + uniform * level * 3.0.squareRoot())))
        }
    }

    static func rms(_ samples: [Int16]) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }

    /// Word error rate of `heard` against `intended` (case and punctuation ignored); 1 for text where nothing was said.
    static func wordErrorRate(intended: String, heard: String) -> Double {
        func words(_ text: String) -> [String] {
            text.lowercased().split(whereSeparator: \.isWhitespace).map { $0.filter { $0.isLetter || $0.isNumber } }.filter { !$0.isEmpty }
        }
        let reference = words(intended)
        let hypothesis = words(heard)
        guard !reference.isEmpty else { return hypothesis.isEmpty ? 0 : 1 }
        var previous = Array(0...hypothesis.count)
        for (i, word) in reference.enumerated() {
            var current = [i + 1] + [Int](repeating: 0, count: hypothesis.count)
            for (j, other) in hypothesis.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (word == other ? 0 : 1))
            }
            previous = current
        }
        return Double(previous[hypothesis.count]) / Double(reference.count)
    }
}

@Suite("Transcript confidence measured on labelled recordings (gpt-transcribe through the emulator)", .serialized)
struct TranscriptConfidenceMeasurementTests {
    struct Outcome {
        var condition: LabelledRecordings.Condition
        var withSamples: TranscriptAssessment
        var withoutSamples: TranscriptAssessment
        var wordErrorRate: Double
    }

    static func cell(_ assessment: TranscriptAssessment) -> String {
        assessment.isSilent ? "silent" : assessment.label?.rawValue ?? "none"
    }

    @Test("the label per class: clean, slow, fast, lightly noisy, stopped early good; very fast, noisy, cut off flagged; very noisy poor; no speech silent")
    func labelPerClass() async throws {
        let recordings = LabelledRecordings.recordings()
        var outcomes: [Outcome] = []
        try await withOpenAI { harness in
            let transcriber = harness.transcriber("gpt-transcribe")
            for recording in recordings {
                let transcription = try await transcriber.transcribe(
                    TranscriptionRequest(audio: recording.wav, filename: "message.wav", contentType: "audio/wav", language: "en"))
                #expect(transcription.evidence.segments.isEmpty && transcription.evidence.tokenLogprobs.isEmpty)
                #expect(transcription.evidence.detectedLanguages != nil)
                let seconds = SandboxAudioFiles.durationSeconds(of: recording.wav)
                let activity = try #require(SpeechActivity.measure(wav: recording.wav))
                let withSamples = TranscriptQuality.assess(
                    text: transcription.text, evidence: transcription.evidence,
                    recording: RecordingFacts(durationSeconds: seconds, expectedLanguages: ["en"], activity: activity))
                // The same transcript as if the recording were m4a (no samples Chorus can read).
                let withoutSamples = TranscriptQuality.assess(
                    text: transcription.text, evidence: transcription.evidence,
                    recording: RecordingFacts(durationSeconds: seconds, expectedLanguages: ["en"]))
                outcomes.append(
                    Outcome(
                        condition: recording.condition, withSamples: withSamples, withoutSamples: withoutSamples,
                        wordErrorRate: LabelledRecordings.wordErrorRate(intended: recording.said, heard: transcription.text)))
            }
        }

        // The table in docs/voice-messages.md.
        var table = "| Class | Recordings | WER against what was said (mean) | With samples (WAV): good / fair / poor / silent | Without samples (m4a): good / fair / poor / silent |\n"
        table += "|---|---|---|---|---|\n"
        for condition in LabelledRecordings.Condition.allCases {
            let rows = outcomes.filter { $0.condition == condition }
            func counts(_ pick: (Outcome) -> TranscriptAssessment) -> String {
                ["good", "fair", "poor", "silent"].map { label in String(rows.filter { Self.cell(pick($0)) == label }.count) }
                    .joined(separator: " / ")
            }
            let wer = rows.map(\.wordErrorRate).reduce(0, +) / Double(max(1, rows.count))
            table += "| \(condition.rawValue) (\(condition.description)) | \(rows.count) | \(String(format: "%.2f", wer)) | "
            table += "\(counts(\.withSamples)) | \(counts(\.withoutSamples)) |\n"
        }
        print(table)
        for outcome in outcomes {
            print(
                "\(outcome.condition.rawValue): \(Self.cell(outcome.withSamples)) \(outcome.withSamples.doubts.map(\.rawValue)) "
                    + "WER \(String(format: "%.2f", outcome.wordErrorRate)) text: \(outcome.withSamples.text)")
        }

        #expect(outcomes.count == LabelledRecordings.messages.count * LabelledRecordings.Condition.allCases.count)
        for outcome in outcomes {
            let label = Self.cell(outcome.withSamples)
            switch outcome.condition.expected {
            case "good": #expect(label == "good", "\(outcome.condition): \(outcome.withSamples)")
            case "flagged": #expect(label == "fair" || label == "poor", "\(outcome.condition): \(outcome.withSamples)")
            case "poor": #expect(outcome.withSamples.label == .poor, "\(outcome.condition): \(outcome.withSamples)")
            default: #expect(label == "silent", "\(outcome.condition): \(outcome.withSamples)")
            }
            // Every transcript with a quarter of its words wrong or more is flagged.
            if outcome.wordErrorRate >= 0.25 { #expect(label != "good", "\(outcome.condition): \(outcome.withSamples)") }
        }
    }
}
