import Foundation

public enum VoiceGender: String, Sendable, Codable, CaseIterable {
    case male, female
}

public enum VoiceAccent: String, Sendable, Codable, CaseIterable {
    case american, british
}

public enum VoicePersonality: String, Sendable, Codable, CaseIterable {
    case warmEngaging = "warm_engaging"
    case energeticUpbeat = "energetic_upbeat"
    case gentleSupportive = "gentle_supportive"
    case professionalNeutral = "professional_neutral"
}

/// One OpenAI realtime voice and how the product classifies it.
public struct VoiceProfile: Sendable, Hashable {
    /// OpenAI realtime voice id, e.g. "alloy".
    public let id: String
    /// Human-readable name, e.g. "Alloy".
    public let displayName: String
    public let gender: VoiceGender
    public let accent: VoiceAccent
    public let personality: VoicePersonality
    /// Short description, e.g. "Warm and engaging female voice".
    public let description: String

    public init(
        id: String,
        displayName: String,
        gender: VoiceGender,
        accent: VoiceAccent,
        personality: VoicePersonality,
        description: String
    ) {
        self.id = id
        self.displayName = displayName
        self.gender = gender
        self.accent = accent
        self.personality = personality
        self.description = description
    }
}

/// An ordered list of voices with lookup by id.
public struct VoiceCatalog: Sendable {
    public let voices: [VoiceProfile]

    public init(voices: [VoiceProfile]) {
        self.voices = voices
    }

    /// The first voice whose id matches exactly (case-sensitive), if any.
    public func voice(id: String) -> VoiceProfile? {
        voices.first { $0.id == id }
    }

    /// The product contract's eight voices in its order, followed by the newer realtime voices marin and cedar.
    public static let standard = VoiceCatalog(voices: [
        VoiceProfile(
            id: "alloy", displayName: "Alloy", gender: .female, accent: .american,
            personality: .warmEngaging, description: "Warm and engaging female voice"
        ),
        VoiceProfile(
            id: "ash", displayName: "Ash", gender: .male, accent: .american,
            personality: .energeticUpbeat, description: "Energetic and upbeat male voice"
        ),
        VoiceProfile(
            id: "ballad", displayName: "Ballad", gender: .male, accent: .british,
            personality: .professionalNeutral, description: "Professional British male voice"
        ),
        VoiceProfile(
            id: "coral", displayName: "Coral", gender: .female, accent: .american,
            personality: .gentleSupportive, description: "Gentle and supportive female voice"
        ),
        VoiceProfile(
            id: "echo", displayName: "Echo", gender: .male, accent: .american,
            personality: .professionalNeutral, description: "Clear and professional male voice"
        ),
        VoiceProfile(
            id: "sage", displayName: "Sage", gender: .female, accent: .american,
            personality: .gentleSupportive, description: "Calm and wise female voice"
        ),
        VoiceProfile(
            id: "shimmer", displayName: "Shimmer", gender: .female, accent: .american,
            personality: .energeticUpbeat, description: "Excited and enthusiastic female voice"
        ),
        VoiceProfile(
            id: "verse", displayName: "Verse", gender: .male, accent: .american,
            personality: .warmEngaging, description: "Warm and engaging male voice"
        ),
        VoiceProfile(
            id: "marin", displayName: "Marin", gender: .female, accent: .american,
            personality: .warmEngaging, description: "Natural and expressive female voice"
        ),
        VoiceProfile(
            id: "cedar", displayName: "Cedar", gender: .male, accent: .american,
            personality: .professionalNeutral, description: "Natural and grounded male voice"
        ),
    ])
}
