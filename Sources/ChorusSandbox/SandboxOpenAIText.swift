import ChorusCore
import Foundation

/// Sentence and word helpers of the OpenAI emulator.
enum SandboxText {
    /// Words ending in a period that do not end a sentence.
    private static let abbreviations: Set<String> = ["mr", "mrs", "ms", "dr", "st", "vs", "e.g", "i.e", "a.m", "p.m", "etc", "approx"]

    /// The sentences of `text`: cut after `.`, `!` or `?` followed by white space (not after common abbreviations) and
    /// at line breaks; trimmed, empty ones dropped.
    static func sentences(in text: String) -> [String] {
        var sentences: [String] = []
        var current = ""
        let characters = Array(text)
        for (index, character) in characters.enumerated() {
            if character.isNewline {
                flush(&current, into: &sentences)
                continue
            }
            current.append(character)
            guard ".!?".contains(character) else { continue }
            let next = index + 1 < characters.count ? characters[index + 1] : " "
            guard next.isWhitespace else { continue }
            let lastWord = current.split(whereSeparator: \.isWhitespace).last.map { $0.dropLast().lowercased() } ?? ""
            if character == ".", abbreviations.contains(lastWord) { continue }
            flush(&current, into: &sentences)
        }
        flush(&current, into: &sentences)
        return sentences
    }

    private static func flush(_ current: inout String, into sentences: inout [String]) {
        let sentence = current.trimmingCharacters(in: .whitespaces)
        if !sentence.isEmpty { sentences.append(sentence) }
        current = ""
    }

    /// Lowercased text with typographic apostrophes made plain.
    static func normalized(_ text: String) -> String {
        text.lowercased().replacingOccurrences(of: "\u{2019}", with: "'")
    }

    /// Whether normalized `text` contains `phrase` as whole words.
    static func contains(_ text: String, phrase: String) -> Bool {
        var searchRange = text.startIndex..<text.endIndex
        while let found = text.range(of: phrase, range: searchRange) {
            let before = found.lowerBound == text.startIndex ? nil : text[text.index(before: found.lowerBound)]
            let after = found.upperBound == text.endIndex ? nil : text[found.upperBound]
            let isWordCharacter = { (character: Character?) in character.map { $0.isLetter || $0.isNumber || $0 == "'" } ?? false }
            if !isWordCharacter(before), !isWordCharacter(after) { return true }
            searchRange = found.upperBound..<text.endIndex
        }
        return false
    }

    /// `A`, `A and B`, `A, B and C`.
    static func list(_ items: [String]) -> String {
        guard items.count > 1, let last = items.last else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " and " + last
    }

    /// The first `limit` words of `text` (with an ellipsis when cut).
    static func prefix(_ text: String, words limit: Int) -> String {
        let words = text.split(separator: " ", omittingEmptySubsequences: true)
        guard words.count > limit else { return text }
        return words.prefix(limit).joined(separator: " ") + "…"
    }
}

/// What a sentence talks about, found from cue words.
enum SandboxCue: CaseIterable {
    /// "decided", "agreed", "we'll", "let's", …
    case decision
    /// "will", "can you", "please", "need to", …
    case action
    /// Weekdays, "tomorrow", "tonight", dates like 12/3, times like 5pm.
    case date
    /// "urgent", "asap", "hospital", "emergency", cancellations, …
    case urgent

