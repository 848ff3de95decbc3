import Foundation

/// Whether spoken audio said exactly the text it was given, measured on the transcript the speech model reports.
///
/// Both texts are normalised the same way before they are compared word by word:
/// - case and diacritics are folded (`Élan` = `elan`), typographic apostrophes and quotes are dropped inside words
///   (`don't` = `dont`), every other character that is not a letter or a digit separates words (punctuation, dashes,
///   whitespace);
/// - a number written in digits becomes its English words (`42` = `forty two`, `1,500` is read as `1500` when the
///   commas group thousands), so `3 bears` and `three bears` agree; other languages' number words are not known, so a
///   digit that a model reads aloud in Spanish counts as a difference (rare in stories, and within the threshold).
///
/// The word error rate is the word-level edit distance (substitutions, insertions, deletions) divided by the number of
/// words in the text. It is bounded: a transcript far longer than the text is not aligned word by word (its length
/// alone already exceeds any useful threshold).
public enum VerbatimCheck {
    /// The largest word error rate at which a reading still counts as verbatim (10 %).
    public static let defaultMaximumWordErrorRate = 0.10

    /// The normalised words of `text`.
    public static func words(_ text: String) -> [String] {
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        var words: [String] = []
        var current = ""
        let scalars = Array(folded.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            let properties = scalar.properties
            if properties.isAlphabetic || properties.numericType != nil {
                current.unicodeScalars.append(scalar)
                continue
            }
            // A thousands separator between digits (`1,500`) joins the number; an apostrophe inside a word is dropped.
            let next = index + 1 < scalars.count ? scalars[index + 1] : nil
            if scalar == ",", let last = current.unicodeScalars.last, last.properties.numericType != nil,
                let next, next.properties.numericType != nil
            {
                continue
            }
            if ["'", "\u{2019}", "\u{2018}", "\u{02BC}"].contains(scalar), !current.isEmpty, let next, next.properties.isAlphabetic {
                continue
            }
            if !current.isEmpty {
                words.append(contentsOf: expand(current))
                current = ""
            }
        }
        if !current.isEmpty { words.append(contentsOf: expand(current)) }
        return words
    }

    /// The word error rate of `transcript` against `text` (0 = identical after normalisation). An empty text has rate
    /// 0 against an empty transcript and 1 against anything else.
    public static func wordErrorRate(text: String, transcript: String) -> Double {
        let reference = words(text)
        let hypothesis = words(transcript)
        guard !reference.isEmpty else { return hypothesis.isEmpty ? 0 : 1 }
        // Aligning a transcript many times longer than the text is quadratic work for a verdict its length already gives.
        if hypothesis.count > 4 * reference.count + 100 {
            return Double(hypothesis.count - reference.count) / Double(reference.count)
        }
        return Double(editDistance(reference, hypothesis)) / Double(reference.count)
    }

    /// Word-level Levenshtein distance (two rows).
    static func editDistance(_ a: [String], _ b: [String]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(substitution, previous[j] + 1, current[j - 1] + 1)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// A token as words: digits become English number words (up to 999,999,999,999; longer digit runs are read digit by
    /// digit), anything else is itself.
    static func expand(_ token: String) -> [String] {
        guard token.unicodeScalars.allSatisfy({ $0.properties.numericType != nil }) else {
            // Letters and digits mixed (`3rd`, `4pm`): the digit run and the rest separately.
            var parts: [String] = []
            var run = ""
            var runIsDigits = false
            for scalar in token.unicodeScalars {
                let isDigit = ("0"..."9").contains(scalar)
                if !run.isEmpty, isDigit != runIsDigits {
                    parts.append(contentsOf: runIsDigits ? number(run) : [run])
                    run = ""
                }
                runIsDigits = isDigit
                run.unicodeScalars.append(scalar)
            }
            if !run.isEmpty { parts.append(contentsOf: runIsDigits ? number(run) : [run]) }
            return parts
        }
        return number(token)
    }

    private static let ones = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen",
        "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
    ]
    private static let tens = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]

    /// English words of a digit string (non-ASCII digits and very long runs: digit by digit).
    static func number(_ digits: String) -> [String] {
        guard digits.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }) else { return [digits] }
        guard digits.count <= 12, let value = Int(digits) else {
            return digits.unicodeScalars.map { ones[Int($0.value - 48)] }
        }
        if value == 0 { return ["zero"] }
        var words: [String] = []
        var remaining = value
        for (scale, name) in [(1_000_000_000, "billion"), (1_000_000, "million"), (1_000, "thousand")] where remaining >= scale {
            words += belowThousand(remaining / scale) + [name]
            remaining %= scale
        }
        if remaining > 0 { words += belowThousand(remaining) }
        return words
    }

    private static func belowThousand(_ value: Int) -> [String] {
        var words: [String] = []
        var remaining = value
        if remaining >= 100 {
            words += [ones[remaining / 100], "hundred"]
            remaining %= 100
        }
        if remaining >= 20 {
            words.append(tens[remaining / 10])
            remaining %= 10
            if remaining > 0 { words.append(ones[remaining]) }
        } else if remaining > 0 {
            words.append(ones[remaining])
        }
        return words
    }
}
