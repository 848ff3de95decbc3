import ChorusCore
import Testing

@Suite("Verbatim check of spoken text")
struct VerbatimCheckTests {
    @Test func normalisationFoldsCasePunctuationApostrophesAndDigits() {
        #expect(VerbatimCheck.words("Don't panic, Émile!  It's 3 o'clock.") == ["dont", "panic", "emile", "its", "three", "oclock"])
        #expect(VerbatimCheck.words("1,500 stars, 42 moons and 7,000,001 dreams") == [
            "one", "thousand", "five", "hundred", "stars", "forty", "two", "moons", "and", "seven", "million", "one", "dreams",
        ])
        #expect(VerbatimCheck.words("the 3rd bear—brave, kind…") == ["the", "three", "rd", "bear", "brave", "kind"])
        #expect(VerbatimCheck.words("«¡Hola, niña!»") == ["hola", "nina"])
        // A digit run too long for words is read digit by digit.
        #expect(VerbatimCheck.words("1234567890123") == ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "zero", "one", "two", "three"])
    }

    @Test func theSameWordsInAnotherSpellingAreVerbatim() {
        #expect(VerbatimCheck.wordErrorRate(text: "Once upon a time, 3 bears lived in the woods.", transcript: "once upon a time three bears lived in the woods") == 0)
        #expect(VerbatimCheck.wordErrorRate(text: "", transcript: "") == 0)
        #expect(VerbatimCheck.wordErrorRate(text: "", transcript: "hello") == 1)
    }

    @Test func missingAddedAndChangedWordsCount() {
        let text = "the little fox found a lantern in the snow"  // 9 words
        #expect(VerbatimCheck.wordErrorRate(text: text, transcript: "the fox found a lantern in the snow") == 1.0 / 9)
        #expect(VerbatimCheck.wordErrorRate(text: text, transcript: "oh the little fox found a lantern in the snow") == 1.0 / 9)
        #expect(VerbatimCheck.wordErrorRate(text: text, transcript: "the little cat found a lamp in the snow") == 2.0 / 9)
        #expect(VerbatimCheck.wordErrorRate(text: text, transcript: "") == 1)
        // A paraphrase is far above the 10 % threshold.
        #expect(VerbatimCheck.wordErrorRate(text: text, transcript: "a small fox discovered a light") > 0.5)
    }

    @Test func aRunawayTranscriptIsJudgedByItsLengthWithoutAligningIt() {
        let transcript = String(repeating: "word ", count: 100_000)
        let rate = VerbatimCheck.wordErrorRate(text: "just two", transcript: transcript)
        #expect(rate > 1_000)
    }
}
