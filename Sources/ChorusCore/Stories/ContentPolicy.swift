import Foundation

/// The five languages stories are written in.
public enum StoryLanguage: String, Sendable, CaseIterable, Codable {
    case en, es, fr, de, it

    /// The language's English name, as prompts name it.
    public var displayName: String {
        switch self {
        case .en: "English"
        case .es: "Spanish"
        case .fr: "French"
        case .de: "German"
        case .it: "Italian"
        }
    }

    /// Reads `en`, `en-US`, `fr_FR` (case-insensitive); `nil` for other languages.
    public init?(code: String) {
        let prefix = code.lowercased().split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map(String.init) ?? ""
        self.init(rawValue: prefix)
    }
}

/// The seed's multilingual content policy filter (seed 004 "Content Policy Filter"): term and phrase replacements for
/// isolation, violence and scary content in English, Spanish, French, German and Italian, matched as whole words,
/// case-insensitively, with the replacement taking the case of what it replaces ("Monster" → "Friendly creature").
/// Phrases win over the terms inside them ("all alone" → "with friends", not "all with friends"); replacements are
/// never filtered again. Pure and deterministic.
public struct ContentPolicyFilter: Sendable {
    /// What a rule protects against.
    public enum Category: String, Sendable, CaseIterable {
        case isolation, violence, scary
    }

    /// One replacement.
    public struct Rule: Sendable, Equatable {
        public var pattern: String
        public var replacement: String
        public var category: Category
        public var language: StoryLanguage

        public init(_ pattern: String, _ replacement: String, _ category: Category, _ language: StoryLanguage) {
            self.pattern = pattern
            self.replacement = replacement
            self.category = category
            self.language = language
        }
    }

    /// A replacement that was made.
    public struct Replacement: Sendable, Equatable {
        public var original: String
        public var replacement: String
        public var category: Category
    }

    /// Filtered text and what was replaced.
    public struct FilteredText: Sendable, Equatable {
        public var text: String
        public var replacements: [Replacement]
    }

    /// The seed's risk levels: low is safe for the image model, medium needs filtering first, high needs review.
    public enum RiskLevel: String, Sendable, Comparable {
        case low, medium, high

        public static func < (lhs: RiskLevel, rhs: RiskLevel) -> Bool {
            let order: [RiskLevel] = [.low, .medium, .high]
            return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
        }
    }

    /// The seed's `ValidationResult`.
    public struct Validation: Sendable, Equatable {
        public var isValid: Bool
        public var riskLevel: RiskLevel
        /// The problematic words and phrases as written, in order of appearance, without repeats.
        public var problematicTerms: [String]
        public var recommendations: [String]
    }

    public let rules: [Rule]
    /// Lowercased patterns as characters, longest first (phrases before their words).
    private let compiled: [(pattern: [String], rule: Rule)]

    public init(rules: [Rule]) {
        self.rules = rules
        compiled = rules.enumerated()
            .map { (order: $0.offset, pattern: $0.element.pattern.map { String($0).lowercased() }, rule: $0.element) }
            .sorted { ($0.pattern.count, -$0.order) > ($1.pattern.count, -$1.order) }
            .map { (pattern: $0.pattern, rule: $0.rule) }
    }

    /// The built-in tables.
    public static let standard = ContentPolicyFilter(rules: ContentPolicyTables.rules)

    /// Replaces every problematic word and phrase. `language` limits the rules to one language's; `nil` applies all
    /// (illustration prompts mix English with the hero's own words).
    public func filter(_ text: String, language: StoryLanguage?) -> FilteredText {
        let characters = Array(text)
        let matches = scan(characters, language: language)
        guard !matches.isEmpty else { return FilteredText(text: text, replacements: []) }
        var output = ""
        var replacements: [Replacement] = []
        var position = 0
        for match in matches {
            output.append(contentsOf: characters[position..<match.start])
            let original = String(characters[match.start..<match.end])
            let replacement = Self.matchCase(of: original, to: match.rule.replacement)
            output.append(replacement)
            replacements.append(Replacement(original: original, replacement: replacement, category: match.rule.category))
            position = match.end
        }
        output.append(contentsOf: characters[position...])
        return FilteredText(text: output, replacements: replacements)
    }

    /// The seed's `preValidatePrompt`: no problematic content is low risk; isolation or scary words are medium (the
    /// filter fixes them); any violence, or three or more problems, is high.
    public func validate(_ text: String, language: StoryLanguage?) -> Validation {
        let characters = Array(text)
        let matches = scan(characters, language: language)
        var seen = Set<String>()
        let terms = matches.map { String(characters[$0.start..<$0.end]) }.filter { seen.insert($0.lowercased()).inserted }
        let categories = Set(matches.map(\.rule.category))
        let risk: RiskLevel = matches.isEmpty ? .low : (categories.contains(.violence) || terms.count >= 3 ? .high : .medium)
        let recommendations = Category.allCases.filter(categories.contains).map { category -> String in
            switch category {
            case .isolation: "Show the hero together with friends or family rather than alone."
            case .violence: "Replace weapons and fighting with play, magic or working together."
            case .scary: "Keep the mood bright and gentle: friendly creatures and sweet dreams."
            }
        }
        return Validation(isValid: risk != .high, riskLevel: risk, problematicTerms: terms, recommendations: recommendations)
    }

