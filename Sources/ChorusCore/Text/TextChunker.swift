import Foundation

/// Splits text for text-to-speech requests that cap their input (OpenAI 4,096 characters, ElevenLabs per model).
///
/// The text is first normalised: every run of whitespace (newlines included) becomes one space, and the ends are
/// trimmed. It is then cut into as few parts as the limit allows, preferring, in order:
/// 1. sentence ends: `.`, `!`, `?`, `…` (with any closing quotes or brackets after them) followed by a space, and
///    the CJK `。`, `！`, `？`, which need no space after them;
/// 2. clause ends: `,`, `;`, `:` followed by a space, and the CJK `，`, `、`, `；`, `：`;
/// 3. spaces between words;
/// 4. only for a single word longer than the limit: between its characters (never inside a grapheme cluster).
///
/// A break falls at the best boundary available: a sentence too long for one part starts a new part and is cut at
/// its clauses, so no part ends mid-sentence when a sentence end could have been used instead. Parts are never empty
/// and never start or end with a space. Joining them with single spaces reproduces the normalised text, except that
/// at a break after CJK punctuation (or inside an over-long word), where the text had no space, they join with none.
///
/// Lengths are counted in Unicode scalars (what Python's `len` and so the providers count), which is never less than
/// the number of visible characters.
public struct TextChunker: Sendable {
    /// The most Unicode scalars in one part.
    public let maxCharacters: Int

    /// - Precondition: `maxCharacters` is positive.
    public init(maxCharacters: Int) {
        precondition(maxCharacters > 0, "a chunk must hold at least one character")
        self.maxCharacters = maxCharacters
    }

    /// The parts of `text`, in order; none for text that is empty or only whitespace.
    public func split(_ text: String) -> [String] {
        let normalised = Self.normalise(text)
        guard !normalised.isEmpty else { return [] }
        var packer = Packer(limit: maxCharacters)
        split(Piece(text: normalised[...], spaceBefore: false), level: .sentence, into: &packer)
        return packer.finish()
    }

    /// `text` with every whitespace run replaced by one space, trimmed.
    public static func normalise(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The length a provider counts: Unicode scalars.
    public static func length(_ text: some StringProtocol) -> Int { text.unicodeScalars.count }

    private enum Level {
        case sentence, clause, word, character
    }

    /// A stretch of normalised text, and whether a space separated it from the stretch before.
    private struct Piece {
        var text: Substring
        var spaceBefore: Bool
        var length: Int { TextChunker.length(text) }
    }

    /// Greedily fills parts up to the limit.
    private struct Packer {
        let limit: Int
        var parts: [String] = []
        var current = ""
        var currentLength = 0

        init(limit: Int) { self.limit = limit }

        mutating func append(_ piece: Piece) {
            let length = piece.length
            let separator = currentLength > 0 && piece.spaceBefore ? 1 : 0
            if currentLength > 0, currentLength + separator + length > limit { flush() }
            if currentLength == 0 {
                current = String(piece.text)
                currentLength = length
            } else {
                current += (separator == 1 ? " " : "") + piece.text
                currentLength += separator + length
            }
        }

        mutating func flush() {
            guard currentLength > 0 else { return }
            parts.append(current)
            current = ""
            currentLength = 0
        }

        mutating func finish() -> [String] {
            flush()
            return parts
        }
    }

    private static let sentenceTerminators: Set<Character> = [".", "!", "?", "…", "‼", "⁇"]
    private static let cjkSentenceTerminators: Set<Character> = ["。", "！", "？", "｡"]
    private static let clauseTerminators: Set<Character> = [",", ";", ":"]
    private static let cjkClauseTerminators: Set<Character> = ["，", "、", "；", "：", "､"]
    /// Closing quotes and brackets that belong to the sentence or clause they end.
    private static let closers: Set<Character> = ["\"", "'", "”", "’", ")", "]", "}", "»", "」", "』", "）", "】", "〉", "》"]

    private func split(_ piece: Piece, level: Level, into packer: inout Packer) {
        if piece.length <= maxCharacters {
            packer.append(piece)
            return
        }
        // A piece that needs cutting starts a new part, so the break before it stays at the better boundary.
        packer.flush()
        let next: Level
        let pieces: [Piece]
        switch level {
        case .sentence:
            (next, pieces) = (.clause, Self.pieces(of: piece, at: Self.sentenceTerminators, cjk: Self.cjkSentenceTerminators))
        case .clause:
            (next, pieces) = (.word, Self.pieces(of: piece, at: Self.clauseTerminators, cjk: Self.cjkClauseTerminators))
        case .word:
            (next, pieces) = (.character, Self.words(of: piece))
        case .character:
            for slice in characterSlices(of: piece.text) {
                packer.append(Piece(text: slice, spaceBefore: false))
            }
            return
        }
        var first = true
        for part in pieces {
            var part = part
            if first { part.spaceBefore = piece.spaceBefore }
            first = false
            split(part, level: next, into: &packer)
        }
    }

    /// `piece` cut after each terminator (plus closers) that is followed by a space, or after each CJK terminator.
    private static func pieces(of piece: Piece, at terminators: Set<Character>, cjk: Set<Character>) -> [Piece] {
        let text = piece.text
        var pieces: [Piece] = []
        var start = text.startIndex
        var spaceBefore = piece.spaceBefore
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            guard terminators.contains(character) || cjk.contains(character) else {
                index = text.index(after: index)
                continue
            }
            var end = text.index(after: index)
            var isCJK = cjk.contains(character)
            while end < text.endIndex, terminators.contains(text[end]) || cjk.contains(text[end]) || closers.contains(text[end]) {
                isCJK = isCJK || cjk.contains(text[end])
                end = text.index(after: end)
            }
            guard end < text.endIndex else { break }
            if text[end] == " " {
                pieces.append(Piece(text: text[start..<end], spaceBefore: spaceBefore))
                start = text.index(after: end)
                spaceBefore = true
            } else if isCJK {
                pieces.append(Piece(text: text[start..<end], spaceBefore: spaceBefore))
                start = end
                spaceBefore = false
            }
            index = start > end ? start : end
        }
        if start < text.endIndex { pieces.append(Piece(text: text[start...], spaceBefore: spaceBefore)) }
        return pieces
    }

    private static func words(of piece: Piece) -> [Piece] {
        piece.text.split(separator: " ").map { Piece(text: $0, spaceBefore: true) }
    }

    /// Consecutive whole characters of at most the limit in scalars (a single larger grapheme cluster stands alone).
    private func characterSlices(of text: Substring) -> [Substring] {
        var slices: [Substring] = []
        var start = text.startIndex
        var length = 0
        var index = text.startIndex
        while index < text.endIndex {
            let characterLength = text[index].unicodeScalars.count
            if length > 0, length + characterLength > maxCharacters {
                slices.append(text[start..<index])
                start = index
                length = 0
            }
            length += characterLength
            index = text.index(after: index)
        }
        slices.append(text[start...])
        return slices
    }
}
