import Foundation
import Testing

@testable import ChorusCore

/// Speech-like test audio: `syllables` bursts of a 150 Hz buzz under a raised-sine envelope, 180 ms each, separated
/// by `gap` seconds of silence, optionally over white noise and cut short.
private func speechLike(
    syllables: Int, rate: Int = 16_000, gap: Double = 0.08, amplitude: Double = 9_000, noise: Double = 0, tail: Double = 0.3
) -> [Int16] {
    var samples: [Int16] = []
    var seed: UInt64 = 42
    func noiseSample() -> Double {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (Double(seed >> 11) / Double(1 << 53) * 2 - 1) * noise
    }
    func append(_ value: Double) { samples.append(Int16(max(-32_000, min(32_000, value + noiseSample())))) }
    for _ in 0..<Int(0.2 * Double(rate)) { append(0) }
    for _ in 0..<syllables {
        let length = Int(0.18 * Double(rate))
        for n in 0..<length {
            let envelope = sin(Double.pi * Double(n) / Double(length))
            append(amplitude * envelope * sin(2 * .pi * 150 * Double(n) / Double(rate)))
        }
        for _ in 0..<Int(gap * Double(rate)) { append(0) }
    }
    for _ in 0..<Int(tail * Double(rate)) { append(0) }
    return samples
}

@Suite("Transcript confidence from signals (gpt-transcribe)")
struct TranscriptSignalsTests {
    @Test("speech activity: syllables, voiced time, SNR, silence, cut-off")
    func activity() {
        let clean = SpeechActivity.measure(samples: speechLike(syllables: 10), sampleRate: 16_000)
        #expect(clean.syllables == 10)
        #expect(!clean.isSilent && !clean.endsInSpeech)
        #expect(clean.signalToNoiseDecibels > 40)
        #expect((1.3...2.0).contains(clean.voicedSeconds), "\(clean.voicedSeconds)")
        #expect(abs(clean.seconds - Double(speechLike(syllables: 10).count) / 16_000) < 1e-9)

        let noisy = SpeechActivity.measure(samples: speechLike(syllables: 10, noise: 3_000), sampleRate: 16_000)
        #expect(noisy.signalToNoiseDecibels < 15, "\(noisy.signalToNoiseDecibels)")
        #expect(!noisy.isSilent)

        let silence = SpeechActivity.measure(samples: [Int16](repeating: 3, count: 16_000), sampleRate: 16_000)
        #expect(silence.isSilent && silence.syllables == 0 && silence.voicedSeconds == 0)

        var cut = speechLike(syllables: 6, tail: 0)
        cut.removeLast(Int(0.08 * 16_000) + Int(0.09 * 16_000))  // the gap and half of the last syllable
        #expect(SpeechActivity.measure(samples: cut, sampleRate: 16_000).endsInSpeech)

        // Rates outside what a WAV can hold measure as nothing rather than trapping.
        #expect(SpeechActivity.measure(samples: [1, 2, 3], sampleRate: 0).isSilent)
        #expect(SpeechActivity.measure(samples: [], sampleRate: 8_000).isSilent)
        #expect(SpeechActivity.measure(wav: Data("not a wav".utf8)) == nil)
        let wav = WAVSplicer.encode(PCM16Audio(samples: speechLike(syllables: 4), sampleRate: 16_000))
        #expect(SpeechActivity.measure(wav: wav)?.syllables == 4)
    }

    @Test("syllables of a transcript, across scripts")
    func syllables() {
        #expect(TranscriptQuality.spokenSyllables(in: "Pick up Emma from soccer at five, please.") == 10)
        #expect(TranscriptQuality.spokenSyllables(in: "table little free") == 5)
        #expect(TranscriptQuality.spokenSyllables(in: "Привет мама") == 4)
        #expect(TranscriptQuality.spokenSyllables(in: "今日は雨") == 4)
        #expect(TranscriptQuality.spokenSyllables(in: "at 5") == 2)
        #expect(TranscriptQuality.spokenSyllables(in: "שלום") == 2)
        #expect(TranscriptQuality.spokenSyllables(in: "—  !") == 0)
    }

    @Test("repetition loops")
    func loops() {
        func loop(_ text: String) -> Bool { TranscriptQuality.isRepetitionLoop(text.split(separator: " ")) }
        #expect(loop("you you you you"))
        #expect(loop("thank you. Thank you! thank you, thank you"))
        #expect(loop("see you at five see you at five see you at five"))
        #expect(!loop("no no no, not today"))
        #expect(!loop("Pick up Emma from soccer at five, please."))
        #expect(loop("la la la la la la la la la di da la"))
        #expect(!loop(""))
    }

