import ChorusCore
import Foundation

/// A story request as the emulator reads it from the prose of a real story prompt (see ``SandboxStories``).
struct StoryRequest: Sendable, Equatable {
    var language: StoryLanguage
    var hero: String
    var traits: [String]
    var event: String
    var targetWords: Int

    /// The hero of a prompt that names none.
    static let defaultHero = "Luna"
    /// The length of a prompt that asks for none (two minutes of narration).
    static let defaultWords = 300
    /// Lengths outside this are brought into it (a 15-minute story is 2,250 words).
    static let words = 60...4_000

    /// The request in `user` (the user message), with `system` (the system messages, lowercased) naming the
    /// language; `nil` when the conversation is not a story request (no storyteller in the system message and no
    /// story request in the user message).
    static func read(system: String, user: String) -> StoryRequest? {
        let wordings = StoryRequestWording.all
        let asked = wordings.first { user.range(of: $0.heroMarker, options: .caseInsensitive) != nil || user.contains($0.traitsLabel) }
        let systemLanguage = wordings.first { system.contains($0.writeIn) }
        guard asked != nil || wordings.contains(where: { system.contains($0.storyteller) }) else { return nil }
        let language = systemLanguage?.language ?? asked?.language ?? SandboxSummaryWords(texts: [user]).language

        let labels = wordings.flatMap { [$0.traitsLabel, $0.appearanceLabel, $0.eventLabel, $0.requirementsLabel] }
        let fields = PromptFields(user, labels: labels)
        func field(_ label: KeyPath<StoryRequestWording, String>) -> String? {
            wordings.lazy.compactMap { fields[$0[keyPath: label]] }.first { !$0.isEmpty }
        }
        let lines = user.components(separatedBy: "\n")
        // "Create a 3-minute bedtime story about Nora." and its translations: the hero follows the marker.
        var hero = defaultHero
        var minutes: Int?
        for wording in wordings {
            guard let line = lines.first(where: { $0.range(of: wording.heroMarker, options: .caseInsensitive) != nil }),
                let range = line.range(of: wording.heroMarker, options: .caseInsensitive)
            else { continue }
            var name = line[range.upperBound...].trimmingCharacters(in: .whitespaces)
            if name.hasSuffix(".") { name.removeLast() }
            name = name.trimmingCharacters(in: .whitespaces)
            if !name.isEmpty { hero = name }
            minutes = PromptFields.firstNumber(in: String(line[..<range.lowerBound]))
            break
        }
        let traits = (field(\.traitsLabel) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }
        // "- about 450 words" and its translations; else the minutes at 150 words each.
        let units = Set(wordings.map(\.wordsUnit))
        let wordsLine = lines.first { line in
            line.trimmingCharacters(in: .whitespaces).hasPrefix("-")
                && line.lowercased().split(whereSeparator: { !$0.isLetter }).contains { units.contains(String($0)) }
        }
        let fromMinutes = minutes.flatMap { $0.multipliedReportingOverflow(by: StoryPrompt.wordsPerMinute).overflow ? nil : $0 * StoryPrompt.wordsPerMinute }
        let target = wordsLine.flatMap(PromptFields.firstNumber(in:)) ?? fromMinutes ?? defaultWords
        return StoryRequest(
            language: language, hero: hero, traits: traits, event: field(\.eventLabel) ?? "",
            targetWords: min(words.upperBound, max(words.lowerBound, target)))
    }
}

/// How the story prompt reads in one language: the words the emulator recognises it by.
struct StoryRequestWording: Sendable {
    let language: StoryLanguage
    /// In the system message (lowercased): the storyteller, and the language the story is written in.
    let storyteller: String
    let writeIn: String
    /// In the user message: what comes right before the hero's name, the labelled lines, the unit of the length.
    let heroMarker: String
    let traitsLabel: String
    let appearanceLabel: String
    let eventLabel: String
    let requirementsLabel: String
    let wordsUnit: String

    static let all: [StoryRequestWording] = [
        StoryRequestWording(
            language: .en, storyteller: "children's storyteller", writeIn: "write in english", heroMarker: "bedtime story about",
            traitsLabel: "Character traits", appearanceLabel: "Appearance", eventLabel: "Story event", requirementsLabel: "Requirements",
            wordsUnit: "words"),
        StoryRequestWording(
            language: .es, storyteller: "narrador experto de cuentos", writeIn: "escribe en español", heroMarker: "minutos sobre",
            traitsLabel: "Rasgos del personaje", appearanceLabel: "Aspecto", eventLabel: "Acontecimiento", requirementsLabel: "Requisitos",
            wordsUnit: "palabras"),
        StoryRequestWording(
            language: .fr, storyteller: "conteur", writeIn: "écris en français", heroMarker: "minutes sur",
            traitsLabel: "Traits de caractère", appearanceLabel: "Apparence", eventLabel: "Événement", requirementsLabel: "Consignes",
            wordsUnit: "mots"),
        StoryRequestWording(
            language: .de, storyteller: "geschichtenerzähler", writeIn: "schreibe auf deutsch", heroMarker: "gutenachtgeschichte über",
            traitsLabel: "Charaktereigenschaften", appearanceLabel: "Aussehen", eventLabel: "Ereignis", requirementsLabel: "Anforderungen",
            wordsUnit: "wörter"),
        StoryRequestWording(
            language: .it, storyteller: "narratore di storie", writeIn: "scrivi in italiano", heroMarker: "minuti su",
            traitsLabel: "Tratti del personaggio", appearanceLabel: "Aspetto", eventLabel: "Evento", requirementsLabel: "Requisiti",
            wordsUnit: "parole"),
    ]
}

/// The labelled lines of a prompt (`Label: value`, `Libellé : valeur`): a value runs on over the following lines
/// until the next label, so a description written over several lines stays whole.
struct PromptFields: Sendable {
    private var values: [String: String] = [:]

    init(_ text: String, labels: [String]) {
        var current: String?
        for line in text.components(separatedBy: "\n") {
            if let (label, value) = Self.labelled(line.trimmingCharacters(in: .whitespaces), labels: labels) {
                current = label
                values[label] = value
            } else if let label = current {
                values[label, default: ""] += "\n" + line
            }
        }
        values = values.mapValues { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// The value of `label` (as given to `init`), or `nil` when the prompt has no such line.
    subscript(label: String) -> String? { values[label] }

    /// `line` as `label: value` for one of `labels` (any case, spaces allowed before the colon), else `nil`.
    private static func labelled(_ line: String, labels: [String]) -> (String, String)? {
        for label in labels where line.count > label.count {
            guard String(line.prefix(label.count)).caseInsensitiveCompare(label) == .orderedSame else { continue }
            let rest = line.dropFirst(label.count).drop { $0 == " " || $0 == "\u{00A0}" || $0 == "\u{202F}" }
            guard rest.first == ":" else { continue }
            return (label, rest.dropFirst().trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// The first run of ASCII digits in `text` as a number; `nil` when there is none or it does not fit an `Int`.
    static func firstNumber(in text: String) -> Int? {
        let digits = text.drop { !($0.isASCII && $0.isNumber) }.prefix { $0.isASCII && $0.isNumber }
        return digits.isEmpty ? nil : Int(digits)
    }
}
