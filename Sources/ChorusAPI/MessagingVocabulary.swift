import Foundation

// The open string values of voice messages, shared by the DTOs, the server and the SDK. A value this version does
// not know decodes as itself (``OpenEnum``); `isKnown` tells.

/// A conversation's kind.
public struct ConversationKind: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Two people (`direct`); there is at most one per pair, and members cannot be added.
    public static let direct: ConversationKind = "direct"
    /// A named group of up to 50 members (`group`).
    public static let group: ConversationKind = "group"

    public static let allCases: [ConversationKind] = [.direct, .group]
}

/// What a member of a conversation may do.
public struct ConversationRole: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Started the conversation; in a group, may remove other members (`owner`).
    public static let owner: ConversationRole = "owner"
    /// `member`
    public static let member: ConversationRole = "member"

    public static let allCases: [ConversationRole] = [.owner, .member]
}

/// What the recipients of a message get.
public struct MessageSendMode: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Text only (`text`).
    public static let text: MessageSendMode = "text"
    /// The recording only (`audio`); the transcript fills in once the server has transcribed it.
    public static let audio: MessageSendMode = "audio"
    /// The recording and the transcript as the sender reviewed it, as the content (`both`).
    public static let both: MessageSendMode = "both"

    public static let allCases: [MessageSendMode] = [.text, .audio, .both]
}

/// How sure the speech model was of a transcript, in words fit for the UI.
public struct ConfidenceLabel: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The transcript can be trusted (`good`).
    public static let good: ConfidenceLabel = "good"
    /// Some words may be wrong (`fair`): suggest reviewing it.
    public static let fair: ConfidenceLabel = "fair"
    /// Probably wrong, or no speech was heard (`poor`): ask the sender to review it or send audio only.
    public static let poor: ConfidenceLabel = "poor"

    public static let allCases: [ConfidenceLabel] = [.good, .fair, .poor]
}

/// Why a message is urgent.
public struct UrgentReason: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Health: symptoms, medication, a hospital (`medical`).
    public static let medical: UrgentReason = "medical"
    /// A changed time or place (`schedule`).
    public static let schedule: UrgentReason = "schedule"
    /// Someone's safety (`safety`).
    public static let safety: UrgentReason = "safety"
    /// The sender flagged it urgent (`sender`).
    public static let sender: UrgentReason = "sender"

    public static let allCases: [UrgentReason] = [.medical, .schedule, .safety, .sender]
}

/// Whether the user has a cloned voice.
public struct VoiceProfileStatus: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Messages are spoken in the user's cloned voice (`ready`).
    public static let ready: VoiceProfileStatus = "ready"
    /// No cloned voice: messages are spoken in the default voice (`none`).
    public static let none: VoiceProfileStatus = "none"
    /// Cloned, waiting for its owner to hear the preview and confirm (`POST /voice-profile/confirm`): until then the
    /// default voice speaks, and an unconfirmed voice is deleted after a day (`pending_confirmation`).
    public static let pendingConfirmation: VoiceProfileStatus = "pending_confirmation"
    /// ElevenLabs requires verification of the cloned voice, which the app cannot do: it is never used (the default
    /// voice speaks), cannot be confirmed, and is deleted after a day; re-record (`requires_verification`).
    public static let requiresVerification: VoiceProfileStatus = "requires_verification"

    public static let allCases: [VoiceProfileStatus] = [.ready, .none, .pendingConfirmation, .requiresVerification]
}

/// Whose voice speaks generated speech.
public struct SpeechVoiceKind: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The sender's own cloned voice (`cloned`).
    public static let cloned: SpeechVoiceKind = "cloned"
    /// The default voice the sender chose, as they have no cloned voice (`default`).
    public static let `default`: SpeechVoiceKind = "default"

    public static let allCases: [SpeechVoiceKind] = [.cloned, .default]
}

/// When a member receives a conversation's daily digest: a narrated summary of the day's messages.
public struct DigestSchedule: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// At 07:00 in the member's time zone (`morning`).
    public static let morning: DigestSchedule = "morning"
    /// At 19:00 in the member's time zone (`evening`).
    public static let evening: DigestSchedule = "evening"
    /// No digest (`off`).
    public static let off: DigestSchedule = "off"

    public static let allCases: [DigestSchedule] = [.morning, .evening, .off]
}
