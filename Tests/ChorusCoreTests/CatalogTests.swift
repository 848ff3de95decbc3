import Foundation
import Testing

@testable import ChorusCore

@Suite struct CatalogTests {
    private let scenarios = ScenarioCatalog.standard
    private let voices = VoiceCatalog.standard

    /// The ids of the product contract's "Complete Scenarios Reference" table, in its order.
    private static let tableOrder = [
        "default", "celebrity", "comedian", "storyteller", "yacht_party", "instigator",
        "sales_pitch", "customer_service", "real_estate",
        "sister_emergency", "mother_emergency",
        "caring_partner", "surprise_date_planner", "long_distance_love",
        "supportive_bestie", "encouraging_parent", "caring_sibling",
        "therapist", "motivational_coach", "wellness_checkin",
        "celebration_caller", "birthday_wishes", "gratitude_caller",
    ]

    private static let seedVoiceIDs = ["alloy", "ash", "ballad", "coral", "echo", "sage", "shimmer", "verse"]

    private var seedVoices: [VoiceProfile] {
        voices.voices.filter { Self.seedVoiceIDs.contains($0.id) }
    }

    // MARK: - Scenarios

    @Test func scenarioIDsAreUniqueAndInTableOrder() {
        let ids = scenarios.scenarios.map(\.id)
        #expect(ids.count == 23)
        #expect(Set(ids).count == ids.count)
        #expect(ids == Self.tableOrder)
    }

    @Test func scenarioLookup() {
        #expect(scenarios.scenario(id: "comedian")?.name == "Stand-up Comedian")
        #expect(scenarios.scenario(id: "real_estate")?.name == "Real Estate Agent")
        #expect(scenarios.scenario(id: "therapist")?.name == "Life Coach")
        #expect(scenarios.scenario(id: "Comedian") == nil)
        #expect(scenarios.scenario(id: "gameshow_host") == nil)
        #expect(scenarios.scenario(id: "") == nil)
    }

    @Test func everyScenarioVoiceExists() {
        for scenario in scenarios.scenarios {
            #expect(voices.voice(id: scenario.voice) != nil, "\(scenario.id) uses unknown voice \(scenario.voice)")
        }
    }

    @Test func scenarioVoicesAndTemperaturesMatchTable() {
        let expected: [String: (String, Double)] = [
            "default": ("alloy", 0.7), "celebrity": ("alloy", 0.7), "comedian": ("ash", 0.8),
            "storyteller": ("alloy", 0.7), "yacht_party": ("ash", 0.8), "instigator": ("ash", 0.9),
            "sales_pitch": ("echo", 0.7), "customer_service": ("coral", 0.6), "real_estate": ("echo", 0.7),
            "sister_emergency": ("coral", 0.8), "mother_emergency": ("sage", 0.6),
            "caring_partner": ("alloy", 0.7), "surprise_date_planner": ("ash", 0.8), "long_distance_love": ("coral", 0.6),
            "supportive_bestie": ("coral", 0.6), "encouraging_parent": ("alloy", 0.5), "caring_sibling": ("echo", 0.6),
            "therapist": ("coral", 0.6), "motivational_coach": ("ash", 0.8), "wellness_checkin": ("sage", 0.5),
            "celebration_caller": ("shimmer", 0.9), "birthday_wishes": ("shimmer", 0.9), "gratitude_caller": ("verse", 0.6),
        ]
        #expect(expected.count == 23)
        for scenario in scenarios.scenarios {
            let row = expected[scenario.id]
            #expect(row?.0 == scenario.voice, "\(scenario.id) voice")
            #expect(row?.1 == scenario.temperature, "\(scenario.id) temperature")
        }
    }

    @Test func temperaturesAreWithinUnitRange() {
        for scenario in scenarios.scenarios {
            #expect(scenario.temperature > 0 && scenario.temperature <= 1, "\(scenario.id)")
        }
    }

    @Test func contentWarningsMatchSeed() {
        let expected = [
            "instigator": "This scenario involves gossip and drama that may not be suitable for all audiences.",
            "real_estate": "This scenario involves aggressive sales tactics that may be intense.",
            "sister_emergency": "This scenario involves emergency situations that may be distressing.",
            "mother_emergency": "This scenario involves emergency situations that may be distressing.",
        ]
        let withWarnings = scenarios.scenarios.filter { $0.contentWarning != nil }.map(\.id)
        #expect(Set(withWarnings) == Set(expected.keys))
        for (id, text) in expected {
            #expect(scenarios.scenario(id: id)?.contentWarning == text)
        }
    }

    @Test func familyFriendlyFlagsMatchTable() {
        let notFamilyFriendly: Set = ["yacht_party", "instigator", "real_estate", "sister_emergency", "mother_emergency"]
        for scenario in scenarios.scenarios {
            #expect(scenario.isFamilyFriendly == !notFamilyFriendly.contains(scenario.id), "\(scenario.id)")
        }
    }

