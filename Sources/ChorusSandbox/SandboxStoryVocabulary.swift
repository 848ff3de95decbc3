import ChorusCore
import Foundation

/// The storyteller's small dictionary: the product's own story events (``StoryEventCatalog``) and common child
/// traits, so a story in Spanish, French, German or Italian names them in its own language instead of pasting the
/// English (or another language's) words into its sentences.
enum SandboxStoryVocabulary {
    /// One trait: how each language's trait sentence names it, and the spellings it is recognised by (any language).
    struct Trait {
        /// en: the adjective ("brave"); es: a noun after "su" ("valentía"); fr: a noun with its possessive
        /// ("son courage"); de: a noun with its accusative article ("den Mut"); it: a noun after "del suo" / "della
        /// sua" ("del suo coraggio").
        let forms: [StoryLanguage: String]
        let spellings: Set<String>
    }

    static let traits: [Trait] = [
        trait("brave", "valentía", "son courage", "den Mut", "del suo coraggio", [
            "brave", "courageous", "bold", "fearless", "valiente", "valeroso", "valerosa", "courageux", "courageuse", "mutig", "tapfer",
            "coraggioso", "coraggiosa",
        ]),
        trait("kind", "bondad", "sa gentillesse", "die Freundlichkeit", "della sua gentilezza", [
            "kind", "nice", "kind-hearted", "kindhearted", "amable", "bondadoso", "bondadosa", "bueno", "buena", "gentil", "gentille",
            "freundlich", "lieb", "gentile", "buono",
        ]),
        trait("curious", "curiosidad", "sa curiosité", "die Neugier", "della sua curiosità", [
            "curious", "inquisitive", "curioso", "curiosa", "curieux", "curieuse", "neugierig",
        ]),
        trait("funny", "sentido del humor", "son humour", "den Humor", "del suo umorismo", [
            "funny", "silly", "humorous", "goofy", "gracioso", "graciosa", "divertido", "divertida", "drôle", "rigolo", "rigolote", "lustig",
            "witzig", "divertente", "buffo", "buffa", "spiritoso", "spiritosa",
        ]),
        trait("gentle", "dulzura", "sa douceur", "die Sanftheit", "della sua dolcezza", [
            "gentle", "tender", "sweet", "dulce", "tierno", "tierna", "doux", "douce", "sanft", "dolce", "tenero", "tenera",
        ]),
        trait("clever", "inteligencia", "son intelligence", "die Klugheit", "della sua intelligenza", [
            "clever", "smart", "intelligent", "bright", "wise", "inteligente", "listo", "lista", "listo", "malin", "maligne", "klug", "schlau",
            "intelligente", "sveglio", "sveglia",
        ]),
        trait("creative", "imaginación", "son imagination", "die Fantasie", "della sua fantasia", [
            "creative", "imaginative", "artistic", "dreamy", "creativo", "creativa", "imaginativo", "imaginativa", "créatif", "créative",
            "imaginatif", "imaginative", "rêveur", "rêveuse", "kreativ", "fantasievoll", "verträumt", "fantasioso", "fantasiosa",
            "sognatore", "sognatrice",
        ]),
        trait("cheerful", "alegría", "sa gaieté", "die Fröhlichkeit", "della sua allegria", [
            "cheerful", "happy", "joyful", "sunny", "alegre", "feliz", "contento", "contenta", "joyeux", "joyeuse", "gai", "gaie", "heureux",
            "heureuse", "fröhlich", "glücklich", "allegro", "allegra", "felice",
        ]),
        trait("adventurous", "espíritu aventurero", "son goût de l'aventure", "die Abenteuerlust", "del suo spirito d'avventura", [
            "adventurous", "daring", "aventurero", "aventurera", "aventureux", "aventureuse", "abenteuerlustig", "avventuroso", "avventurosa",
        ]),
        trait("friendly", "simpatía", "son sens de l'amitié", "die Herzlichkeit", "della sua simpatia", [
            "friendly", "sociable", "outgoing", "simpático", "simpática", "amistoso", "amistosa", "amical", "amicale", "herzlich",
            "gesellig", "simpatico", "simpatica", "amichevole", "socievole",
        ]),
        trait("helpful", "deseo de ayudar", "son envie d'aider", "die Hilfsbereitschaft", "della sua voglia di aiutare", [
            "helpful", "servicial", "serviable", "hilfsbereit", "disponibile", "premuroso", "premurosa",
        ]),
        trait("caring", "cariño", "sa tendresse", "die Fürsorglichkeit", "del suo affetto", [
            "caring", "loving", "affectionate", "cariñoso", "cariñosa", "afectuoso", "afectuosa", "affectueux", "affectueuse", "tendre",
            "liebevoll", "fürsorglich", "affettuoso", "affettuosa",
        ]),
        trait("generous", "generosidad", "sa générosité", "die Großzügigkeit", "della sua generosità", [
            "generous", "sharing", "generoso", "generosa", "généreux", "généreuse", "großzügig", "grosszügig",
        ]),
        trait("patient", "paciencia", "sa patience", "die Geduld", "della sua pazienza", [
            "patient", "paciente", "patiente", "geduldig", "paziente",
        ]),
        trait("calm", "calma", "son calme", "die Ruhe", "della sua calma", [
            "calm", "quiet", "peaceful", "tranquilo", "tranquila", "sereno", "serena", "calme", "tranquille", "ruhig", "still", "calmo",
            "calma", "tranquillo", "tranquilla",
        ]),
        trait("shy", "timidez", "sa timidité", "die Schüchternheit", "della sua timidezza", [
            "shy", "timid", "tímido", "tímida", "timide", "schüchtern", "timido", "timida",
        ]),
        trait("playful", "deseo de jugar", "son envie de jouer", "die Verspieltheit", "della sua voglia di giocare", [
            "playful", "energetic", "lively", "active", "juguetón", "juguetona", "enérgico", "enérgica", "joueur", "joueuse", "énergique",
            "verspielt", "lebhaft", "giocherellone", "giocherellona", "vivace", "energico", "energica",
        ]),
        trait("honest", "sinceridad", "sa franchise", "die Ehrlichkeit", "della sua sincerità", [
            "honest", "truthful", "sincero", "sincera", "honesto", "honesta", "honnête", "franc", "franche", "ehrlich", "onesto", "onesta",
        ]),
        trait("strong", "fuerza", "sa force", "die Stärke", "della sua forza", ["strong", "fuerte", "fort", "forte", "stark"]),
        trait("determined", "tenacidad", "sa détermination", "die Entschlossenheit", "della sua determinazione", [
            "determined", "persistent", "decidido", "decidida", "tenaz", "déterminé", "déterminée", "entschlossen", "determinato",
            "determinata",
        ]),
        trait("polite", "buena educación", "sa politesse", "die Höflichkeit", "della sua educazione", [
            "polite", "well-mannered", "educado", "educada", "poli", "polie", "höflich", "educato", "educata",
        ]),
        trait("musical", "amor por la música", "son amour de la musique", "die Liebe zur Musik", "del suo amore per la musica", [
            "musical", "musicale", "musikalisch", "musicien", "musicienne",
        ]),
        trait("sporty", "amor por el deporte", "son amour du sport", "die Sportlichkeit", "della sua passione per lo sport", [
            "sporty", "athletic", "deportista", "sportif", "sportive", "sportlich", "sportivo", "sportiva",
        ]),
    ]

