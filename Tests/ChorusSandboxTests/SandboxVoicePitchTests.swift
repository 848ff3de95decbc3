import ChorusCore
import ChorusProviders
import Foundation
import Testing

@testable import ChorusSandbox

/// Voices that differ: every OpenAI voice the product offers speaks at a pitch of its own where five pitches allow, on
/// the speech endpoint, the Realtime emulator and ElevenLabs' WAV output alike.
@Suite("Sandbox speech: voices differ")
struct SandboxVoicePitchTests {
    /// The fundamental frequency of a voiced stretch of `samples` (autocorrelation peak between 90 and 300 Hz).
    static func pitch(_ samples: [Int16], rate: Int) -> Double {
        let window = Array(samples.drop { abs(Int($0)) < 500 }.prefix(rate / 5)).map(Double.init)
        var scores: [(lag: Int, score: Double)] = []
        for lag in (rate / 300)...(rate / 90) where lag < window.count {
            var score = 0.0
            for index in 0..<(window.count - lag) { score += window[index] * window[index + lag] }
            scores.append((lag, score / Double(window.count - lag)))
        }
        // The shortest lag near the best score: a multiple of the period scores as well as the period itself.
        let top = scores.map(\.score).max() ?? 0
        let lag = scores.first { $0.score >= 0.85 * top }?.lag ?? 1
        return Double(rate) / Double(lag)
    }

    @Test("the storytelling voices use all five pitches and the Realtime voices each pitch twice")
    func spread() {
        let story = StoryVoiceCatalog.all.map { SandboxAudioFiles.pitchIndex($0.id) }
        #expect(Set(story).count == 5, "\(story)")
        let realtime = RealtimeSessionConfiguration.voices.map(SandboxRealtime.voiceNumber)
        #expect((0..<5).allSatisfy { pitch in realtime.filter { $0 == pitch }.count == 2 }, "\(realtime)")
        #expect(SandboxAudioFiles.pitchIndex("onyx") < SandboxAudioFiles.pitchIndex("nova"), "onyx is the deep voice")
        #expect(SandboxOpenAI.voices.allSatisfy { SandboxAudioFiles.namedVoicePitches[$0] != nil }, "every OpenAI voice is placed")
        let premade = SandboxElevenLabs.defaultPremadeVoices.keys.map(SandboxAudioFiles.pitchIndex)
        #expect(Set(premade).count == 5, "ElevenLabs' premade voices: \(premade)")
    }

    @Test("different voices sound different on the speech endpoint and in ElevenLabs' WAV; the same voice the same")
    func audioDiffers() async throws {
        try await withOpenAI { harness in
            func speak(_ voice: String) async throws -> (samples: [Int16], sampleRate: Int) {
                let speech = try await harness.synthesizer.synthesize(
                    SpeechRequest(text: "Good night, sleep tight.", voiceID: voice, model: "gpt-4o-mini-tts", format: .wav))
                return try #require(SandboxAudioFiles.pcm16(wav: speech.audio))
            }
            let onyx = try await speak("onyx")
            let nova = try await speak("nova")
            let coral = try await speak("coral")
            let deep = Self.pitch(onyx.samples, rate: onyx.sampleRate)
            let middle = Self.pitch(coral.samples, rate: coral.sampleRate)
            let bright = Self.pitch(nova.samples, rate: nova.sampleRate)
            #expect(deep + 15 < middle, "onyx \(deep) Hz, coral \(middle) Hz")
            #expect(middle + 15 < bright, "coral \(middle) Hz, nova \(bright) Hz")
            #expect(try await speak("onyx").samples == onyx.samples, "deterministic")
        }
        // Other ElevenLabs voice ids (cloned voices) are hashed onto the pitches: two ids on different pitches differ.
        let first = "AZnzlk1XvdvUeBnXmlld"
        let other = try #require(["ErXwobaYiN019PkySvjV", "MF3mGyEYCl7XYWbV9V6O", "TxGEqnHWrfWFTfGW9XjX", "VR6AewLTigWG4xSOukaG"].first {
            SandboxAudioFiles.pitchIndex($0) != SandboxAudioFiles.pitchIndex(first)
        })
        let a = try #require(SandboxAudioFiles.pcm16(wav: SandboxAudioFiles.speechWAV(text: "Hello there.", voice: first)))
        let b = try #require(SandboxAudioFiles.pcm16(wav: SandboxAudioFiles.speechWAV(text: "Hello there.", voice: other)))
        #expect(abs(Self.pitch(a.samples, rate: a.sampleRate) - Self.pitch(b.samples, rate: b.sampleRate)) > 15)
    }
}
