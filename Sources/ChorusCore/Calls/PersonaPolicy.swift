import Foundation

/// What a persona policy rule refuses.
public enum PersonaCategory: String, Sendable, CaseIterable, Codable {
    /// Playing the police, emergency services, a bank, a government office, or a real person.
    case impersonation
    /// Asking the callee for money, gift cards, payments or transfers.
    case financialRequest = "financial_request"
    /// Asking the callee for passwords, one-time codes, card or account numbers, identity numbers.
    case credentials
    /// Threatening the callee (harm, blackmail, extortion, a kidnapping).
    case threat
    /// Sexual content.
    case sexual
    /// Anything involving minors.
    case minors

    /// The sentence a refusal shows for the category.
    public var explanation: String {
        switch self {
        case .impersonation: "it impersonates the police, emergency services, a bank, a government office or a real person"
        case .financialRequest: "it asks the person called for money, gift cards or a payment"
        case .credentials: "it asks the person called for passwords, codes, card or account numbers"
        case .threat: "it threatens the person called"
        case .sexual: "it has sexual content"
        case .minors: "it involves minors"
        }
    }
}

/// The rules for call-specific abuse in user text that becomes a call's AI instructions (custom scenario names and
/// personas): impersonating authorities or real people, asking for money or credentials, threats, sexual content,
/// and anything involving minors, in English, Spanish, French, German and Italian (the languages the product speaks;
/// the moderation model is the second opinion for these and the only one for other languages).
///
/// Text is folded (case and accents), split into words, and split into sentences. A rule matches either a phrase on its
/// own (`alone`) or a request word and an object in the same sentence (`requests` × `objects`: "ask … gift card", "you
/// are … a police officer"). A phrase with a negation in the two words before it or the word right after it ("never
/// ask for money", "do not ask", "no pidas dinero", "verlange nie Geld") does not count, so a persona may state the
/// guardrails it keeps. A pattern ending in `*` matches any word
/// starting with it. Pure and deterministic.
public struct PersonaPolicy: Sendable {
    /// One category's patterns in one language.
    public struct Rule: Sendable {
        public var category: PersonaCategory
        public var language: String
        /// Phrases that refuse on their own.
        public var alone: [String]
        /// Request words (or identity claims) that refuse when one of `objects` is in the same sentence.
        public var requests: [String]
        public var objects: [String]

        public init(_ category: PersonaCategory, _ language: String, alone: [String] = [], requests: [String] = [], objects: [String] = []) {
            self.category = category
            self.language = language
            self.alone = alone
            self.requests = requests
            self.objects = objects
        }
    }

    /// Why a text was refused.
    public struct Finding: Sendable, Equatable {
        public var category: PersonaCategory
        public var language: String
        /// The words that matched, folded, e.g. `police` or `ask … gift card`.
        public var evidence: String
    }

    public let rules: [Rule]
    /// Words that cancel a phrase they closely precede or follow.
    public let negations: Set<String>
    private let compiled: [CompiledRule]

    public init(rules: [Rule], negations: Set<String>) {
        self.rules = rules
        self.negations = negations
        compiled = rules.map { rule in
            CompiledRule(
                rule: rule, alone: rule.alone.map(Self.pattern), requests: rule.requests.map(Self.pattern), objects: rule.objects.map(Self.pattern))
        }
    }

    /// The built-in tables.
    public static let standard = PersonaPolicy(rules: PersonaPolicyTables.rules, negations: PersonaPolicyTables.negations)

    /// The categories the text falls in, each once, in ``PersonaCategory`` order (empty: allowed).
    public func categories(of text: String) -> [PersonaCategory] {
        let found = Set(findings(in: text).map(\.category))
        return PersonaCategory.allCases.filter(found.contains)
    }

    /// Every rule that matches, at most one finding per category and language.
    public func findings(in text: String) -> [Finding] {
        let sentences = Self.sentences(text)
        var findings: [Finding] = []
        var seen = Set<String>()
        for compiled in compiled {
            let key = "\(compiled.rule.category.rawValue)|\(compiled.rule.language)"
            guard !seen.contains(key) else { continue }
            if let evidence = match(compiled, in: sentences) {
                seen.insert(key)
                findings.append(Finding(category: compiled.rule.category, language: compiled.rule.language, evidence: evidence))
            }
        }
        return findings
    }

