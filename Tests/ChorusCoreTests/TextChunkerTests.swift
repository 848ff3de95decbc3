import Testing

@testable import ChorusCore

/// A deterministic generator (SplitMix64), so the generated texts are the same on every run.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private let words = [
    "soccer", "practice", "moved", "to", "Thursday", "pick", "up", "Emma", "at", "five", "bring", "snacks", "and", "water",
    "the", "coach", "said", "game", "starts", "early", "please", "confirm", "who", "drives", "café", "naïve", "👨‍👩‍👧",
]

/// Sentences of 3–30 words, with clause punctuation inside and a terminator at the end, separated by mixed whitespace.
private func generatedText(sentences: Int, seed: UInt64) -> String {
    var random = SplitMix64(state: seed)
    var text = ""
    for _ in 0..<sentences {
        let count = Int.random(in: 3...30, using: &random)
        var sentence: [String] = []
        for index in 0..<count {
            var word = words.randomElement(using: &random) ?? "word"
            if index < count - 1, Int.random(in: 0..<8, using: &random) == 0 { word += [",", ";", ":"].randomElement(using: &random) ?? "," }
            sentence.append(word)
        }
        text += sentence.joined(separator: " ") + ([".", "!", "?", "…", "?!", ".\""].randomElement(using: &random) ?? ".")
        text += ["  ", " ", "\n", "\n\n", "\t "].randomElement(using: &random) ?? " "
    }
    return text
}

/// The invariants every split must keep.
private func checkInvariants(_ parts: [String], of text: String, limit: Int, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(parts.allSatisfy { !$0.isEmpty }, sourceLocation: sourceLocation)
    #expect(parts.allSatisfy { TextChunker.length($0) <= limit }, sourceLocation: sourceLocation)
    #expect(parts.allSatisfy { $0.first != " " && $0.last != " " }, sourceLocation: sourceLocation)
    #expect(parts.joined(separator: " ") == TextChunker.normalise(text), sourceLocation: sourceLocation)
}

@Suite("Text chunker")
struct TextChunkerTests {
    @Test("text within the limit is one part, whitespace normalised")
    func short() {
        let chunker = TextChunker(maxCharacters: 4_096)
        #expect(chunker.split("  Hello\n\nthere,\tSam!  ") == ["Hello there, Sam!"])
        #expect(chunker.split("") == [])
        #expect(chunker.split(" \n\t ") == [])
    }

    @Test("10,000 characters at the 4,096 limit: three parts, each ending a sentence")
    func openAILimit() {
        let text = generatedText(sentences: 400, seed: 42)
        let normalised = TextChunker.normalise(text)
        #expect(TextChunker.length(normalised) > 10_000)
        let parts = TextChunker(maxCharacters: 4_096).split(String(normalised.unicodeScalars.prefix(10_000)) + ".")
        #expect(parts.count == 3)
        checkInvariants(parts, of: String(normalised.unicodeScalars.prefix(10_000)) + ".", limit: 4_096)
        for part in parts {
            #expect([".", "!", "?", "…", "\""].contains(part.last), "part ends mid-sentence: …\(part.suffix(20))")
        }
        // Greedy: every part but the last is nearly full.
        #expect(parts.dropLast().allSatisfy { TextChunker.length($0) > 4_096 - 400 })
    }

    @Test("random texts at many limits keep every invariant and never split a word", arguments: [12, 40, 97, 300, 1_000, 4_096])
    func invariants(limit: Int) {
        for seed in 1...8 as ClosedRange<UInt64> {
            let text = generatedText(sentences: 60, seed: seed)
            let parts = TextChunker(maxCharacters: limit).split(text)
            checkInvariants(parts, of: text, limit: limit)
            // Every word is shorter than 12 scalars, so words come out whole.
            #expect(parts.flatMap { $0.split(separator: " ") } == TextChunker.normalise(text).split(separator: " "))
        }
    }

    @Test("sentence boundaries first")
    func sentences() {
        let parts = TextChunker(maxCharacters: 30).split("Practice is at five. Bring water! Who drives? Thanks…")
        #expect(parts == ["Practice is at five.", "Bring water! Who drives?", "Thanks…"])
    }

    @Test("closing quotes and brackets stay with their sentence")
    func closers() {
        let parts = TextChunker(maxCharacters: 25).split("Coach said \"be early.\" (Really early.) Fine!")
        #expect(parts == ["Coach said \"be early.\"", "(Really early.) Fine!"])
    }

    @Test("a long sentence falls back to clauses, then words, and starts its own part")
    func fallbacks() {
        let parts = TextChunker(maxCharacters: 24).split("Ok. Bring cleats, shin guards, water bottles and the big blue team banner.")
        #expect(parts == ["Ok.", "Bring cleats,", "shin guards,", "water bottles and the", "big blue team banner."])
    }

    @Test("a decimal or a time is not a sentence end")
    func noSpaceNoBreak() {
        let parts = TextChunker(maxCharacters: 14).split("It costs 3.50 at 5:30pm.")
        #expect(parts == ["It costs 3.50", "at 5:30pm."])
    }

    @Test("a single word over the limit is cut between characters, never inside an emoji")
    func longWord() {
        let word = String(repeating: "a", count: 25)
        #expect(TextChunker(maxCharacters: 10).split("x \(word) y") == ["x", "aaaaaaaaaa", "aaaaaaaaaa", "aaaaa y"])
        // A family emoji is five scalars: it moves whole to the next part rather than being cut.
        let parts = TextChunker(maxCharacters: 8).split("abcd👨‍👩‍👧efg")
        #expect(parts == ["abcd", "👨‍👩‍👧efg"])
        #expect(parts.joined() == "abcd👨‍👩‍👧efg")
    }

    @Test("CJK sentence and clause punctuation needs no space; the parts join with none")
    func cjk() {
        let text = "明天的足球训练取消了。请通知大家！谁来接孩子？我可以，五点到。"
        let parts = TextChunker(maxCharacters: 12).split(text)
        #expect(parts == ["明天的足球训练取消了。", "请通知大家！谁来接孩子？", "我可以，五点到。"])
        #expect(parts.joined() == text)
        let japanese = TextChunker(maxCharacters: 10).split("練習は五時からです、遅れないでください。")
        #expect(japanese == ["練習は五時からです、", "遅れないでください。"])
    }

    @Test("lengths are Unicode scalars")
    func scalarLength() {
        #expect(TextChunker.length("café") == 4)
        #expect(TextChunker.length("cafe\u{301}") == 5)
        #expect(TextChunker.length("👨‍👩‍👧") == 5)
    }
}