    @Test("no doubt: good at the signals ceiling; each doubt caps the confidence")
    func doubts() throws {
        let text = "Pick up Emma from soccer at five, please."
        let activity = SpeechActivity(
            seconds: 3, voicedSeconds: 1.8, signalToNoiseDecibels: 40, syllables: 10, endsInSpeech: false, isSilent: false)
        let clean = TranscriptQuality.assess(
            text: text, evidence: TranscriptEvidence(detectedLanguages: ["en"]),
            recording: RecordingFacts(durationSeconds: 3, expectedLanguages: ["en"], activity: activity))
        #expect(
            clean
                == TranscriptAssessment(
                    text: text, confidence: TranscriptQuality.signalsCeiling, label: .good, method: .signals, isSilent: false))

        func assessed(
            _ text: String = text, languages: [String]? = ["en"], expected: [String] = [], duration: Double? = 3,
            _ change: (inout SpeechActivity) -> Void = { _ in }, measured: Bool = true
        ) -> TranscriptAssessment {
            var changed = activity
            change(&changed)
            return TranscriptQuality.assess(
                text: text, evidence: TranscriptEvidence(detectedLanguages: languages),
                recording: RecordingFacts(durationSeconds: duration, expectedLanguages: expected, activity: measured ? changed : nil))
        }
        let cases: [(TranscriptAssessment, [TranscriptDoubt], ConfidenceLabel)] = [
            (assessed(languages: []), [.languageUndetected], .poor),
            (assessed(expected: ["fr"]), [.unexpectedLanguage], .fair),
            (assessed(expected: ["fr", "EN"]), [], .good),
            (assessed { $0.signalToNoiseDecibels = 9 }, [.noisy], .fair),
            (assessed { $0.endsInSpeech = true }, [.cutOff], .fair),
            (assessed { $0.syllables = 14 }, [.missingWords], .fair),
            (
                assessed {
                    $0.syllables = 25
                    $0.voicedSeconds = 3
                }, [.mostWordsMissing], .poor
            ),
            (assessed { $0.syllables = 3 }, [.tooManyWords], .poor),
            (assessed { $0.voicedSeconds = 0.9 }, [.fastSpeech], .fair),
            (assessed("bye bye bye bye bye bye bye bye bye bye"), [.repetition], .poor),
            // The weakest doubt decides; all are listed, weakest first.
            (assessed(languages: [], { $0.signalToNoiseDecibels = 9 }), [.languageUndetected, .noisy], .poor),
            // Without the samples (m4a): words a second against the duration only.
            (assessed(measured: false), [], .good),
            (assessed(duration: 0.5, measured: false), [.tooManyWords], .poor),
            (assessed("Yes.", duration: 20, measured: false), [.missingWords], .fair),
        ]
        for (assessment, doubts, label) in cases {
            #expect(assessment.doubts == doubts, "\(assessment)")
            #expect(assessment.label == label, "\(assessment)")
            #expect(assessment.method == .signals)
            let confidence = try #require(assessment.confidence)
            #expect(confidence == (doubts.map(TranscriptQuality.cap).min() ?? TranscriptQuality.signalsCeiling))
        }
    }

    @Test("silence: no text, or text over silent samples, is silent and poor")
    func silence() {
        let silent = SpeechActivity(seconds: 2, voicedSeconds: 0, signalToNoiseDecibels: 0, syllables: 0, endsInSpeech: false, isSilent: true)
        for text in ["", "Thank you."] {
            let assessment = TranscriptQuality.assess(
                text: text, evidence: TranscriptEvidence(detectedLanguages: []), recording: RecordingFacts(activity: silent))
            #expect(assessment == TranscriptAssessment(text: "", confidence: 0, label: .poor, method: .signals, isSilent: true))
        }
        // Empty text on audible audio (the model heard nothing it could write): no transcript, poor.
        let empty = TranscriptQuality.assess(text: " ", evidence: TranscriptEvidence(detectedLanguages: []))
        #expect(empty.isSilent && empty.label == .poor && empty.method == .signals)
    }

    @Test("models reporting neither certainty nor languages, with nothing known of the audio: no label")
    func nothingToJudge() {
        let assessment = TranscriptQuality.assess(text: "Hello", evidence: .none, recording: RecordingFacts(durationSeconds: 2))
        #expect(assessment == TranscriptAssessment(text: "Hello", confidence: nil, label: nil, method: .none, isSilent: false))
    }
}