    private func match(_ compiled: CompiledRule, in sentences: [[String]]) -> String? {
        for words in sentences {
            for pattern in compiled.alone where !occurrences(of: pattern, in: words).isEmpty {
                return pattern.text
            }
            guard !compiled.requests.isEmpty else { continue }
            let objects = compiled.objects.filter { !occurrences(of: $0, in: words, negatable: false).isEmpty }
            guard let object = objects.first else { continue }
            for request in compiled.requests where !occurrences(of: request, in: words).isEmpty {
                return "\(request.text) … \(object.text)"
            }
        }
        return nil
    }

    /// Start indexes of `pattern` in `words` (not negated, unless `negatable` is false).
    private func occurrences(of pattern: Pattern, in words: [String], negatable: Bool = true) -> [Int] {
        guard !pattern.words.isEmpty, words.count >= pattern.words.count else { return [] }
        var starts: [Int] = []
        for start in 0...(words.count - pattern.words.count) {
            var matches = true
            for (offset, part) in pattern.words.enumerated() {
                let word = words[start + offset]
                if part.hasSuffix("*") ? !word.hasPrefix(part.dropLast()) : word != part {
                    matches = false
                    break
                }
            }
            guard matches else { continue }
            let end = start + pattern.words.count
            if negatable, words[max(0, start - 2)..<start].contains(where: negations.contains) || (end < words.count && negations.contains(words[end])) {
                continue
            }
            starts.append(start)
        }
        return starts
    }

    private struct Pattern: Sendable {
        var text: String
        var words: [String]
    }

    private struct CompiledRule: Sendable {
        var rule: Rule
        var alone: [Pattern]
        var requests: [Pattern]
        var objects: [Pattern]
    }

    private static func pattern(_ text: String) -> Pattern {
        Pattern(text: text, words: words(fold(text), keepingStars: true))
    }

    /// Lowercased, without accents, `ß` as `ss`.
    static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil).lowercased()
            .replacingOccurrences(of: "ß", with: "ss")
    }

    /// Words: runs of letters and digits.
    static func words(_ folded: String, keepingStars: Bool = false) -> [String] {
        folded.split(whereSeparator: { !($0.isLetter || $0.isNumber || (keepingStars && $0 == "*")) }).map(String.init)
    }

    /// The folded words of each sentence (split at `.`, `!`, `?`, `;`, `¿`, `¡` and line breaks).
    static func sentences(_ text: String) -> [[String]] {
        fold(text).split(whereSeparator: { ".!?;¿¡\n\r".contains($0) }).map { words(String($0)) }.filter { !$0.isEmpty }
            + minorAges(fold(text))
    }

    /// A stated age under 18 ("a 12-year-old", "15 años", "14 ans", "13 Jahre", "16 anni") as a pseudo-sentence
    /// `["underage"]`, so the minors rule sees it.
    static func minorAges(_ folded: String) -> [[String]] {
        let words = words(folded)
        let units: Set<String> = ["year", "years", "yr", "yrs", "yo", "anos", "ano", "ans", "an", "jahre", "jahr", "jahrige", "jahriger", "anni", "anno"]
        for (index, word) in words.enumerated() where index + 1 < words.count && units.contains(words[index + 1]) {
            if let age = Int(word), (0..<18).contains(age) { return [["underage"]] }
        }
        return []
    }
}

/// A persona's verdict: the policy's categories and the moderation model's flagged categories (prefixed
/// `moderation:`), which model was asked (`nil`: moderation off) and when.
public struct PersonaVerdict: Sendable, Equatable {
    public var categories: [String]
    public var model: String?
    public var checkedAt: Date

    public init(categories: [String], model: String?, checkedAt: Date) {
        self.categories = categories
        self.model = model
        self.checkedAt = checkedAt
    }

    /// Whether the text may be used for calls.
    public var allowed: Bool { categories.isEmpty }

    /// Combines the policy's categories with the moderation model's flagged ones.
    public static func combine(policy: [PersonaCategory], moderation: [String], model: String?, at date: Date) -> PersonaVerdict {
        PersonaVerdict(categories: policy.map(\.rawValue) + moderation.map { "moderation:" + $0 }, model: model, checkedAt: date)
    }

    /// The refusal's sentence: "This persona cannot be used for calls: it … (impersonation)."
    public var refusalMessage: String {
        let policy = categories.compactMap(PersonaCategory.init(rawValue:))
        let moderation = categories.filter { $0.hasPrefix("moderation:") }.map { String($0.dropFirst("moderation:".count)) }
        var reasons = policy.map(\.explanation)
        if !moderation.isEmpty { reasons.append("the moderation model flagged it (\(moderation.joined(separator: ", ")))") }
        return "This persona cannot be used for calls: \(reasons.joined(separator: "; ")) (\(categories.joined(separator: ", ")))."
    }
}
