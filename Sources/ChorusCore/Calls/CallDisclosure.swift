import Foundation

/// The languages calls are placed in: the scenario's language decides the disclosure's and the AI's.
public enum CallLanguage: String, Sendable, Codable, CaseIterable {
    case english = "en"
    case spanish = "es"
    case french = "fr"
    case german = "de"
    case italian = "it"

    /// Frequent function words of each language: a persona's language is the one whose words it uses most.
    static let markers: [CallLanguage: Set<String>] = [
        .english: ["the", "and", "you", "are", "is", "your", "to", "of", "with", "who", "what", "this", "that", "be", "for", "it"],
        .spanish: ["el", "la", "los", "las", "y", "que", "eres", "es", "tu", "un", "una", "con", "para", "por", "del", "muy", "pero"],
        .french: ["le", "la", "les", "et", "tu", "vous", "est", "es", "un", "une", "avec", "pour", "des", "du", "qui", "que", "pas"],
        .german: ["der", "die", "das", "und", "du", "sie", "ist", "bist", "ein", "eine", "mit", "für", "nicht", "zu", "den", "dem"],
        .italian: ["il", "lo", "la", "gli", "e", "che", "sei", "è", "un", "una", "con", "per", "del", "della", "non", "di", "tu"],
    ]

    /// The language a persona text is written in: the one with the most of its function words (English on a tie or
    /// when none is found, as the built-in scenarios are English).
    public static func detect(_ text: String) -> CallLanguage {
        var counts: [CallLanguage: Int] = [:]
        let words = text.lowercased().split(whereSeparator: { !$0.isLetter && $0 != "'" })
        for word in words.prefix(400) {
            let word = String(word)
            for (language, markers) in markers where markers.contains(word) { counts[language, default: 0] += 1 }
        }
        var best = CallLanguage.english
        var bestCount = counts[.english] ?? 0
        for language in CallLanguage.allCases where (counts[language] ?? 0) > bestCount {
            best = language
            bestCount = counts[language] ?? 0
        }
        return best
    }

    /// The language's English name, for instructions to the model.
    public var englishName: String {
        switch self {
        case .english: "English"
        case .spanish: "Spanish"
        case .french: "French"
        case .german: "German"
        case .italian: "Italian"
        }
    }
}

/// What every call says before its persona speaks (issue 17): that it is AI-generated, who it is from, and how to stop
/// further calls. The text is a template per language with the placeholder ``placeholder`` for the caller's first
/// name (or ``anonymousCaller`` in that language).
public struct CallDisclosure: Sendable, Equatable {
    /// Where the caller's first name goes in a template.
    public static let placeholder = "{caller}"
    /// The longest template accepted (about 15 seconds of speech).
    public static let maximumLength = 300

    /// The templates by language; a language without one uses English.
    public var templates: [CallLanguage: String]

    public init(templates: [CallLanguage: String] = CallDisclosure.defaultTemplates) {
        self.templates = templates
    }

    /// The built-in templates: short (about 7 seconds spoken), naming the stop word and the opt-out key.
    public static let defaultTemplates: [CallLanguage: String] = [
        .english:
            "This is an AI-generated call from Chorus on behalf of {caller}. Say stop, or press 9, at any time and you will not be called again.",
        .spanish:
            "Esta es una llamada generada por inteligencia artificial de Chorus en nombre de {caller}. Diga basta, o pulse 9, en cualquier momento y no volverá a recibir llamadas.",
        .french:
            "Ceci est un appel généré par une intelligence artificielle, passé par Chorus de la part de {caller}. Dites stop, ou appuyez sur 9, à tout moment et vous ne serez plus appelé.",
        .german:
            "Dies ist ein KI-generierter Anruf von Chorus im Auftrag von {caller}. Sagen Sie jederzeit Stopp, oder drücken Sie die 9, und Sie werden nicht mehr angerufen.",
        .italian:
            "Questa è una chiamata generata dall'intelligenza artificiale di Chorus per conto di {caller}. Dica basta, o prema 9, in qualsiasi momento e non sarà più chiamato.",
    ]

    /// Who the call is from when the caller gave no usable first name.
    public static func anonymousCaller(_ language: CallLanguage) -> String {
        switch language {
        case .english: "a user"
        case .spanish: "un usuario"
        case .french: "un utilisateur"
        case .german: "einem Nutzer"
        case .italian: "un utente"
        }
    }

