import Testing

@testable import ChorusCore

private func key(
    text: String = "Pick up Emma at 5.", provider: String = "elevenlabs", voiceID: String = "21m00Tcm4TlvDq8ikWAM",
    model: String = "eleven_multilingual_v2", format: String = "mp3",
    settings: [String: SpeechSettingValue] = ["stability": 0.5, "similarity_boost": 0.75]
) -> SpeechCacheKey {
    SpeechCacheKey(text: text, provider: provider, voiceID: voiceID, model: model, format: format, settings: settings)
}

@Suite("Speech cache key")
struct SpeechCacheKeyTests {
    @Test("known answers: the documented encoding, computed independently")
    func knownAnswers() {
        let eleven = key(
            text: " Pick up Emma at 5. ", settings: ["stability": 0.5, "similarity_boost": 0.75, "speaker_boost": true])
        #expect(eleven.hexDigest == "4f6df807f87719d0b3255b8a7d1d697530f20cf6510a25264cd7658e4d728637")
        let openAI = SpeechCacheKey(
            text: "Café", provider: "openai", voiceID: "coral", model: "gpt-4o-mini-tts", format: "wav",
            settings: ["instructions": "Warm and calm."])
        #expect(openAI.description == "f3748c45a4e5c3781bcebb7c93383d62130a6a157c0d6e88b469ab59e45d0c71")
    }

    @Test("equal inputs, equal keys: NFC and NFD, surrounding whitespace, settings order")
    func equalInputs() {
        #expect(key() == key())
        #expect(key(text: "Caf\u{E9} at 5") == key(text: "Cafe\u{301} at 5"))
        #expect(key(text: "\n  Pick up Emma at 5.\t") == key())
        #expect(key(settings: ["similarity_boost": 0.75, "stability": 0.5]) == key())
        #expect(key().hexDigest.count == 64)
        #expect(key().hexDigest.allSatisfy { "0123456789abcdef".contains($0) })
    }

    @Test("any field change changes the key")
    func everyField() {
        let variants = [
            key(text: "Pick up Emma at 6."), key(text: "pick up Emma at 5."), key(text: "Pick up  Emma at 5."),
            key(provider: "openai"), key(voiceID: "21m00Tcm4TlvDq8ikWAm"), key(model: "eleven_flash_v2_5"), key(format: "wav"),
            key(settings: ["stability": 0.51, "similarity_boost": 0.75]), key(settings: ["stability": 0.5]), key(settings: [:]),
            key(settings: ["stability": 0.5, "similarity_boost": 0.75, "style": 0.0]),
        ]
        #expect(Set(variants + [key()]).count == variants.count + 1)
    }

    @Test("no concatenation ambiguity between fields or settings")
    func unambiguous() {
        #expect(key(text: "ab", provider: "c") != key(text: "a", provider: "bc"))
        #expect(key(voiceID: "v", model: "m1") != key(voiceID: "vm", model: "1"))
        #expect(key(model: "", format: "mp3") != key(model: "mp3", format: ""))
        #expect(key(settings: ["a": "b=c"]) != key(settings: ["a=b": "c"]))
        #expect(key(settings: ["a": "bc"]) != key(settings: ["ab": "c"]))
        #expect(key(settings: ["x": "", "y": ""]) != key(settings: ["x": "y"]))
        #expect(key(settings: ["speed": "1.0"]) != key(settings: ["speed": 1.0]))
        #expect(key(settings: ["boost": "true"]) != key(settings: ["boost": true]))
        // A text that contains what looks like the encoding of another field.
        #expect(key(text: "hi", provider: "p") != key(text: "hiP\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{1}p", provider: ""))
    }
}
