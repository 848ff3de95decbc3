import ChorusAPI
import Foundation

/// A built-in scenario a call can use (`GET /mobile/scenarios`), from ``CallsClient/scenarios()``.
public struct Scenario: Sendable, Hashable, Identifiable {
    /// What kind of call a scenario is, for grouping and filtering.
    public enum Category: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// `entertainment`
        case entertainment
        /// `professional`
        case professional
        /// `emergency`
        case emergency
        /// `romantic`
        case romantic
        /// `family`
        case family
        /// `motivational`
        case motivational
        /// `celebration`
        case celebration
        /// A category this version of the SDK does not know.
        case unknown(String)

        /// Reads the server's value.
        public init(rawValue: String) {
            switch rawValue {
            case "entertainment": self = .entertainment
            case "professional": self = .professional
            case "emergency": self = .emergency
            case "romantic": self = .romantic
            case "family": self = .family
            case "motivational": self = .motivational
            case "celebration": self = .celebration
            default: self = .unknown(rawValue)
            }
        }

        /// The server's value, e.g. `entertainment`.
        public var rawValue: String {
            switch self {
            case .entertainment: "entertainment"
            case .professional: "professional"
            case .emergency: "emergency"
            case .romantic: "romantic"
            case .family: "family"
            case .motivational: "motivational"
            case .celebration: "celebration"
            case .unknown(let value): value
            }
        }

        /// The same as ``rawValue``.
        public var description: String { rawValue }
    }

    /// The id to pass as `scenario` to ``CallsClient/makeCall(to:scenario:idempotencyKey:)``, e.g. `default`.
    public var id: String
    /// The display name, e.g. `Friendly Chat`.
    public var name: String
    /// A sentence describing the call.
    public var description: String
    /// A single emoji.
    public var icon: String
    /// The kind of call.
    public var category: Category
    /// Whether the scenario suits children.
    public var isFamilyFriendly: Bool
    /// The id of the voice the AI uses (see ``Voice``).
    public var voiceID: String
    /// Text to show before the call starts, or `nil`.
    public var contentWarning: String?

    /// Converts the wire format.
    public init(_ dto: ScenarioDTO) {
        id = dto.id
        name = dto.name
        description = dto.description
        icon = dto.icon
        category = Category(rawValue: dto.category)
        isFamilyFriendly = dto.isFamilyFriendly
        voiceID = dto.voice
        contentWarning = dto.contentWarning
    }
}

/// An AI voice (`GET /mobile/voices`), from ``CallsClient/voices()``.
public struct Voice: Sendable, Hashable, Identifiable {
    /// How the voice sounds.
    public enum Gender: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// `male`
        case male
        /// `female`
        case female
        /// A value this version of the SDK does not know.
        case unknown(String)

        /// Reads the server's value.
        public init(rawValue: String) {
            switch rawValue {
            case "male": self = .male
            case "female": self = .female
            default: self = .unknown(rawValue)
            }
        }

        /// The server's value.
        public var rawValue: String {
            switch self {
            case .male: "male"
            case .female: "female"
            case .unknown(let value): value
            }
        }

        /// The same as ``rawValue``.
        public var description: String { rawValue }
    }

    /// The voice's accent.
    public enum Accent: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// `american`
        case american
        /// `british`
        case british
        /// A value this version of the SDK does not know.
        case unknown(String)

        /// Reads the server's value.
        public init(rawValue: String) {
            switch rawValue {
            case "american": self = .american
            case "british": self = .british
            default: self = .unknown(rawValue)
            }
        }

        /// The server's value.
        public var rawValue: String {
            switch self {
            case .american: "american"
            case .british: "british"
            case .unknown(let value): value
            }
        }

        /// The same as ``rawValue``.
        public var description: String { rawValue }
    }

    /// The voice's character.
    public enum Personality: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// `warm_engaging`
        case warmEngaging
        /// `energetic_upbeat`
        case energeticUpbeat
        /// `gentle_supportive`
        case gentleSupportive
        /// `professional_neutral`
        case professionalNeutral
        /// A value this version of the SDK does not know.
        case unknown(String)

        /// Reads the server's value.
        public init(rawValue: String) {
            switch rawValue {
            case "warm_engaging": self = .warmEngaging
            case "energetic_upbeat": self = .energeticUpbeat
            case "gentle_supportive": self = .gentleSupportive
            case "professional_neutral": self = .professionalNeutral
            default: self = .unknown(rawValue)
            }
        }

        /// The server's value.
        public var rawValue: String {
            switch self {
            case .warmEngaging: "warm_engaging"
            case .energeticUpbeat: "energetic_upbeat"
            case .gentleSupportive: "gentle_supportive"
            case .professionalNeutral: "professional_neutral"
            case .unknown(let value): value
            }
        }

        /// The same as ``rawValue``.
        public var description: String { rawValue }
    }

    /// The voice id, e.g. `marin`; pass it when creating a ``CustomScenario``.
    public var id: String
    /// The display name.
    public var displayName: String
    /// How the voice sounds.
    public var gender: Gender
    /// The voice's accent.
    public var accent: Accent
    /// The voice's character.
    public var personality: Personality
    /// A sentence describing the voice.
    public var description: String

    /// Converts the wire format.
    public init(_ dto: VoiceDTO) {
        id = dto.id
        displayName = dto.displayName
        gender = Gender(rawValue: dto.gender)
        accent = Accent(rawValue: dto.accent)
        personality = Personality(rawValue: dto.personality)
        description = dto.description
    }
}

/// A scenario the user wrote: a persona and a voice. Its ``id`` (`custom_<n>`) can be passed as `scenario` to
/// ``CallsClient/makeCall(to:scenario:idempotencyKey:)`` and ``CallsClient/scheduleCall(to:scenario:at:idempotencyKey:)``.
public struct CustomScenario: Sendable, Hashable, Identifiable {
    /// The scenario id, e.g. `custom_7`.
    public var id: String
    /// The display name.
    public var name: String
    /// Who the AI plays and what the call is about.
    public var persona: String
    /// The id of the voice the AI uses.
    public var voiceID: String
    /// When it was created.
    public var createdAt: Date
    /// The categories its last check refused it for (empty: it passed; see ``ChorusError/refused(_:)``).
    public var moderationCategories: [String]
    /// When it was last checked (when saved, then before each call), if it was.
    public var checkedAt: Date?
    /// When an operator disabled it after a report; it can no longer be used for calls.
    public var disabledAt: Date?
    /// Whether it leaves a short message when an answering machine answers (`voicemail` `leave_message`); otherwise
    /// such a call is hung up without a word and not charged.
    public var leavesVoicemailMessage: Bool

    /// Converts the wire format.
    public init(_ dto: CustomScenarioDTO) {
        id = dto.id
        name = dto.name
        persona = dto.persona
        voiceID = dto.voice
        createdAt = dto.createdAt
        moderationCategories = dto.moderation?.categories ?? []
        checkedAt = dto.moderation?.checkedAt
        disabledAt = dto.disabledAt
        leavesVoicemailMessage = dto.voicemail == "leave_message"
    }
}