    private static func trait(_ en: String, _ es: String, _ fr: String, _ de: String, _ it: String, _ spellings: [String]) -> Trait {
        Trait(forms: [.en: en, .es: es, .fr: fr, .de: de, .it: it], spellings: Set(spellings))
    }

    /// The dictionary entry for `text` (the whole trait, else one of its words), or `nil`.
    static func trait(for text: String) -> Trait? {
        let lowered = text.lowercased().trimmingCharacters(in: .whitespacesAndNewlines)
        if let entry = traits.first(where: { $0.spellings.contains(lowered) }) { return entry }
        let words = lowered.split(whereSeparator: { !$0.isLetter && $0 != "-" }).map(String.init)
        return traits.first { entry in words.contains(where: entry.spellings.contains) }
    }

    /// Event tones: English words → Spanish (after "un cuento"), French (after "une histoire"), German (between "eine"
    /// and "Gutenachtgeschichte"), Italian (after "una storia").
    static let tones: [(words: Set<String>, forms: [StoryLanguage: String])] = [
        (["gentle", "tender", "soft"], [.es: "tierno", .fr: "douce", .de: "sanfte", .it: "delicata"]),
        (["warm", "heartwarming", "loving", "cozy", "cosy"], [.es: "entrañable", .fr: "chaleureuse", .de: "warmherzige", .it: "affettuosa"]),
        (["calm", "soothing", "peaceful", "relaxing", "quiet"], [.es: "tranquilo", .fr: "apaisante", .de: "ruhige", .it: "tranquilla"]),
        (["funny", "playful", "silly", "humorous"], [.es: "divertido", .fr: "amusante", .de: "lustige", .it: "divertente"]),
        (["magical", "whimsical", "enchanting"], [.es: "mágico", .fr: "magique", .de: "zauberhafte", .it: "magica"]),
        (["adventurous", "exciting"], [.es: "aventurero", .fr: "aventureuse", .de: "abenteuerliche", .it: "avventurosa"]),
        (["cheerful", "happy", "joyful", "uplifting"], [.es: "alegre", .fr: "joyeuse", .de: "fröhliche", .it: "allegra"]),
        (["educational", "informative"], [.es: "educativo", .fr: "instructive", .de: "lehrreiche", .it: "educativa"]),
    ]