    @Test func categoriesMatchTable() {
        let expected: [ScenarioCategory: [String]] = [
            .entertainment: ["default", "celebrity", "comedian", "storyteller", "yacht_party", "instigator"],
            .professional: ["sales_pitch", "customer_service", "real_estate"],
            .emergency: ["sister_emergency", "mother_emergency"],
            .romantic: ["caring_partner", "surprise_date_planner", "long_distance_love"],
            .family: ["supportive_bestie", "encouraging_parent", "caring_sibling"],
            .motivational: ["therapist", "motivational_coach", "wellness_checkin"],
            .celebration: ["celebration_caller", "birthday_wishes", "gratitude_caller"],
        ]
        for category in ScenarioCategory.allCases {
            let ids = scenarios.scenarios.filter { $0.category == category }.map(\.id)
            #expect(ids == expected[category], "\(category)")
        }
        #expect(scenarios.scenario(id: "therapist")?.category == .motivational)
    }

    @Test func shortListDescriptionsAndIcons() {
        let expected: [String: (String, String)] = [
            "default": ("A casual, friendly conversation", "💬"),
            "celebrity": ("Chat with a virtual celebrity", "🌟"),
            "comedian": ("Funny jokes and comedy bits", "😂"),
            "therapist": ("Supportive and motivational conversation", "🧠"),
            "storyteller": ("Engaging stories and tales", "📚"),
        ]
        for (id, (description, icon)) in expected {
            #expect(scenarios.scenario(id: id)?.description == description, "\(id)")
            #expect(scenarios.scenario(id: id)?.icon == icon, "\(id)")
        }
        #expect(scenarios.scenario(id: "yacht_party")?.description == "Exclusive party planning")
    }

    @Test func iconsAreEmojiOnly() {
        for scenario in scenarios.scenarios {
            #expect(!scenario.icon.isEmpty, "\(scenario.id)")
            #expect(!scenario.icon.unicodeScalars.contains { $0.isASCII && $0.properties.isAlphabetic }, "\(scenario.id)")
            #expect(scenario.icon.unicodeScalars.contains { $0.properties.isEmoji && $0.value > 0x7F }, "\(scenario.id)")
        }
    }

    @Test func namesAndDescriptionsAreNonEmpty() {
        for scenario in scenarios.scenarios {
            #expect(!scenario.name.isEmpty, "\(scenario.id)")
            #expect(!scenario.description.isEmpty, "\(scenario.id)")
        }
    }

    @Test func personasHaveReasonableLength() {
        for scenario in scenarios.scenarios {
            let words = scenario.persona.split(whereSeparator: { $0.isWhitespace }).count
            #expect((90...180).contains(words), "\(scenario.id) persona has \(words) words")
            #expect(!scenario.persona.contains("TODO"), "\(scenario.id)")
            #expect(!scenario.persona.contains("\\"), "\(scenario.id)")
        }
    }

    @Test func personasAreDistinct() {
        let personas = scenarios.scenarios.map(\.persona)
        #expect(Set(personas).count == personas.count)
    }

    @Test func emergencyPersonasAreMarkedAsRolePlay() {
        for id in ["sister_emergency", "mother_emergency"] {
            let persona = scenarios.scenario(id: id)?.persona ?? ""
            #expect(persona.contains("fictional role-play"), "\(id)")
            #expect(persona.contains("Never ask for money"), "\(id)")
        }
    }

    // MARK: - Voices

    @Test func standardVoicesInSeedOrder() {
        let ids = voices.voices.map(\.id)
        #expect(Array(ids.prefix(8)) == Self.seedVoiceIDs)
        #expect(ids.contains("marin"))
        #expect(ids.contains("cedar"))
        #expect(Set(ids).count == ids.count)
    }

    @Test func voiceLookupIsExactAndCaseSensitive() {
        #expect(voices.voice(id: "alloy")?.displayName == "Alloy")
        #expect(voices.voice(id: "alloy")?.description == "Warm and engaging female voice")
        #expect(voices.voice(id: "Alloy") == nil)
        #expect(voices.voice(id: "nova") == nil)
        #expect(voices.voice(id: "marin")?.description == "Natural and expressive female voice")
        #expect(voices.voice(id: "cedar")?.gender == .male)
    }

    @Test func seedVoiceFiltersHold() {
        #expect(seedVoices.filter { $0.gender == .female }.map(\.id) == ["alloy", "coral", "sage", "shimmer"])
        #expect(seedVoices.filter { $0.gender == .male }.map(\.id) == ["ash", "ballad", "echo", "verse"])
        #expect(seedVoices.filter { $0.accent == .british }.map(\.id) == ["ballad"])
        #expect(seedVoices.filter { $0.personality == .warmEngaging }.map(\.id) == ["alloy", "verse"])
        #expect(seedVoices.filter { $0.personality == .energeticUpbeat }.map(\.id) == ["ash", "shimmer"])
        #expect(seedVoices.filter { $0.personality == .gentleSupportive }.map(\.id) == ["coral", "sage"])
        #expect(seedVoices.filter { $0.personality == .professionalNeutral }.map(\.id) == ["ballad", "echo"])
        #expect(voices.voices.filter { $0.accent == .british }.map(\.id) == ["ballad"])
    }

    @Test func personalityRawValuesMatchSeed() {
        #expect(VoicePersonality.allCases.map(\.rawValue) == ["warm_engaging", "energetic_upbeat", "gentle_supportive", "professional_neutral"])
    }
}