    private var phrases: [String] {
        switch self {
        case .decision:
            [
                "decided", "decide", "agreed", "we agree", "we'll", "we will", "let's", "let us", "settled", "going with", "confirmed",
                "the plan is",
                // Spanish, French, German, Italian.
                "decidimos", "hemos decidido", "acordamos", "quedamos en", "décidé", "décidée", "on a décidé", "d'accord pour", "beschlossen",
                "entschieden", "abgemacht", "deciso", "abbiamo deciso", "d'accordo",
            ]
        case .action:
            [
                "will", "i'll", "you'll", "he'll", "she'll", "they'll", "can you", "could you", "would you", "please", "need to",
                "needs to", "have to", "has to", "must", "don't forget", "remember to", "make sure", "todo", "to-do",
                // Spanish, French, German, Italian.
                "puedes", "podrías", "por favor", "voy a", "tienes que", "hay que", "no olvides", "peux-tu", "pourrais-tu", "s'il te plaît",
                "je vais", "il faut", "n'oublie pas", "kannst du", "könntest du", "bitte", "ich werde", "muss", "vergiss nicht", "puoi",
                "potresti", "per favore", "devo", "bisogna", "non dimenticare",
            ]
        case .urgent:
            [
                "urgent", "urgently", "asap", "emergency", "hospital", "ambulance", "911", "immediately", "right away", "accident",
                "injured", "bleeding", "fever", "police", "fire", "cancelled", "canceled", "rescheduled", "postponed",
                // Spanish, French, German, Italian.
                "urgente", "urgencias", "hospital", "fiebre", "ambulancia", "cancelado", "cancelada", "urgence", "hôpital", "fièvre",
                "annulé", "annulée", "dringend", "notfall", "krankenhaus", "fieber", "krankenwagen", "abgesagt", "ospedale", "febbre",
                "pronto soccorso", "annullato", "annullata",
            ]
        case .date:
            []
        }
    }

    /// Whether `sentence` carries this cue.
    func matches(_ sentence: String) -> Bool {
        if self == .date { return SandboxDates.expression(in: sentence) != nil }
        let text = SandboxText.normalized(sentence)
        return phrases.contains { SandboxText.contains(text, phrase: $0) }
    }
}

/// Date and time expressions in free text.
enum SandboxDates {
    private static let weekdays = [
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "lunes", "martes", "miércoles", "jueves", "viernes",
        "sábado", "domingo", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche", "montag", "dienstag", "mittwoch",
        "donnerstag", "freitag", "samstag", "sonntag", "lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica",
    ]
    private static let relative: Set<String> = [
        "today", "tomorrow", "tonight", "weekend", "noon", "midnight", "yesterday", "mañana", "hoy", "demain", "aujourd'hui", "morgen",
        "heute", "domani", "oggi", "stasera",
    ]
    private static let months = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
    ]

    /// The date and time words of `sentence` in order (`Friday 5pm`, `tomorrow 7:30`, `12/3`), or `nil` without any.
    static func expression(in sentence: String) -> String? {
        let tokens = sentence.split(whereSeparator: \.isWhitespace).map {
            String($0).trimmingCharacters(in: CharacterSet(charactersIn: ".,!?;:()[]\"'\u{2019}"))
        }
        let lowered = tokens.map { $0.lowercased() }
        var picked = [Bool](repeating: false, count: tokens.count)
        for (index, word) in lowered.enumerated() where !word.isEmpty {
            let next = index + 1 < lowered.count ? lowered[index + 1] : ""
            if weekdays.contains(where: { word == $0 || word == $0 + "s" }) || relative.contains(word) {
                picked[index] = true
                if index > 0, lowered[index - 1] == "next" || lowered[index - 1] == "this" { picked[index - 1] = true }
            } else if word == "week" || word == "month", index > 0, lowered[index - 1] == "next" {
                picked[index - 1] = true
                picked[index] = true
            } else if months.contains(word) || months.contains(where: { $0.prefix(3) == word }) {
                if day(next) { picked[index] = true; picked[index + 1] = true }
                if index > 0, day(lowered[index - 1]) { picked[index] = true; picked[index - 1] = true }
            } else if isNumericDate(word) || isTime(word) {
                picked[index] = true
            } else if isHour(word), ["am", "pm", "a.m", "p.m", "o'clock"].contains(next) {
                picked[index] = true
                picked[index + 1] = true
            }
        }
        let words = zip(tokens, picked).filter(\.1).map(\.0)
        return words.isEmpty ? nil : words.joined(separator: " ")
    }

    /// `3`, `21st`, `3rd`: a day of the month.
    private static func day(_ word: String) -> Bool {
        let digits = word.prefix { $0.isNumber }
        let suffix = word.dropFirst(digits.count)
        guard let value = Int(digits), (1...31).contains(value) else { return false }
        return suffix.isEmpty || ["st", "nd", "rd", "th"].contains(String(suffix))
    }

    /// `12/3`, `12/03/2026`.
    private static func isNumericDate(_ word: String) -> Bool {
        let parts = word.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) }) else { return false }
        guard let first = Int(parts[0]), let second = Int(parts[1]) else { return false }
        return (1...31).contains(first) && (1...31).contains(second) && (parts.count == 2 || [2, 4].contains(parts[2].count))
    }

    /// `5pm`, `10am`, `7:30`, `7:30pm`.
    private static func isTime(_ word: String) -> Bool {
        var core = Substring(word)
        var meridiem = false
        for suffix in ["am", "pm"] where core.hasSuffix(suffix) {
            core = core.dropLast(2)
            meridiem = true
        }
        let parts = core.split(separator: ":", omittingEmptySubsequences: false)
        guard let hour = Int(parts[0]), parts[0].allSatisfy(\.isNumber), (0...23).contains(hour) else { return false }
        if parts.count == 1 { return meridiem && (1...12).contains(hour) }
        guard parts.count == 2, parts[1].count == 2, let minute = Int(parts[1]), (0...59).contains(minute) else { return false }
        return true
    }

    private static func isHour(_ word: String) -> Bool {
        guard let hour = Int(word), word.allSatisfy(\.isNumber) else { return word.contains(":") && isTime(word) }
        return (1...12).contains(hour)
    }
}