    private struct Match {
        var start: Int
        var end: Int
        var rule: Rule
    }

    /// Leftmost-longest, non-overlapping whole-word matches.
    private func scan(_ characters: [Character], language: StoryLanguage?) -> [Match] {
        let lowered = characters.map { String($0).lowercased() }
        let candidates = language.map { language in compiled.filter { $0.rule.language == language } } ?? compiled
        var matches: [Match] = []
        var index = 0
        while index < lowered.count {
            guard index == 0 || !Self.isWordCharacter(characters[index - 1]) else {
                index += 1
                continue
            }
            var found: Match?
            for candidate in candidates where index + candidate.pattern.count <= lowered.count {
                let end = index + candidate.pattern.count
                guard end == lowered.count || !Self.isWordCharacter(characters[end]) else { continue }
                if lowered[index..<end].elementsEqual(candidate.pattern) {
                    found = Match(start: index, end: end, rule: candidate.rule)
                    break
                }
            }
            if let found {
                matches.append(found)
                index = found.end
            } else {
                index += 1
            }
        }
        return matches
    }

    private static func isWordCharacter(_ character: Character) -> Bool {
        character.isLetter || character.isNumber || character == "_"
    }

    /// "MONSTER" → upper-case replacement; "Monster" → capitalised first letter; otherwise as written in the table.
    static func matchCase(of original: String, to replacement: String) -> String {
        let letters = original.filter(\.isLetter)
        if letters.count > 1, letters == letters.uppercased(), letters != letters.lowercased() { return replacement.uppercased() }
        if let first = letters.first, first.isUppercase, let head = replacement.first {
            return head.uppercased() + replacement.dropFirst()
        }
        return replacement
    }
}

/// The replacement tables, by language (seed 004's, extended to the same three categories in every language).
enum ContentPolicyTables {
    static let rules: [ContentPolicyFilter.Rule] = english + spanish + french + german + italian

    typealias Rule = ContentPolicyFilter.Rule

    static let english: [Rule] = [
        Rule("all alone", "with friends", .isolation, .en), Rule("on his own", "with his friends", .isolation, .en),
        Rule("on her own", "with her friends", .isolation, .en), Rule("alone", "with friends", .isolation, .en),
        Rule("lonely", "seeking friends", .isolation, .en), Rule("isolated", "exploring", .isolation, .en),
        Rule("abandoned", "cared for", .isolation, .en),
        Rule("weapons", "magical tools", .violence, .en), Rule("weapon", "magical tool", .violence, .en),
        Rule("swords", "magical wands", .violence, .en),
        Rule("sword", "magical wand", .violence, .en), Rule("guns", "bubble wands", .violence, .en), Rule("gun", "bubble wand", .violence, .en),
        Rule("knife", "paintbrush", .violence, .en), Rule("fighting", "playing", .violence, .en), Rule("fights", "plays", .violence, .en),
        Rule("fight", "play", .violence, .en), Rule("battle", "friendly game", .violence, .en), Rule("combat", "friendly game", .violence, .en),
        Rule("war", "festival", .violence, .en), Rule("blood", "paint", .violence, .en), Rule("kill", "tickle", .violence, .en),
        Rule("attack", "surprise", .violence, .en),
        Rule("dark and scary", "bright and magical", .scary, .en), Rule("terrifying monster", "amazing creature", .scary, .en),
        Rule("scary", "magical", .scary, .en), Rule("terrifying", "amazing", .scary, .en), Rule("frightening", "wondrous", .scary, .en),
        Rule("creepy", "curious", .scary, .en), Rule("monsters", "friendly creatures", .scary, .en),
        Rule("monster", "friendly creature", .scary, .en),
        Rule("nightmares", "dreams", .scary, .en), Rule("nightmare", "dream", .scary, .en), Rule("ghost", "friendly spirit", .scary, .en),
    ]

    static let spanish: [Rule] = [
        Rule("completamente solo", "explorando felizmente", .isolation, .es), Rule("completamente sola", "explorando felizmente", .isolation, .es),
        Rule("aislado", "explorando", .isolation, .es), Rule("aislada", "explorando", .isolation, .es),
        Rule("abandonado", "acompañado", .isolation, .es), Rule("abandonada", "acompañada", .isolation, .es),
        Rule("perdido", "explorando", .isolation, .es), Rule("perdida", "explorando", .isolation, .es),
        Rule("armas", "herramientas mágicas", .violence, .es), Rule("arma", "herramienta mágica", .violence, .es),
        Rule("espada", "varita mágica", .violence, .es), Rule("pelea", "juego", .violence, .es), Rule("pelear", "jugar", .violence, .es),
        Rule("batalla", "juego amistoso", .violence, .es), Rule("guerra", "fiesta", .violence, .es), Rule("sangre", "pintura", .violence, .es),
        Rule("matar", "abrazar", .violence, .es),
        Rule("oscuro y aterrador", "brillante y mágico", .scary, .es), Rule("aterrador", "mágico", .scary, .es),
        Rule("monstruo", "criatura amistosa", .scary, .es), Rule("monstruos", "criaturas amistosas", .scary, .es),
        Rule("pesadilla", "sueño", .scary, .es), Rule("fantasma", "espíritu amistoso", .scary, .es), Rule("miedo", "asombro", .scary, .es),
    ]

