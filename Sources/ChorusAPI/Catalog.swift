import Foundation

/// One scenario of `GET /mobile/scenarios`.
public struct ScenarioDTO: Codable, Sendable, Equatable, Identifiable {
    /// What kind of call a scenario is, for grouping and filtering. Open: a value this version does not know decodes
    /// as itself (``isKnown`` is then `false`).
    public struct Category: OpenEnum, CaseIterable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let entertainment: Category = "entertainment"
        public static let professional: Category = "professional"
        public static let emergency: Category = "emergency"
        public static let romantic: Category = "romantic"
        public static let family: Category = "family"
        public static let motivational: Category = "motivational"
        public static let celebration: Category = "celebration"
        /// One of the signed-in caller's own custom scenarios.
        public static let custom: Category = "custom"

        /// The known categories.
        public static let allCases: [Category] = [
            .entertainment, .professional, .emergency, .romantic, .family, .motivational, .celebration, .custom,
        ]
    }

    public var id: String
    public var name: String
    public var description: String
    public var icon: String
    public var category: Category
    public var isFamilyFriendly: Bool
    public var voice: String
    /// The seed's warning text, or `null`.
    public var contentWarning: String?

    public init(
        id: String, name: String, description: String, icon: String, category: Category, isFamilyFriendly: Bool,
        voice: String, contentWarning: String?
    ) {
        self.id = id
        self.name = name
        self.description = description
        self.icon = icon
        self.category = category
        self.isFamilyFriendly = isFamilyFriendly
        self.voice = voice
        self.contentWarning = contentWarning
    }

    enum CodingKeys: String, CodingKey {
        case id
        case name
        case description
        case icon
        case category
        case isFamilyFriendly = "is_family_friendly"
        case voice
        case contentWarning = "content_warning"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(description, forKey: .description)
        try c.encode(icon, forKey: .icon)
        try c.encode(category, forKey: .category)
        try c.encode(isFamilyFriendly, forKey: .isFamilyFriendly)
        try c.encode(voice, forKey: .voice)
        try c.encode(contentWarning, forKey: .contentWarning)
    }
}

/// `GET /mobile/scenarios`.
public struct ScenariosResponse: Codable, Sendable, Equatable {
    public var scenarios: [ScenarioDTO]

    public init(scenarios: [ScenarioDTO]) {
        self.scenarios = scenarios
    }

    enum CodingKeys: String, CodingKey {
        case scenarios
    }
}

/// One voice of `GET /mobile/voices`.
public struct VoiceDTO: Codable, Sendable, Equatable, Identifiable {
    /// How a voice sounds. Open: a value this version does not know decodes as itself (``isKnown`` is then `false`).
    public struct Gender: OpenEnum, CaseIterable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let male: Gender = "male"
        public static let female: Gender = "female"

        /// The known values.
        public static let allCases: [Gender] = [.male, .female]
    }

    /// A voice's accent. Open: a value this version does not know decodes as itself (``isKnown`` is then `false`).
    public struct Accent: OpenEnum, CaseIterable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let american: Accent = "american"
        public static let british: Accent = "british"

        /// The known values.
        public static let allCases: [Accent] = [.american, .british]
    }

    /// A voice's character. Open: a value this version does not know decodes as itself (``isKnown`` is then `false`).
    public struct Personality: OpenEnum, CaseIterable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let warmEngaging: Personality = "warm_engaging"
        public static let energeticUpbeat: Personality = "energetic_upbeat"
        public static let gentleSupportive: Personality = "gentle_supportive"
        public static let professionalNeutral: Personality = "professional_neutral"

        /// The known values.
        public static let allCases: [Personality] = [.warmEngaging, .energeticUpbeat, .gentleSupportive, .professionalNeutral]
    }

    public var id: String
    public var displayName: String
    public var gender: Gender
    public var accent: Accent
    public var personality: Personality
    public var description: String

    public init(id: String, displayName: String, gender: Gender, accent: Accent, personality: Personality, description: String) {
        self.id = id
        self.displayName = displayName
        self.gender = gender
        self.accent = accent
        self.personality = personality
        self.description = description
    }

    enum CodingKeys: String, CodingKey {
        case id
        case displayName = "display_name"
        case gender
        case accent
        case personality
        case description
    }
}

/// `GET /mobile/voices`.
public struct VoicesResponse: Codable, Sendable, Equatable {
    public var voices: [VoiceDTO]

    public init(voices: [VoiceDTO]) {
        self.voices = voices
    }

    enum CodingKeys: String, CodingKey {
        case voices
    }
}

/// `POST /mobile/custom-scenarios` body.
public struct CreateCustomScenarioRequest: Codable, Sendable, Equatable {
    public var name: String
    /// Who the AI plays and what the call is about (20–2,000 characters).
    public var persona: String
    public var voice: String
    /// What the scenario does when an answering machine answers: `hang_up` (the default: no message, no charge) or
    /// `leave_message` (the persona leaves a short message after the greeting; the call is charged).
    public var voicemail: String?

    public init(name: String, persona: String, voice: String, voicemail: String? = nil) {
        self.name = name
        self.persona = persona
        self.voice = voice
        self.voicemail = voicemail
    }

    enum CodingKeys: String, CodingKey {
        case name
        case persona
        case voice
        case voicemail
    }
}

/// A user's custom scenario. Its `id` (`custom_<n>`) is usable as `scenario` in make-call and schedule-call.
public struct CustomScenarioDTO: Codable, Sendable, Equatable, Identifiable {
    public var id: String
    public var name: String
    public var persona: String
    public var voice: String
    public var createdAt: Date
    /// The last moderation verdict (when saved, then before each call); `null` for a scenario saved before personas
    /// were checked and not used since.
    public var moderation: PersonaModerationDTO?
    /// When an operator disabled the scenario after a report (it can no longer be used for calls); `null` when usable.
    public var disabledAt: Date?
    /// `hang_up` or `leave_message`: what the scenario does when an answering machine answers.
    public var voicemail: String

    public init(
        id: String, name: String, persona: String, voice: String, createdAt: Date, moderation: PersonaModerationDTO? = nil, disabledAt: Date? = nil,
        voicemail: String = "hang_up"
    ) {
        self.voicemail = voicemail
        self.id = id
        self.name = name
        self.persona = persona
        self.voice = voice
        self.createdAt = createdAt
        self.moderation = moderation
        self.disabledAt = disabledAt
    }

    enum CodingKeys: String, CodingKey {
        case id
        case name
        case persona
        case voice
        case createdAt = "created_at"
        case moderation
        case disabledAt = "disabled_at"
        case voicemail
    }

    /// Encodes `moderation` and `disabled_at` as `null` when absent (the contract lists them on every scenario).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(persona, forKey: .persona)
        try container.encode(voice, forKey: .voice)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(moderation, forKey: .moderation)
        try container.encode(disabledAt, forKey: .disabledAt)
        try container.encode(voicemail, forKey: .voicemail)
    }
}

/// `GET /mobile/custom-scenarios`.
public struct CustomScenariosResponse: Codable, Sendable, Equatable {
    public var customScenarios: [CustomScenarioDTO]

    public init(customScenarios: [CustomScenarioDTO]) {
        self.customScenarios = customScenarios
    }

    enum CodingKeys: String, CodingKey {
        case customScenarios = "custom_scenarios"
    }
}
