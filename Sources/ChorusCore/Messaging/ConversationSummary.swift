import Foundation

/// The structured summary of a conversation (PRD Option B): what the model returns through structured output, and
/// what the narrator reads.
public struct ConversationSummary: Sendable, Equatable, Codable {
    /// Something someone agreed to do.
    public struct ActionItem: Sendable, Equatable, Codable {
        /// Who does it, by the name used in the conversation; empty when nobody took it on.
        public var owner: String
        /// What to do, as a verb phrase ("bring the snacks").
        public var task: String
        /// When it is due, as said ("Friday", "tomorrow at 5 pm"), or `nil`.
        public var due: String?

        public init(owner: String, task: String, due: String? = nil) {
            self.owner = owner
            self.task = task
            self.due = due
        }
    }

    /// A date or time mentioned, and what happens then.
    public struct DateItem: Sendable, Equatable, Codable {
        /// The date or time in words ("Saturday at 9 am").
        public var date: String
        /// What happens ("the soccer game at Lincoln Park").
        public var what: String

        public init(date: String, what: String) {
            self.date = date
            self.what = what
        }
    }

    /// Two or three sentences on what the conversation was about.
    public var overview: String
    public var decisions: [String]
    public var actionItems: [ActionItem]
    public var dates: [DateItem]
    /// Medical, schedule-change and safety information, most important first.
    public var urgentItems: [String]

    public init(overview: String, decisions: [String], actionItems: [ActionItem], dates: [DateItem], urgentItems: [String]) {
        self.overview = overview
        self.decisions = decisions
        self.actionItems = actionItems
        self.dates = dates
        self.urgentItems = urgentItems
    }

    enum CodingKeys: String, CodingKey {
        case overview, decisions, dates
        case actionItems = "action_items"
        case urgentItems = "urgent_items"
    }

    /// The structured-output name (`[a-zA-Z0-9_-]{1,64}`).
    public static let schemaName = "conversation_summary"

    /// The JSON Schema of a summary for OpenAI strict structured output: every property required,
    /// `additionalProperties: false` on every object, the optional due date as `["string", "null"]`.
    public static let jsonSchema = """
        {
          "type": "object",
          "properties": {
            "overview": {
              "type": "string",
              "description": "Two or three short sentences on what the conversation was about."
            },
            "decisions": {
              "type": "array",
              "description": "Decisions the group made, one short sentence each.",
              "items": { "type": "string" }
            },
            "action_items": {
              "type": "array",
              "description": "Tasks someone agreed to do.",
              "items": {
                "type": "object",
                "properties": {
                  "owner": { "type": "string", "description": "The person's name as used in the chat; empty if nobody took it on." },
                  "task": { "type": "string", "description": "What to do, as a verb phrase, for example: bring the snacks." },
                  "due": { "type": ["string", "null"], "description": "When, in words, or null." }
                },
                "required": ["owner", "task", "due"],
                "additionalProperties": false
              }
            },
            "dates": {
              "type": "array",
              "description": "Dates and times mentioned, with what happens then.",
              "items": {
                "type": "object",
                "properties": {
                  "date": { "type": "string", "description": "The date or time in words, for example: Saturday at 9 am." },
                  "what": { "type": "string", "description": "What happens then." }
                },
                "required": ["date", "what"],
                "additionalProperties": false
              }
            },
            "urgent_items": {
              "type": "array",
              "description": "Medical, schedule-change and safety information, most important first.",
              "items": { "type": "string" }
            }
          },
          "required": ["overview", "decisions", "action_items", "dates", "urgent_items"],
          "additionalProperties": false
        }
        """

    /// Caps that a sane summary stays within; more means the model looped or ignored its instructions.
    public struct Limits: Sendable, Equatable {
        public var maxItemsPerList: Int
        public var maxOverviewCharacters: Int
        public var maxItemCharacters: Int

        public init(maxItemsPerList: Int = 20, maxOverviewCharacters: Int = 1_500, maxItemCharacters: Int = 400) {
            self.maxItemsPerList = maxItemsPerList
            self.maxOverviewCharacters = maxOverviewCharacters
            self.maxItemCharacters = maxItemCharacters
        }