    static let french: [Rule] = [
        Rule("tout seul", "avec des amis", .isolation, .fr), Rule("toute seule", "avec des amis", .isolation, .fr),
        Rule("seul", "avec des amis", .isolation, .fr), Rule("seule", "avec des amis", .isolation, .fr),
        Rule("isolé", "en exploration", .isolation, .fr), Rule("isolée", "en exploration", .isolation, .fr),
        Rule("abandonné", "entouré", .isolation, .fr), Rule("abandonnée", "entourée", .isolation, .fr),
        Rule("perdu", "en exploration", .isolation, .fr),
        Rule("armes", "outils magiques", .violence, .fr), Rule("arme", "outil magique", .violence, .fr),
        Rule("épée", "baguette magique", .violence, .fr),
        Rule("bagarre", "jeu", .violence, .fr), Rule("se battre", "jouer", .violence, .fr), Rule("bataille", "jeu amical", .violence, .fr),
        Rule("guerre", "fête", .violence, .fr), Rule("sanglant", "coloré", .violence, .fr), Rule("tuer", "chatouiller", .violence, .fr),
        Rule("sombre et effrayant", "lumineux et magique", .scary, .fr), Rule("effrayant", "magique", .scary, .fr),
        Rule("terrifiant", "merveilleux", .scary, .fr), Rule("monstre", "créature amicale", .scary, .fr),
        Rule("monstres", "créatures amicales", .scary, .fr), Rule("cauchemar", "rêve", .scary, .fr), Rule("fantôme", "esprit amical", .scary, .fr),
    ]

    static let german: [Rule] = [
        Rule("ganz allein", "mit Freunden", .isolation, .de), Rule("allein", "mit Freunden", .isolation, .de),
        Rule("einsam", "auf Freundessuche", .isolation, .de), Rule("verlassen", "umsorgt", .isolation, .de),
        Rule("verloren", "auf Entdeckungsreise", .isolation, .de),
        Rule("Waffen", "Zauberwerkzeuge", .violence, .de), Rule("Waffe", "Zauberwerkzeug", .violence, .de),
        Rule("Schwert", "Zauberstab", .violence, .de),
        Rule("Kampf", "Spiel", .violence, .de), Rule("kämpfen", "spielen", .violence, .de), Rule("Schlacht", "Wettspiel", .violence, .de),
        Rule("Krieg", "Fest", .violence, .de), Rule("Blut", "Farbe", .violence, .de), Rule("töten", "kitzeln", .violence, .de),
        Rule("dunkel und gruselig", "hell und zauberhaft", .scary, .de), Rule("gruselig", "zauberhaft", .scary, .de),
        Rule("unheimlich", "geheimnisvoll", .scary, .de), Rule("Ungeheuer", "freundliches Wesen", .scary, .de),
        Rule("Monster", "freundliches Wesen", .scary, .de), Rule("Albtraum", "Traum", .scary, .de),
        Rule("Gespenst", "freundlicher Geist", .scary, .de),
    ]

    static let italian: [Rule] = [
        Rule("tutto solo", "con gli amici", .isolation, .it), Rule("tutta sola", "con gli amici", .isolation, .it),
        Rule("da solo", "con gli amici", .isolation, .it), Rule("da sola", "con gli amici", .isolation, .it),
        Rule("isolato", "esplorando", .isolation, .it), Rule("isolata", "esplorando", .isolation, .it),
        Rule("abbandonato", "accudito", .isolation, .it), Rule("abbandonata", "accudita", .isolation, .it),
        Rule("armi", "strumenti magici", .violence, .it), Rule("arma", "strumento magico", .violence, .it),
        Rule("spada", "bacchetta magica", .violence, .it), Rule("lotta", "gioco", .violence, .it), Rule("combattere", "giocare", .violence, .it),
        Rule("battaglia", "gioco amichevole", .violence, .it), Rule("guerra", "festa", .violence, .it), Rule("sangue", "colore", .violence, .it),
        Rule("uccidere", "abbracciare", .violence, .it),
        Rule("buio e spaventoso", "luminoso e magico", .scary, .it), Rule("spaventoso", "magico", .scary, .it),
        Rule("terrificante", "meraviglioso", .scary, .it), Rule("mostro", "creatura amichevole", .scary, .it),
        Rule("mostri", "creature amichevoli", .scary, .it), Rule("incubo", "sogno", .scary, .it), Rule("fantasma", "spirito amichevole", .scary, .it),
    ]
}