/// A conversation as the chat emulator reads it from the user messages: lines, optionally `Name: text`.
struct SandboxThread {
    /// One line of the thread.
    struct Line {
        let sender: String?
        let text: String
        let sentences: [String]
        /// Flagged `[urgent]` after the sender's name (the product's summary prompt marks urgent messages so).
        var flagged = false
    }

    /// One sentence that matched a cue, with what an item built from it needs.
    struct Match {
        let sentence: String
        let sender: String?
        /// Who is to act: a sender addressed by name at the start (`Sam, can you…`), else the line's sender.
        let owner: String?
        let date: String?
        let urgent: Bool
    }

    let lines: [Line]
    /// The senders in order of first appearance.
    let senders: [String]

    /// Header labels of a prompt that are not senders (`Current time: …`).
    private static let headerLabels: Set<String> = [
        "current time", "time", "time zone", "timezone", "date", "today", "now", "subject", "topic", "context", "note", "notes",
        "instructions", "summary", "language", "conversation", "thread", "messages",
    ]

    /// Parses `text`. When it holds a block between `<<<MESSAGES` and `MESSAGES>>>` lines (the product's summary
    /// prompt), only the lines inside are the thread. When some lines look like `Name: text`, only those lines are the
    /// thread (a prompt's own lines, such as "Summarize this conversation:" or "Current time: …", are not); otherwise
    /// every non-empty line is.
    init(_ text: String) {
        var rawLines = text.components(separatedBy: .newlines)
        var inside: [String] = []
        var open = false
        for raw in rawLines {
            let trimmed = raw.trimmingCharacters(in: .whitespaces)
            if trimmed == "<<<MESSAGES" { open = true; continue }
            if trimmed == "MESSAGES>>>" { open = false; continue }
            if open { inside.append(raw) }
        }
        if !inside.isEmpty { rawLines = inside }
        var parsed: [Line] = []
        for raw in rawLines {
            let line = Self.stripped(raw)
            guard !line.isEmpty else { continue }
            var (sender, body) = Self.splitSender(line)
            var flagged = false
            if let name = sender, name.lowercased().hasSuffix("[urgent]") {
                sender = String(name.dropLast("[urgent]".count)).trimmingCharacters(in: .whitespaces)
                flagged = true
            }
            if let name = sender, Self.headerLabels.contains(name.lowercased()) { continue }
            parsed.append(Line(sender: sender, text: body, sentences: SandboxText.sentences(in: body), flagged: flagged))
        }
        let withSenders = parsed.filter { $0.sender != nil }
        lines = withSenders.isEmpty ? parsed : withSenders
        var seen: [String] = []
        for line in lines { if let sender = line.sender, !seen.contains(sender) { seen.append(sender) } }
        senders = seen
    }

