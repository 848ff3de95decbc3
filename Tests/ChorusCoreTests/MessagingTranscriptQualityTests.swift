import Foundation
import Testing

@testable import ChorusCore

private func segment(
    _ start: Double, _ end: Double, _ text: String, logprob: Double = -0.1, compression: Double = 1.3, noSpeech: Double = 0.01
) -> TranscriptEvidence.Segment {
    TranscriptEvidence.Segment(
        start: start, end: end, text: text, averageLogprob: logprob, compressionRatio: compression, noSpeechProbability: noSpeech)
}

@Suite("Transcript quality")
struct TranscriptQualityTests {
    @Test("segments: exp(avg_logprob) weighted by duration")
    func durationWeighted() throws {
        let segments = [segment(0, 6, " Soccer moved to four.", logprob: log(0.9)), segment(6, 8, " See you there.", logprob: log(0.5))]
        let assessment = TranscriptQuality.assess(
            text: " Soccer moved to four. See you there. ", evidence: TranscriptEvidence(segments: segments))
        let confidence = try #require(assessment.confidence)
        #expect(abs(confidence - (6 * 0.9 + 2 * 0.5) / 8) < 1e-12)
        #expect(assessment.label == .good)
        #expect(assessment.method == .segments)
        #expect(assessment.text == "Soccer moved to four. See you there.")
        #expect(!assessment.isSilent)
    }

    @Test("labels: good ≥ 0.80, fair ≥ 0.55, else poor")
    func labels() {
        #expect(TranscriptQuality.label(for: 1) == .good)
        #expect(TranscriptQuality.label(for: 0.80) == .good)
        #expect(TranscriptQuality.label(for: 0.7999) == .fair)
        #expect(TranscriptQuality.label(for: 0.55) == .fair)
        #expect(TranscriptQuality.label(for: 0.5499) == .poor)
        #expect(TranscriptQuality.label(for: 0) == .poor)
    }

    @Test("Whisper's 'Thank you.' over silence is dropped: empty, confidence 0, poor, silent")
    func silenceHallucination() {
        let evidence = TranscriptEvidence(segments: [segment(0, 4, " Thank you.", logprob: -1.3, noSpeech: 0.9)])
        let assessment = TranscriptQuality.assess(text: "Thank you.", evidence: evidence)
        #expect(assessment == TranscriptAssessment(text: "", confidence: 0, label: .poor, method: .segments, isSilent: true))
    }

    @Test("a hallucinated trailing segment is removed from the text and the confidence")
    func trailingHallucination() {
        let evidence = TranscriptEvidence(segments: [
            segment(0, 3, " Pick up Emma at five.", logprob: log(0.92)),
            segment(3, 10, " Thanks for watching!", logprob: -1.4, noSpeech: 0.8),
        ])
        let assessment = TranscriptQuality.assess(text: "Pick up Emma at five. Thanks for watching!", evidence: evidence)
        #expect(assessment.text == "Pick up Emma at five.")
        #expect(assessment.confidence.map { abs($0 - 0.92) < 1e-12 } == true)
        #expect(assessment.label == .good)
    }

    @Test("a high no-speech probability alone (confidently decoded speech) is kept")
    func noSpeechButConfident() {
        let evidence = TranscriptEvidence(segments: [segment(0, 2, " Yes.", logprob: -0.2, noSpeech: 0.7)])
        let assessment = TranscriptQuality.assess(text: "Yes.", evidence: evidence)
        #expect(assessment.text == "Yes.")
        #expect(!assessment.isSilent)
    }

