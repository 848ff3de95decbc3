import Foundation

/// Why a message needs a parent's attention now (PRD US-5 and US-10: medical, schedule changes, safety).
public enum UrgencyCategory: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    case medical
    case schedule
    case safety
}

/// The verdict on one message.
public struct UrgencyAssessment: Sendable, Equatable {
    public var isUrgent: Bool { !categories.isEmpty }
    /// Every category at least one phrase matched.
    public var categories: Set<UrgencyCategory>
    /// The policy's phrases found in the message, in the order they first occur, each once.
    public var matched: [String]

    public init(categories: Set<UrgencyCategory>, matched: [String]) {
        self.categories = categories
        self.matched = matched
    }

    /// Nothing urgent.
    public static let notUrgent = UrgencyAssessment(categories: [], matched: [])
}

/// One word or phrase that makes a message urgent.
public struct UrgencyRule: Sendable, Equatable, Hashable {
    /// As written in the policy (reported in ``UrgencyAssessment/matched``).
    public var phrase: String
    public var category: UrgencyCategory
    /// Match the letters' case too: for acronyms that are ordinary words in lower case (`ER` versus German `er`).
    public var caseSensitive: Bool

    public init(_ phrase: String, _ category: UrgencyCategory, caseSensitive: Bool = false) {
        self.phrase = phrase
        self.category = category
        self.caseSensitive = caseSensitive
    }
}

/// Flags urgent messages by keywords, used when no summary model is configured to judge urgency.
///
/// Matching is by whole words and phrases, ignoring case (unless the rule says otherwise) and diacritics: the text
/// and every phrase are split into words at anything that is not a letter or a digit (so `can't`, `can’t` and
/// `can t` are the same three-word sequence, `pick-up` is `pick up`), accents are removed (`hôpital` = `hopital`,
/// `ß` = `ss`), and a phrase matches where its words appear consecutively. `ER` therefore never matches `her`, and
/// only in capitals, since `er` is German for "he".
///
/// The ``standard`` lists (English, Spanish, French, German, Italian) avoid words whose everyday meaning in a family
/// chat is not urgent: bare "lost" / "perdido" / "perdu" / "verloren" / "perso" (a lost match), bare "missing"
/// (a missing sock), "doctor" (appointments), "sick of". Every list applies to every message (families mix
/// languages), so no entry may be an ordinary word in another of the five languages (German "Brand" is English
/// "brand"; lower-case "er" is German "he").
public struct UrgencyPolicy: Sendable {
    public let rules: [UrgencyRule]
    private let compiled: [(rule: UrgencyRule, words: [String])]

    public init(rules: [UrgencyRule]) {
        self.rules = rules
        self.compiled = rules.compactMap { rule in
            let words = Self.words(in: rule.phrase, lowercased: !rule.caseSensitive)
            return words.isEmpty ? nil : (rule, words)
        }
    }

    /// The built-in lists in five languages.
    public static let standard = UrgencyPolicy(rules: english + spanish + french + german + italian)

    /// Which rules the message matches.
    public func assess(_ text: String) -> UrgencyAssessment {
        let exact = Self.words(in: text, lowercased: false)
        let lower = exact.map { $0.lowercased() }
        var hits: [(position: Int, rule: UrgencyRule)] = []
        for (rule, words) in compiled {
            if let position = Self.firstOccurrence(of: words, in: rule.caseSensitive ? exact : lower) {
                hits.append((position, rule))
            }
        }
        hits.sort { $0.position < $1.position }
        var matched: [String] = []
        for hit in hits where !matched.contains(hit.rule.phrase) { matched.append(hit.rule.phrase) }
        return UrgencyAssessment(categories: Set(hits.map(\.rule.category)), matched: matched)
    }

    /// The words of `text` with diacritics removed, split at every character that is not a letter or digit.
    static func words(in text: String, lowercased: Bool) -> [String] {
        var folded = String.UnicodeScalarView()
        for scalar in text.replacingOccurrences(of: "ß", with: "ss").decomposedStringWithCanonicalMapping.unicodeScalars
        where scalar.properties.generalCategory != .nonspacingMark {
            folded.append(scalar)
        }
        let words = String(folded).split { !($0.isLetter || $0.isNumber) }.map(String.init)
        return lowercased ? words.map { $0.lowercased() } : words
    }

    private static func firstOccurrence(of phrase: [String], in words: [String]) -> Int? {
        guard phrase.count <= words.count else { return nil }
        return (0...(words.count - phrase.count)).first { start in
            phrase.indices.allSatisfy { words[start + $0] == phrase[$0] }
        }
    }

    private static func rules(_ category: UrgencyCategory, _ phrases: [String]) -> [UrgencyRule] {
        phrases.map { UrgencyRule($0, category) }
    }