    /// Every sentence carrying `cue` (each at most once).
    func matches(_ cue: SandboxCue) -> [Match] {
        var result: [Match] = []
        for line in lines {
            for (index, sentence) in line.sentences.enumerated()
            where (cue.matches(sentence) || (cue == .urgent && index == 0 && line.flagged))
                && !result.contains(where: { $0.sentence == sentence })
            {
                result.append(match(sentence, in: line))
            }
        }
        return result
    }

    /// The first sentence of every line.
    func leadingSentences() -> [Match] {
        lines.compactMap { line in line.sentences.first.map { match($0, in: line) } }
    }

    /// Whether any sentence is urgent.
    var hasUrgent: Bool { !matches(.urgent).isEmpty }

    private func match(_ sentence: String, in line: Line) -> Match {
        var owner = line.sender
        if let comma = sentence.firstIndex(of: ",") {
            let addressed = sentence[..<comma].trimmingCharacters(in: .whitespaces)
            if let known = senders.first(where: { $0.caseInsensitiveCompare(addressed) == .orderedSame }) { owner = known }
        }
        return Match(
            sentence: sentence, sender: line.sender, owner: owner, date: SandboxDates.expression(in: sentence),
            urgent: line.flagged || SandboxCue.urgent.matches(sentence))
    }

    /// Without list markers (`- `, `* `, `• `) and leading bracketed stamps (`[10:02]`).
    private static func stripped(_ raw: String) -> String {
        var line = raw.trimmingCharacters(in: .whitespaces)
        for marker in ["- ", "* ", "• "] where line.hasPrefix(marker) { line = String(line.dropFirst(marker.count)) }
        while line.hasPrefix("["), let close = line.firstIndex(of: "]") {
            line = String(line[line.index(after: close)...]).trimmingCharacters(in: .whitespaces)
        }
        return line
    }

    /// `Mom: text` → (`Mom`, `text`); a sender is 1–40 characters, starts with a letter, has at most four words and no
    /// sentence punctuation. A trailing parenthetical (`Mom (10:02)`) is dropped.
    private static func splitSender(_ line: String) -> (String?, String) {
        guard let separator = line.range(of: ": ") else { return (nil, line) }
        var name = String(line[..<separator.lowerBound]).trimmingCharacters(in: .whitespaces)
        if name.hasSuffix(")"), let open = name.lastIndex(of: "(") {
            name = String(name[..<open]).trimmingCharacters(in: .whitespaces)
        }
        guard (1...40).contains(name.count), name.first?.isLetter == true,
            name.split(separator: " ").count <= 4, !name.contains(where: { ".!?\"".contains($0) })
        else { return (nil, line) }
        return (name, String(line[separator.upperBound...]).trimmingCharacters(in: .whitespaces))
    }
}

/// The language of a conversation, and the words a summary is framed with in it.
struct SandboxSummaryWords {
    let language: StoryLanguage