        public static let standard = Limits()
    }

    /// Decodes the model's JSON answer and validates it.
    public static func decode(json: Data, limits: Limits = .standard) throws -> ConversationSummary {
        let summary: ConversationSummary
        do {
            summary = try JSONDecoder().decode(ConversationSummary.self, from: json)
        } catch {
            throw ConversationSummaryError.malformed(String(describing: error))
        }
        return try summary.validated(limits: limits)
    }

    /// The summary with every text trimmed and blank entries (blank tasks, dates, decisions) removed; throws when the
    /// overview is empty or a list or text exceeds `limits`.
    public func validated(limits: Limits = .standard) throws -> ConversationSummary {
        func clean(_ text: String) -> String { text.trimmingCharacters(in: .whitespacesAndNewlines) }
        func check(_ field: String, _ count: Int) throws {
            guard count <= limits.maxItemsPerList else {
                throw ConversationSummaryError.tooManyItems(field: field, count: count, limit: limits.maxItemsPerList)
            }
        }
        func checkLength(_ field: String, _ texts: [String]) throws {
            if texts.contains(where: { $0.count > limits.maxItemCharacters }) {
                throw ConversationSummaryError.textTooLong(field: field)
            }
        }
        let overview = clean(overview)
        guard !overview.isEmpty else { throw ConversationSummaryError.emptyOverview }
        guard overview.count <= limits.maxOverviewCharacters else { throw ConversationSummaryError.textTooLong(field: "overview") }
        let result = ConversationSummary(
            overview: overview, decisions: decisions.map(clean).filter { !$0.isEmpty },
            actionItems: actionItems.map {
                ActionItem(owner: clean($0.owner), task: clean($0.task), due: $0.due.map(clean).flatMap { $0.isEmpty ? nil : $0 })
            }
            .filter { !$0.task.isEmpty },
            dates: dates.map { DateItem(date: clean($0.date), what: clean($0.what)) }.filter { !$0.date.isEmpty && !$0.what.isEmpty },
            urgentItems: urgentItems.map(clean).filter { !$0.isEmpty })
        try check("decisions", result.decisions.count)
        try check("action_items", result.actionItems.count)
        try check("dates", result.dates.count)
        try check("urgent_items", result.urgentItems.count)
        try checkLength("decisions", result.decisions)
        try checkLength("action_items", result.actionItems.flatMap { [$0.owner, $0.task, $0.due ?? ""] })
        try checkLength("dates", result.dates.flatMap { [$0.date, $0.what] })
        try checkLength("urgent_items", result.urgentItems)
        return result
    }
}

/// Why a model's summary was not accepted.
public enum ConversationSummaryError: Error, Sendable, Equatable {
    /// Not JSON of the schema's shape.
    case malformed(String)
    case emptyOverview
    case tooManyItems(field: String, count: Int, limit: Int)
    case textTooLong(field: String)
}

// MARK: - Narration

extension ConversationSummary {
    /// The summary as text written for listening, in at most `maxWords` words (PRD: ≤ 300 words, 2–3 minutes).
    ///
    /// Urgent items come first, then the overview, decisions, action items ("Action items: Sam will bring the snacks
    /// by Friday.") and dates, each item its own short sentence. When everything does not fit, the longest of the
    /// decision, action-item and date lists loses items from its end first ("And 2 more dates."; a list cut to nothing
    /// becomes "There are 3 decisions in the written summary."), then urgent items down to the first; whatever still
    /// does not fit is cut at a word boundary.
    public func narration(maxWords: Int = 300) -> String {
        var sections = narrationSections()
        while Self.wordCount(Self.render(sections)) > maxWords {
            let lists = sections.indices.filter { sections[$0].isList && sections[$0].kept > 0 }
            let urgent = sections.indices.filter { !sections[$0].isList && sections[$0].kept > 1 }
            guard let index = lists.max(by: { (sections[$0].kept, $0) < (sections[$1].kept, $1) }) ?? urgent.first else { break }
            sections[index].kept -= 1
        }
        let text = Self.render(sections)
        let words = text.split(whereSeparator: \.isWhitespace)
        guard words.count > maxWords else { return text }
        return Self.sentence(words.prefix(maxWords).joined(separator: " "))
    }