    static let english: [UrgencyRule] =
        [UrgencyRule("ER", .medical, caseSensitive: true)]
        + rules(
            .medical,
            [
                "hospital", "emergency room", "urgent care", "fever", "injured", "injury", "allergic reaction", "anaphylaxis",
                "epipen", "ambulance", "paramedics", "bleeding", "stitches", "broken arm", "broken leg", "broken bone",
                "concussion", "seizure", "unconscious", "passed out", "fainted", "can't breathe", "chest pain",
                "asthma attack", "poison control", "throwing up", "vomiting",
            ])
        + rules(
            .schedule,
            [
                "cancelled", "canceled", "cancellation", "postponed", "rescheduled", "moved to", "changed to",
                "pick up changed", "pickup changed", "pickup time changed", "pick up time changed", "new pickup time",
                "running late", "running behind", "going to be late", "gonna be late", "will be late", "early dismissal",
                "early pickup", "school closed", "no school", "change of plans", "rained out", "called off",
            ])
        + rules(
            .safety,
            [
                "emergency", "urgent", "asap", "911", "got lost", "is lost", "are lost", "lost child", "went missing",
                "gone missing", "is missing",
                "accident", "car crash", "police", "can't find", "cannot find", "can not find", "stranger", "lockdown",
                "evacuated", "fire",
            ])

    static let spanish: [UrgencyRule] =
        rules(
            .medical,
            [
                "hospital", "urgencias", "fiebre", "herido", "herida", "lesionado", "lesionada", "reacción alérgica",
                "ambulancia", "sangrando", "convulsión", "se desmayó", "inconsciente", "no puede respirar", "vomitando",
            ])
        + rules(
            .schedule,
            [
                "cancelado", "cancelada", "cancelados", "canceladas", "suspendido", "suspendida", "aplazado", "aplazada",
                "pospuesto", "pospuesta", "reprogramado", "reprogramada", "cambio de hora", "cambio de horario",
                "se cambió a", "llego tarde", "voy tarde", "vamos tarde", "cambio de planes", "no hay clases",
                "no hay colegio",
            ])
        + rules(
            .safety,
            [
                "emergencia", "urgente", "se perdió", "se ha perdido", "está perdido", "está perdida", "desaparecido",
                "desaparecida", "accidente", "policía", "no encuentro", "no puedo encontrar", "peligro", "incendio",
            ])

    static let french: [UrgencyRule] =
        rules(
            .medical,
            [
                "hôpital", "urgences", "fièvre", "blessé", "blessée", "blessés", "réaction allergique", "ambulance", "samu",
                "saigne", "convulsions", "s'est évanoui", "s'est évanouie", "inconscient", "crise d'asthme",
            ])
        + rules(
            .schedule,
            [
                "annulé", "annulée", "annulés", "annulées", "reporté", "reportée", "déplacé à", "déplacée à", "en retard",
                "changement d'horaire", "changement de programme", "pas d'école", "pas de cours",
            ])
        + rules(
            .safety,
            [
                "urgence", "urgent", "s'est perdu", "s'est perdue", "est perdu", "est perdue", "disparu", "disparue",
                "accident", "police", "gendarmerie", "je ne trouve pas", "je trouve pas", "introuvable", "danger",
                "incendie",
            ])

    static let german: [UrgencyRule] =
        rules(
            .medical,
            [
                "Krankenhaus", "Notaufnahme", "Fieber", "verletzt", "allergische Reaktion", "Krankenwagen", "Rettungswagen",
                "Notarzt", "blutet", "ohnmächtig", "bewusstlos", "Krampfanfall", "Asthmaanfall",
            ])
        + rules(
            .schedule,
            [
                "abgesagt", "verschoben", "verlegt auf", "verlegt nach", "fällt aus", "faellt aus", "verspäte mich",
                "komme später", "Verspätung", "zu spät", "Planänderung", "schulfrei", "kein Training",
            ])
        + rules(
            .safety,
            [
                "Notfall", "dringend", "hat sich verlaufen", "vermisst", "verschwunden", "Unfall", "Polizei",
                "finde nicht", "kann nicht finden", "nicht auffindbar", "Gefahr", "Feuer",
            ])

    static let italian: [UrgencyRule] =
        rules(
            .medical,
            [
                "ospedale", "pronto soccorso", "febbre", "ferito", "ferita", "reazione allergica", "ambulanza", "sanguina",
                "svenuto", "svenuta", "convulsioni", "non respira",
            ])
        + rules(
            .schedule,
            [
                "annullato", "annullata", "annullati", "cancellato", "cancellata", "rinviato", "rinviata", "rimandato",
                "rimandata", "spostato", "spostata", "in ritardo", "cambio di orario", "cambio di programma",
                "niente scuola",
            ])
        + rules(
            .safety,
            [
                "emergenza", "urgente", "si è perso", "si è persa", "smarrito", "smarrita", "scomparso", "scomparsa",
                "incidente", "polizia", "carabinieri", "non trovo", "non riesco a trovare", "pericolo", "incendio",
            ])
}