    /// Short words frequent in each language (a word may count for several).
    private static let markers: [StoryLanguage: Set<String>] = [
        .en: [
            "the", "and", "is", "are", "to", "of", "you", "i", "we", "it", "at", "on", "for", "can", "will", "my", "with", "be", "this",
            "that", "please", "tomorrow", "today", "tonight", "have", "what", "pick", "up",
        ],
        .es: [
            "el", "la", "los", "las", "y", "es", "de", "que", "en", "un", "una", "por", "para", "con", "mañana", "está", "puedes", "yo",
            "hoy", "del", "al", "se", "lo", "esta", "noche", "mi", "tu", "no",
        ],
        .fr: [
            "le", "la", "les", "et", "est", "de", "des", "un", "une", "je", "nous", "vous", "pour", "avec", "demain", "il", "elle", "au",
            "aux", "ce", "c", "l", "d", "qu", "ce", "soir", "pas", "ne", "du",
        ],
        .de: [
            "der", "die", "das", "und", "ist", "ich", "wir", "du", "nicht", "mit", "zu", "ein", "eine", "morgen", "heute", "bitte", "für",
            "auf", "den", "dem", "abend", "kannst", "um", "noch",
        ],
        .it: [
            "il", "lo", "la", "gli", "le", "e", "è", "di", "che", "un", "una", "per", "con", "domani", "oggi", "sono", "non", "noi", "io",
            "alle", "del", "della", "stasera", "puoi", "ci",
        ],
    ]

    /// The language most of `texts` is written in, by its frequent short words; English when none stands out.
    init(texts: [String]) {
        var scores: [StoryLanguage: Int] = [:]
        for text in texts {
            for word in text.lowercased().split(whereSeparator: { !$0.isLetter }) {
                for (language, words) in Self.markers where words.contains(String(word)) { scores[language, default: 0] += 1 }
            }
        }
        let best = StoryLanguage.allCases.max { (scores[$0] ?? 0) < (scores[$1] ?? 0) } ?? .en
        language = (scores[best] ?? 0) > (scores[.en] ?? 0) ? best : .en
    }

    /// `A`, `A and B`, `A, B and C` in the language.
    func list(_ items: [String]) -> String {
        guard items.count > 1, let last = items.last else { return items.first ?? "" }
        let and = [StoryLanguage.en: "and", .es: "y", .fr: "et", .de: "und", .it: "e"][language] ?? "and"
        return items.dropLast().joined(separator: ", ") + " \(and) " + last
    }

    /// "3 messages from Mom and Dad."
    func count(_ count: Int, from senders: [String]) -> String {
        let who = list(senders)
        let one = count == 1
        return switch language {
        case .en: "\(count) message\(one ? "" : "s") from \(who)."
        case .es: "\(count) mensaje\(one ? "" : "s") de \(who)."
        case .fr: "\(count) message\(one ? "" : "s") de \(who)."
        case .de: "\(count) \(one ? "Nachricht" : "Nachrichten") von \(who)."
        case .it: "\(count) \(one ? "messaggio" : "messaggi") da \(who)."
        }
    }

    /// "Urgent, from Grandma:" (or "Urgent:" without a sender).
    func urgent(from sender: String?) -> String {
        let (word, from): (String, String) =
            switch language {
            case .en: ("Urgent", "from")
            case .es: ("Urgente", "de")
            case .fr: ("Urgent", "de la part de")
            case .de: ("Dringend", "von")
            case .it: ("Urgente", "da")
            }
        let colon = language == .fr ? " :" : ":"
        return sender.map { "\(word), \(from) \($0)\(colon)" } ?? word + colon
    }

    /// "Mom:" ("Maman :" in French).
    func said(_ sender: String) -> String { language == .fr ? "\(sender) :" : "\(sender):" }

    /// The opening of a text-mode summary.
    var opening: String {
        switch language {
        case .en: "Here is a summary."
        case .es: "Aquí tienes un resumen."
        case .fr: "Voici un résumé."
        case .de: "Hier ist eine Zusammenfassung."
        case .it: "Ecco un riassunto."
        }
    }

    /// Section titles of a text-mode summary: decisions, action items, dates, urgent.
    var sections: (decisions: String, actions: String, dates: String, urgent: String) {
        switch language {
        case .en: ("Decisions", "Action items", "Dates", "Urgent")
        case .es: ("Decisiones", "Tareas", "Fechas", "Urgente")
        case .fr: ("Décisions", "À faire", "Dates", "Urgent")
        case .de: ("Entscheidungen", "Aufgaben", "Termine", "Dringend")
        case .it: ("Decisioni", "Cose da fare", "Date", "Urgente")
        }
    }
}
