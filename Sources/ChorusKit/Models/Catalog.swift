import ChorusAPI
import Foundation

/// A scenario a call can use (`GET /mobile/scenarios`): built in, or (category `custom`, signed in) one of the
/// user's custom scenarios. From ``CallsClient/scenarios()``.
public struct Scenario: Sendable, Hashable, Identifiable {
    /// What kind of call a scenario is, for grouping and filtering: the wire's open value, ChorusAPI's
    /// `ScenarioDTO.Category` (a value a newer server added is kept as is, `isKnown` is `false`).
    public typealias Category = ScenarioDTO.Category

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
        category = dto.category
        isFamilyFriendly = dto.isFamilyFriendly
        voiceID = dto.voice
        contentWarning = dto.contentWarning
    }
}

/// An AI voice (`GET /mobile/voices`), from ``CallsClient/voices()``.
public struct Voice: Sendable, Hashable, Identifiable {
    /// How the voice sounds: the wire's open value, ChorusAPI's `VoiceDTO.Gender` (a value a newer server added is
    /// kept as is, `isKnown` is `false`).
    public typealias Gender = VoiceDTO.Gender
    /// The voice's accent: the wire's open value, ChorusAPI's `VoiceDTO.Accent`.
    public typealias Accent = VoiceDTO.Accent
    /// The voice's character: the wire's open value, ChorusAPI's `VoiceDTO.Personality`.
    public typealias Personality = VoiceDTO.Personality

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
        gender = dto.gender
        accent = dto.accent
        personality = dto.personality
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