    @Test("suspect segments (repetitive or improbable) count as poor")
    func suspectSegments() throws {
        // A repetition loop decoded with high probability is capped at the suspect ceiling.
        let loop = TranscriptEvidence(segments: [segment(0, 10, " you you you you you you", logprob: -0.05, compression: 3.1)])
        let looped = TranscriptQuality.assess(text: "you you you you you you", evidence: loop)
        #expect(looped.confidence == TranscriptQuality.suspectSegmentCeiling)
        #expect(looped.label == .poor)
        // One improbable segment among good ones pulls the whole down by its duration.
        let mixed = TranscriptEvidence(segments: [
            segment(0, 5, " Dinner at six.", logprob: log(0.95)), segment(5, 10, " mumble", logprob: -1.2, noSpeech: 0.3),
        ])
        let confidence = try #require(TranscriptQuality.assess(text: "Dinner at six. mumble", evidence: mixed).confidence)
        #expect(abs(confidence - (0.95 + exp(-1.2)) / 2) < 1e-12)
        #expect(TranscriptQuality.label(for: confidence) == .fair)
    }

    @Test("zero-length segments are weighted equally")
    func zeroDurations() {
        let evidence = TranscriptEvidence(segments: [segment(0, 0, " A", logprob: log(0.9)), segment(0, 0, " B", logprob: log(0.7))])
        let confidence = TranscriptQuality.assess(text: "A B", evidence: evidence).confidence
        #expect(confidence.map { abs($0 - 0.8) < 1e-12 } == true)
    }

    @Test("token logprobs: the mean probability blended with the weakest tenth")
    func tokens() throws {
        // 20 near-certain tokens: good.
        let certain = TranscriptQuality.assess(
            text: "Running late, be there at 6.", evidence: TranscriptEvidence(tokenLogprobs: Array(repeating: -0.01, count: 20)))
        #expect(certain.method == .tokenLogprobs)
        #expect(certain.label == .good)
        #expect(certain.confidence.map { abs($0 - exp(-0.01)) < 1e-12 } == true)

        // A short message with one badly heard word drops to fair: 0.75·mean + 0.25·min.
        let logprobs = [-0.01, -0.01, -0.01, log(0.2)]
        let short = TranscriptQuality.assess(text: "Pick up Zoe", evidence: TranscriptEvidence(tokenLogprobs: logprobs))
        let mean = (3 * exp(-0.01) + 0.2) / 4
        let expected = 0.75 * mean + 0.25 * 0.2
        #expect(try abs(#require(short.confidence) - expected) < 1e-12)
        #expect(short.label == .fair)

        // In a long message the same weak word is one of many in the weakest tenth: still good.
        let long = Array(repeating: -0.01, count: 99) + [log(0.2)]
        #expect(TranscriptQuality.assess(text: "long", evidence: TranscriptEvidence(tokenLogprobs: long)).label == .good)

        // Uniformly doubtful tokens: poor.
        let doubtful = TranscriptQuality.assess(text: "garbled", evidence: TranscriptEvidence(tokenLogprobs: Array(repeating: log(0.4), count: 12)))
        #expect(doubtful.label == .poor)
    }

    @Test("no evidence (gpt-transcribe): no confidence, no label")
    func noEvidence() {
        let assessment = TranscriptQuality.assess(text: "  Hello there \n", evidence: .none)
        #expect(assessment == TranscriptAssessment(text: "Hello there", confidence: nil, label: nil, method: .none, isSilent: false))
    }

    @Test("an empty transcript is silence whatever the evidence")
    func emptyText() {
        for evidence in [TranscriptEvidence.none, TranscriptEvidence(tokenLogprobs: [-0.1])] {
            let assessment = TranscriptQuality.assess(text: "  ", evidence: evidence)
            #expect(assessment.isSilent)
            #expect(assessment.text == "")
            #expect(assessment.confidence == 0)
            #expect(assessment.label == .poor)
        }
        let blankSegment = TranscriptQuality.assess(text: "", evidence: TranscriptEvidence(segments: [segment(0, 1, " ")]))
        #expect(blankSegment.isSilent)
    }

    @Test("segments win over token logprobs when both are present")
    func segmentsFirst() {
        let evidence = TranscriptEvidence(segments: [segment(0, 1, " Hi.", logprob: log(0.6))], tokenLogprobs: [0, 0])
        let assessment = TranscriptQuality.assess(text: "Hi.", evidence: evidence)
        #expect(assessment.method == .segments)
        #expect(assessment.label == .fair)
    }
}
