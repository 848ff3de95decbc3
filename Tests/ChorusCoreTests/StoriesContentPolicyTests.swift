import Foundation
import Testing

@testable import ChorusCore

/// The multilingual content policy filter, table-driven in all five story languages.
struct StoriesContentPolicyTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var language: StoryLanguage
        var input: String
        var expected: String
        var categories: [ContentPolicyFilter.Category]
        var testDescription: String { "\(language.rawValue): \(input)" }
    }

    static let cases: [Case] = [
        // English: isolation, violence, scary, phrases before their words, case kept.
        Case(language: .en, input: "Mia walks all alone in the forest", expected: "Mia walks with friends in the forest", categories: [.isolation]),
        Case(
            language: .en, input: "A lonely fox holds a sword", expected: "A seeking friends fox holds a magical wand",
            categories: [.isolation, .violence]),
        Case(language: .en, input: "The castle was dark and scary", expected: "The castle was bright and magical", categories: [.scary]),
        Case(
            language: .en, input: "Monster under the bed, a MONSTER!", expected: "Friendly creature under the bed, a FRIENDLY CREATURE!",
            categories: [.scary, .scary]),
        Case(language: .en, input: "a terrifying monster and a nightmare", expected: "a amazing creature and a dream", categories: [.scary, .scary]),
        Case(language: .en, input: "Swordfish and warm wardrobes stay", expected: "Swordfish and warm wardrobes stay", categories: []),
        // Spanish.
        Case(language: .es, input: "El niño estaba completamente solo", expected: "El niño estaba explorando felizmente", categories: [.isolation]),
        Case(
            language: .es, input: "Un monstruo con una espada", expected: "Un criatura amistosa con una varita mágica",
            categories: [.scary, .violence]),
        Case(language: .es, input: "Tenía miedo de la pesadilla", expected: "Tenía asombro de la sueño", categories: [.scary, .scary]),
        Case(language: .es, input: "Aislado en la isla", expected: "Explorando en la isla", categories: [.isolation]),
        // French.
        Case(language: .fr, input: "Léo est tout seul dans le noir", expected: "Léo est avec des amis dans le noir", categories: [.isolation]),
        Case(
            language: .fr, input: "Un monstre effrayant et une épée", expected: "Un créature amicale magique et une baguette magique",
            categories: [.scary, .scary, .violence]),
        Case(language: .fr, input: "Le Cauchemar du fantôme", expected: "Le Rêve du esprit amical", categories: [.scary, .scary]),
        Case(language: .fr, input: "Seule la lune brille", expected: "Avec des amis la lune brille", categories: [.isolation]),
        // German.
        Case(language: .de, input: "Der Junge war ganz allein", expected: "Der Junge war mit Freunden", categories: [.isolation]),
        Case(
            language: .de, input: "Ein Monster mit einem Schwert", expected: "Ein Freundliches Wesen mit einem Zauberstab",
            categories: [.scary, .violence]),
        Case(language: .de, input: "Der Wald war dunkel und gruselig", expected: "Der Wald war hell und zauberhaft", categories: [.scary]),
        Case(language: .de, input: "Alleinerziehend bleibt stehen", expected: "Alleinerziehend bleibt stehen", categories: []),
        // Italian.
        Case(language: .it, input: "Il bambino era tutto solo", expected: "Il bambino era con gli amici", categories: [.isolation]),
        Case(
            language: .it, input: "Un mostro con la spada", expected: "Un creatura amichevole con la bacchetta magica",
            categories: [.scary, .violence]),
        Case(language: .it, input: "Un incubo spaventoso", expected: "Un sogno magico", categories: [.scary, .scary]),
        Case(language: .it, input: "Solo un sorriso", expected: "Solo un sorriso", categories: []),
    ]

    @Test(arguments: cases)
    func filtersWholeWordsKeepingCase(_ example: Case) {
        let filtered = ContentPolicyFilter.standard.filter(example.input, language: example.language)
        #expect(filtered.text == example.expected)
        #expect(filtered.replacements.map(\.category) == example.categories)
        // The filter's output is clean: filtering it again changes nothing the tables would flag.
        #expect(ContentPolicyFilter.standard.validate(filtered.text, language: example.language).problematicTerms.isEmpty)
    }

    @Test(arguments: StoryLanguage.allCases)
    func everyLanguageCoversEveryCategory(_ language: StoryLanguage) {
        let categories = Set(ContentPolicyFilter.standard.rules.filter { $0.language == language }.map(\.category))
        #expect(categories == Set(ContentPolicyFilter.Category.allCases))
    }

    @Test func withoutALanguageEveryTableApplies() {
        let filtered = ContentPolicyFilter.standard.filter("Mia, alone, meets a Monster, un mostro and une épée", language: nil)
        #expect(filtered.text == "Mia, with friends, meets a Friendly creature, un creatura amichevole and une baguette magique")
        #expect(filtered.replacements.map(\.original) == ["alone", "Monster", "mostro", "épée"])
    }

    @Test func aLanguageLimitsTheRules() {
        // "seul" is only a French word; in an English text it is left alone when the language is given.
        #expect(ContentPolicyFilter.standard.filter("seul", language: .en).text == "seul")
        #expect(ContentPolicyFilter.standard.filter("seul", language: .fr).text == "avec des amis")
    }

    @Test func validationGradesRisk() {
        let filter = ContentPolicyFilter.standard
        let clean = filter.validate("A happy fox in a sunny garden", language: .en)
        #expect(clean == .init(isValid: true, riskLevel: .low, problematicTerms: [], recommendations: []))

        let medium = filter.validate("A lonely fox and a ghost", language: .en)
        #expect(medium.riskLevel == .medium)
        #expect(medium.isValid)
        #expect(medium.problematicTerms == ["lonely", "ghost"])
        #expect(medium.recommendations.count == 2)

        let violent = filter.validate("Der Ritter hebt sein Schwert", language: .de)
        #expect(violent.riskLevel == .high)
        #expect(!violent.isValid)
        #expect(violent.problematicTerms == ["Schwert"])

        let many = filter.validate("Un monstre, un cauchemar, un fantôme, encore un monstre", language: .fr)
        #expect(many.riskLevel == .high)
        #expect(many.problematicTerms == ["monstre", "cauchemar", "fantôme"])
    }

    @Test func emptyAndPunctuationOnlyTextsPassThrough() {
        #expect(ContentPolicyFilter.standard.filter("", language: nil) == .init(text: "", replacements: []))
        #expect(ContentPolicyFilter.standard.filter("…!?", language: .it).text == "…!?")
    }

    @Test func languagesReadFromCodes() {
        #expect(StoryLanguage(code: "en-US") == .en)
        #expect(StoryLanguage(code: "FR_fr") == .fr)
        #expect(StoryLanguage(code: "pt") == nil)
    }

    @Test func catalogsAreComplete() {
        #expect(StoryVoiceCatalog.all.map(\.id) == ["coral", "nova", "fable", "alloy", "echo", "onyx", "shimmer"])
        #expect(Set(StoryVoiceCatalog.all.map(\.instructions)).count == 7)
        #expect(
            StoryVoiceCatalog.instructions(for: StoryVoiceCatalog.voice("Coral")!, language: .de).hasSuffix(
                "native German pronunciation and intonation."))
        for event in StoryEventCatalog.all {
            for language in StoryLanguage.allCases {
                #expect(event.titles[language] != nil && event.promptSeeds[language] != nil, "\(event.id) lacks \(language)")
                // Built-in events are themselves within policy.
                #expect(
                    ContentPolicyFilter.standard.validate(event.promptSeed(language), language: language).riskLevel == .low, "\(event.id) \(language)"
                )
            }
        }
    }
}