    /// `tone` in `language` (as given in English), or `nil` when the dictionary does not know it.
    static func tone(_ tone: String, language: StoryLanguage) -> String? {
        if language == .en { return tone }
        let lowered = tone.lowercased().trimmingCharacters(in: .whitespaces)
        return tones.first { $0.words.contains(lowered) }?.forms[language]
    }

    /// What the story says about `event` (`Title: prompt seed`, as the product sends it) in `language`: the title to
    /// name and the seed as a sentence about `hero`; `nil` when the event is neither one of the product's own nor
    /// written in `language` (the story then tells of "a special day" without pasting it).
    static func event(_ event: String, hero: String, language: StoryLanguage) -> (title: String, seed: String)? {
        let trimmed = event.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        let parts = trimmed.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        let title = parts[0]
        let seed = parts.count > 1 ? parts[1] : ""
        if let known = StoryEventCatalog.all.first(where: { entry in
            StoryLanguage.allCases.contains { entry.title($0).caseInsensitiveCompare(title) == .orderedSame || (!seed.isEmpty && entry.promptSeed($0) == seed) }
        }) {
            let localTitle = known.title(language)
            return (localTitle.prefix(1).lowercased() + localTitle.dropFirst(), heroed(known.promptSeed(language), hero: hero, language: language))
        }
        guard SandboxSummaryWords(texts: [trimmed]).language == language else { return nil }
        return (title, seed.isEmpty ? "" : heroed(seed, hero: hero, language: language))
    }

    /// `seed` with "the hero" (in `language`) replaced by the hero's name, ending in sentence punctuation.
    static func heroed(_ seed: String, hero: String, language: StoryLanguage) -> String {
        let replacements: [(String, String)] =
            switch language {
            case .en: [("The hero's ", "\(hero)'s "), ("the hero's ", "\(hero)'s "), ("The hero ", "\(hero) "), ("the hero ", "\(hero) ")]
            case .es: [("Al héroe ", "A \(hero) "), ("al héroe ", "a \(hero) "), ("del héroe", "de \(hero)"), ("El héroe ", "\(hero) "), ("el héroe ", "\(hero) ")]
            case .fr: [("du héros", "de \(hero)"), ("Le héros ", "\(hero) "), ("le héros ", "\(hero) ")]
            case .de: [("des Helden", "von \(hero)"), ("Der Held ", "\(hero) "), ("der Held ", "\(hero) ")]
            case .it: [("Al nostro eroe ", "A \(hero) "), ("al nostro eroe ", "a \(hero) "), ("dell'eroe", "di \(hero)"), ("L'eroe ", "\(hero) "), ("l'eroe ", "\(hero) ")]
            }
        var text = seed
        for (from, to) in replacements { text = text.replacingOccurrences(of: from, with: to) }
        guard let last = text.last else { return text }
        return ".!?…".contains(last) ? text : text + "."
    }
}