    /// Checks a template: not empty, at most ``maximumLength`` characters, and no braces other than the placeholder.
    /// - Returns: the problem, or `nil` when the template is usable.
    public static func problem(in template: String) -> String? {
        let trimmed = template.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty { return "is empty" }
        if trimmed.count > maximumLength { return "is longer than \(maximumLength) characters" }
        let rest = trimmed.replacingOccurrences(of: placeholder, with: "")
        if rest.contains("{") || rest.contains("}") { return "may contain no braces other than the placeholder \(placeholder)" }
        return nil
    }

    /// The disclosure of a call in `language` from `callerName` (a first name from ``firstName(from:)``, or `nil`).
    public func text(language: CallLanguage, callerName: String?) -> String {
        let template = templates[language] ?? templates[.english] ?? Self.defaultTemplates[.english]!
        return template.trimmingCharacters(in: .whitespacesAndNewlines)
            .replacingOccurrences(of: Self.placeholder, with: callerName ?? Self.anonymousCaller(language))
    }

    /// A first name fit to be spoken on someone else's phone: the first word of `displayName` when it is 1 to 20
    /// letters (a hyphen or apostrophe inside allowed), capitalised; `nil` otherwise (an email address, digits, a
    /// phrase), so the disclosure says "a user" rather than whatever was typed.
    public static func firstName(from displayName: String?) -> String? {
        guard let word = displayName?.split(whereSeparator: { $0.isWhitespace }).first else { return nil }
        let name = String(word)
        guard (1...20).contains(name.count), name.first?.isLetter == true, name.last?.isLetter == true,
            name.allSatisfy({ $0.isLetter || $0 == "-" || $0 == "'" })
        else { return nil }
        return name.prefix(1).uppercased() + name.dropFirst()
    }

    /// The `response.create` instructions that make the model say `text` word for word as its first response.
    public static func speakInstructions(_ text: String, language: CallLanguage) -> String {
        """
        Before the conversation starts, say exactly the words between the quotation marks « », in \(language.englishName), \
        in a calm and clear voice, and nothing else: no greeting, no introduction, no comment. «\(text)»
        """
    }
}

/// How a callee stops further calls (issue 17): the Realtime function tool the model calls when they say so, the key
/// they may press, and what the model says afterwards.
public enum CallOptOut {
    /// The key that opts out (Twilio Media Streams `dtmf` event); the default disclosures name it.
    public static let key = "9"

    /// How the callee opted out.
    public enum Source: String, Sendable, Codable, CaseIterable {
        case speech
        case key
    }

    /// The function tool's name.
    public static let toolName = "opt_out"

    /// The function tool's description: when to call it, with example phrases in every call language.
    public static let toolDescription = """
        Call this at once when the person you called says, in any language, that they do not want these calls: that \
        you should stop, stop calling, not call again, take them off the list or remove their number, or that they \
        did not agree to be called. Examples: "stop", "stop calling me", "don't call me again", "remove my number", \
        "basta", "no me llames más", "arrête de m'appeler", "ne m'appelez plus", "hör auf", "rufen Sie mich nicht mehr an", \
        "non chiamarmi più", "smettila di chiamarmi". Do not call it for an ordinary goodbye or when they only want to \
        end this call.
        """

    /// The tool's parameters (JSON Schema, as JSON text): none.
    public static let toolParameters = #"{"type":"object","properties":{},"additionalProperties":false}"#

    /// The `function_call_output` the bridge returns for the tool call.
    public static let toolOutput = #"{"opted_out":true}"#

    /// What the session instructions say about the `opt_out` tool.
    public static let sessionRule = """
        If the person says, at any point and in any language, that they do not want to be called, call the opt_out \
        function at once instead of answering.
        """

    /// What the session instructions say about the disclosure, when calls open with one.
    public static let disclosureRule = """
        The call opens with a short disclosure, spoken in your voice, that it is an AI-generated call and that the \
        person can say stop or press 9 to never be called again; do not repeat it, start in character after it.
        """

    /// The `response.create` instructions of the goodbye after an opt-out.
    public static func goodbyeInstructions(language: CallLanguage) -> String {
        """
        The person has asked not to be called again, and their number is now on the do-not-call list. Step out of your \
        persona. In \(language.englishName), in one or two short sentences, confirm that they will not be called again, \
        apologise for the disturbance and say goodbye. Do not ask anything and do not call any function.
        """
    }

    /// The longest the goodbye may take before the call is hung up anyway.
    public static let goodbyeLimitMilliseconds = 10_000
}