    private struct Section {
        var heading: String?
        var items: [String]
        var kept: Int
        /// The noun for what was left out, singular and plural.
        var noun: (one: String, many: String)
        /// Decisions, action items and dates may shrink to nothing; urgent items to one; the overview never.
        var isList: Bool
    }

    private func narrationSections() -> [Section] {
        let sections = [
            Section(
                heading: "Urgent", items: urgentItems.map(Self.sentence), kept: urgentItems.count,
                noun: ("urgent item", "urgent items"), isList: false),
            Section(heading: nil, items: [Self.sentence(overview)], kept: 1, noun: ("", ""), isList: false),
            Section(
                heading: "Decisions", items: decisions.map(Self.sentence), kept: decisions.count, noun: ("decision", "decisions"),
                isList: true),
            Section(
                heading: "Action items", items: actionItems.map(Self.narrate), kept: actionItems.count,
                noun: ("action item", "action items"), isList: true),
            Section(
                heading: "Dates", items: dates.map { Self.sentence("\(Self.trimmedEnd($0.date)): \($0.what)") }, kept: dates.count,
                noun: ("date", "dates"), isList: true),
        ]
        return sections.map { section in
            var section = section
            section.items.removeAll { $0.isEmpty }
            section.kept = section.items.count
            return section
        }
    }

    private static func render(_ sections: [Section]) -> String {
        var sentences: [String] = []
        for section in sections where !section.items.isEmpty {
            let left = section.items.count - section.kept
            let noun = left == 1 ? section.noun.one : section.noun.many
            guard section.kept > 0 else {
                sentences.append("There \(left == 1 ? "is" : "are") \(left) \(noun) in the written summary.")
                continue
            }
            var lines = Array(section.items.prefix(section.kept))
            if let heading = section.heading { lines[0] = "\(heading): \(lines[0])" }
            if left > 0 { lines.append("And \(left) more \(noun).") }
            sentences += lines
        }
        return sentences.joined(separator: " ")
    }

    /// First words with which a due date reads naturally after the task without "by".
    private static let dueLeadWords: Set<String> = [
        "by", "on", "at", "before", "until", "in", "this", "next", "tomorrow", "tonight", "today", "every", "after",
    ]

    /// "Sam will bring the snacks by Friday." — or the task as written when it already starts with the owner's name.
    private static func narrate(_ item: ActionItem) -> String {
        let task = trimmedEnd(item.task)
        let clause: String
        if item.owner.isEmpty {
            clause = "Someone needs to \(task)"
        } else if task.lowercased().hasPrefix(item.owner.lowercased() + " ") {
            clause = task
        } else {
            clause = "\(item.owner) will \(task)"
        }
        guard let due = item.due else { return sentence(clause) }
        let lead = due.split(separator: " ").first.map { $0.lowercased() } ?? ""
        return sentence("\(clause) \(dueLeadWords.contains(lead) ? "" : "by ")\(trimmedEnd(due))")
    }

    /// `text` with its first letter capitalised and a full stop added unless it already ends a sentence.
    private static func sentence(_ text: String) -> String {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let first = text.first else { return text }
        let capitalised = first.uppercased() + text.dropFirst()
        guard let last = capitalised.last, !".!?…".contains(last) else { return capitalised }
        return trimmedEnd(capitalised) + "."
    }

    /// `text` without surrounding whitespace and trailing clause punctuation or full stops.
    private static func trimmedEnd(_ text: String) -> String {
        var text = Substring(text.trimmingCharacters(in: .whitespacesAndNewlines))
        while let last = text.last, ",;:.".contains(last) { text = text.dropLast() }
        return String(text)
    }

    private static func wordCount(_ text: String) -> Int { text.split(whereSeparator: \.isWhitespace).count }
}
