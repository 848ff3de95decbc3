import Foundation

// Stories (seed 004): heroes, events, and generated, narrated, illustrated bedtime stories.

/// `POST /heroes` and `PUT /heroes/{id}`.
public struct HeroRequest: Codable, Sendable, Equatable {
    public var name: String
    public var traits: [String]
    /// What the hero looks like, in the user's words ("curly red hair, green dungarees").
    public var appearance: String
    /// Extra words for the avatar picture.
    public var avatarPrompt: String?

    public init(name: String, traits: [String], appearance: String, avatarPrompt: String? = nil) {
        self.name = name
        self.traits = traits
        self.appearance = appearance
        self.avatarPrompt = avatarPrompt
    }

    enum CodingKeys: String, CodingKey {
        case name, traits, appearance
        case avatarPrompt = "avatar_prompt"
    }
}

/// A hero's look as the model described it once, reused by every illustration (the seed's visual profile).
public struct HeroVisualProfileDTO: Codable, Sendable, Equatable {
    public var hairColor: String?
    public var hairStyle: String?
    public var eyeColor: String?
    public var skinTone: String?
    public var clothingStyle: String?
    public var clothingColors: String?
    public var distinctiveFeatures: String?
    public var bodyType: String?
    public var ageAppearance: String?
    public var colorPalette: String?
    public var artStyle: String?

    public init(
        hairColor: String? = nil, hairStyle: String? = nil, eyeColor: String? = nil, skinTone: String? = nil, clothingStyle: String? = nil,
        clothingColors: String? = nil, distinctiveFeatures: String? = nil, bodyType: String? = nil, ageAppearance: String? = nil,
        colorPalette: String? = nil, artStyle: String? = nil
    ) {
        self.hairColor = hairColor
        self.hairStyle = hairStyle
        self.eyeColor = eyeColor
        self.skinTone = skinTone
        self.clothingStyle = clothingStyle
        self.clothingColors = clothingColors
        self.distinctiveFeatures = distinctiveFeatures
        self.bodyType = bodyType
        self.ageAppearance = ageAppearance
        self.colorPalette = colorPalette
        self.artStyle = artStyle
    }

    enum CodingKeys: String, CodingKey {
        case hairColor = "hair_color"
        case hairStyle = "hair_style"
        case eyeColor = "eye_color"
        case skinTone = "skin_tone"
        case clothingStyle = "clothing_style"
        case clothingColors = "clothing_colors"
        case distinctiveFeatures = "distinctive_features"
        case bodyType = "body_type"
        case ageAppearance = "age_appearance"
        case colorPalette = "color_palette"
        case artStyle = "art_style"
    }
}

/// A hero.
public struct HeroDTO: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var traits: [String]
    public var appearance: String
    public var avatarPrompt: String?
    /// A signed URL of the avatar picture (PNG), once `POST /heroes/{id}/avatar` made one.
    public var avatarURL: String?
    public var visualProfile: HeroVisualProfileDTO?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: String, name: String, traits: [String], appearance: String, avatarPrompt: String?, avatarURL: String?,
        visualProfile: HeroVisualProfileDTO?, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.name = name
        self.traits = traits
        self.appearance = appearance
        self.avatarPrompt = avatarPrompt
        self.avatarURL = avatarURL
        self.visualProfile = visualProfile
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, name, traits, appearance
        case avatarPrompt = "avatar_prompt"
        case avatarURL = "avatar_url"
        case visualProfile = "visual_profile"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}

/// The two avatar qualities of seed 004: `standard` and `hd`, drawn with the image model's quality settings (see
/// `docs/decisions.md`, issue 21).
public enum AvatarQuality: String, Codable, Sendable, Equatable, CaseIterable {
    case standard
    case hd
}

/// `POST /heroes/{hero_id}/avatar` body, optional: without one the avatar is `standard`.
public struct AvatarRequest: Codable, Sendable, Equatable {
    public var quality: AvatarQuality?

    public init(quality: AvatarQuality? = nil) {
        self.quality = quality
    }

    enum CodingKeys: String, CodingKey {
        case quality
    }
}

/// `GET /heroes`.
public struct HeroesResponse: Codable, Sendable, Equatable {
    public var heroes: [HeroDTO]

    public init(heroes: [HeroDTO]) { self.heroes = heroes }
}

/// A story event: built in (`GET /stories/events`) or the user's own (`/stories/custom-events`).
public struct StoryEventDTO: Codable, Sendable, Equatable {
    public var id: String
    public var title: String
    public var promptSeed: String
    public var category: String
    /// Only for custom events.
    public var description: String?
    public var ageRange: String?
    public var tone: String?
    public var keywords: [String]?
    public var custom: Bool

    public init(
        id: String, title: String, promptSeed: String, category: String, description: String? = nil, ageRange: String? = nil,
        tone: String? = nil, keywords: [String]? = nil, custom: Bool
    ) {
        self.id = id
        self.title = title
        self.promptSeed = promptSeed
        self.category = category
        self.description = description
        self.ageRange = ageRange
        self.tone = tone
        self.keywords = keywords
        self.custom = custom
    }

    enum CodingKeys: String, CodingKey {
        case id, title, category, description, tone, keywords, custom
        case promptSeed = "prompt_seed"
        case ageRange = "age_range"
    }
}

/// `GET /stories/events` and `GET /stories/custom-events`.
public struct StoryEventsResponse: Codable, Sendable, Equatable {
    public var events: [StoryEventDTO]

    public init(events: [StoryEventDTO]) { self.events = events }
}

/// `POST /stories/custom-events`: the user's event; absent title, prompt seed and keywords are written by the assistant.
public struct CustomEventRequest: Codable, Sendable, Equatable {
    public var title: String?
    public var description: String
    public var category: String
    public var ageRange: String
    public var tone: String
    public var promptSeed: String?
    public var keywords: [String]?

    public init(
        title: String? = nil, description: String, category: String, ageRange: String, tone: String, promptSeed: String? = nil,
        keywords: [String]? = nil
    ) {
        self.title = title
        self.description = description
        self.category = category
        self.ageRange = ageRange
        self.tone = tone
        self.promptSeed = promptSeed
        self.keywords = keywords
    }

    enum CodingKeys: String, CodingKey {
        case title, description, category, tone, keywords
        case ageRange = "age_range"
        case promptSeed = "prompt_seed"
    }
}

/// `POST /stories/custom-events/assist`.
public struct EventAssistRequest: Codable, Sendable, Equatable {
    public var title: String?
    public var description: String
    public var category: String
    public var ageRange: String
    public var tone: String
    public var language: String?

    public init(title: String? = nil, description: String, category: String, ageRange: String, tone: String, language: String? = nil) {
        self.title = title
        self.description = description
        self.category = category
        self.ageRange = ageRange
        self.tone = tone
        self.language = language
    }

    enum CodingKeys: String, CodingKey {
        case title, description, category, tone, language
        case ageRange = "age_range"
    }
}

/// The assistant's suggestions for a custom event.
public struct EventAssistResponse: Codable, Sendable, Equatable {
    public var title: String
    public var promptSeed: String
    public var keywords: [String]
    public var similarEvents: [String]

    public init(title: String, promptSeed: String, keywords: [String], similarEvents: [String]) {
        self.title = title
        self.promptSeed = promptSeed
        self.keywords = keywords
        self.similarEvents = similarEvents
    }

    enum CodingKeys: String, CodingKey {
        case title, keywords
        case promptSeed = "prompt_seed"
        case similarEvents = "similar_events"
    }
}

/// `POST /stories`.
public struct CreateStoryRequest: Codable, Sendable, Equatable {
    public var heroID: String
    /// A built-in event id, or …
    public var eventID: String?
    /// … a custom event id (exactly one of the two).
    public var customEventID: String?
    /// 1–15 minutes of narration (about 150 words a minute).
    public var lengthMinutes: Int
    /// `en`, `es`, `fr`, `de` or `it`.
    public var language: String
    /// A storytelling voice id (`GET /stories/voices`).
    public var voice: String
    /// 0–8, capped by the user's tier.
    public var illustrationCount: Int

    public init(
        heroID: String, eventID: String? = nil, customEventID: String? = nil, lengthMinutes: Int, language: String, voice: String,
        illustrationCount: Int
    ) {
        self.heroID = heroID
        self.eventID = eventID
        self.customEventID = customEventID
        self.lengthMinutes = lengthMinutes
        self.language = language
        self.voice = voice
        self.illustrationCount = illustrationCount
    }

    enum CodingKeys: String, CodingKey {
        case language, voice
        case heroID = "hero_id"
        case eventID = "event_id"
        case customEventID = "custom_event_id"
        case lengthMinutes = "length_minutes"
        case illustrationCount = "illustration_count"
    }
}

/// The status of a story's pipeline stage or of one illustration. Open: a value this version does not know decodes
/// as itself.
public struct StoryStageStatus: OpenEnum {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Not started.
    public static let pending: StoryStageStatus = "pending"
    /// In progress.
    public static let running: StoryStageStatus = "running"
    /// Done.
    public static let succeeded: StoryStageStatus = "succeeded"
    /// Failed (a failed illustration can be retried).
    public static let failed: StoryStageStatus = "failed"
    /// The illustrations stage: some pictures were drawn, others failed.
    public static let partial: StoryStageStatus = "partial"
    /// Not needed (a story without illustrations).
    public static let skipped: StoryStageStatus = "skipped"

    /// Whether the stage reached an end: ``succeeded``, ``failed``, ``partial`` or ``skipped``.
    public var isEnded: Bool { [.succeeded, .failed, .partial, .skipped].contains(self) }
}

/// The status of each pipeline stage (``StoryStageStatus``).
public struct StoryStagesDTO: Codable, Sendable, Equatable {
    public var text: StoryStageStatus
    public var scenes: StoryStageStatus
    public var narration: StoryStageStatus
    public var illustrations: StoryStageStatus

    public init(text: StoryStageStatus, scenes: StoryStageStatus, narration: StoryStageStatus, illustrations: StoryStageStatus) {
        self.text = text
        self.scenes = scenes
        self.narration = narration
        self.illustrations = illustrations
    }

    /// Whether no stage will change any more: the text failed, or the narration and the illustrations (or the scenes
    /// they need) reached an end (`succeeded`, `failed`, `partial`, `skipped`).
    public var isFinished: Bool {
        if text == .failed { return true }
        return narration.isEnded && (illustrations.isEnded || scenes == .failed)
    }
}

/// One scene: a stretch of the text, when it is heard, and its picture.
public struct StorySceneDTO: Codable, Sendable, Equatable {
    public var number: Int
    public var text: String
    public var emotion: String
    public var importance: String
    /// When the scene starts in the narration (from the real audio, once narrated).
    public var timestampSeconds: Double?

    public init(number: Int, text: String, emotion: String, importance: String, timestampSeconds: Double?) {
        self.number = number
        self.text = text
        self.emotion = emotion
        self.importance = importance
        self.timestampSeconds = timestampSeconds
    }

    enum CodingKeys: String, CodingKey {
        case number, text, emotion, importance
        case timestampSeconds = "timestamp_seconds"
    }
}

/// One narration part, playable as soon as it exists.
public struct StoryAudioPartDTO: Codable, Sendable, Equatable {
    public var part: Int
    public var url: String
    public var durationSeconds: Double

    public init(part: Int, url: String, durationSeconds: Double) {
        self.part = part
        self.url = url
        self.durationSeconds = durationSeconds
    }

    enum CodingKeys: String, CodingKey {
        case part, url
        case durationSeconds = "duration_seconds"
    }
}

/// The narration: the parts as they are made, then the whole file.
public struct StoryAudioDTO: Codable, Sendable, Equatable {
    /// The whole narration (MP3), once every part exists.
    public var url: String?
    public var durationSeconds: Double?
    public var partsReady: Int
    public var partsTotal: Int?
    public var parts: [StoryAudioPartDTO]

    public init(url: String?, durationSeconds: Double?, partsReady: Int, partsTotal: Int?, parts: [StoryAudioPartDTO]) {
        self.url = url
        self.durationSeconds = durationSeconds
        self.partsReady = partsReady
        self.partsTotal = partsTotal
        self.parts = parts
    }

    enum CodingKeys: String, CodingKey {
        case url, parts
        case durationSeconds = "duration_seconds"
        case partsReady = "parts_ready"
        case partsTotal = "parts_total"
    }
}

/// One illustration and its own state.
public struct StoryIllustrationDTO: Codable, Sendable, Equatable {
    public var number: Int
    /// `pending`, `running`, `succeeded` or `failed` (a failed one can be retried).
    public var status: StoryStageStatus
    /// `rate_limited`, `content_policy`, `timeout` or `provider_error`.
    public var errorType: String?
    public var retryCount: Int
    public var lastAttemptAt: Date?
    /// The provider refused the scene's prompt and the safe fallback picture was drawn instead.
    public var usedFallbackPrompt: Bool
    public var url: String?
    public var timestampSeconds: Double?

    public init(
        number: Int, status: StoryStageStatus, errorType: String?, retryCount: Int, lastAttemptAt: Date?, usedFallbackPrompt: Bool, url: String?,
        timestampSeconds: Double?
    ) {
        self.number = number
        self.status = status
        self.errorType = errorType
        self.retryCount = retryCount
        self.lastAttemptAt = lastAttemptAt
        self.usedFallbackPrompt = usedFallbackPrompt
        self.url = url
        self.timestampSeconds = timestampSeconds
    }

    enum CodingKeys: String, CodingKey {
        case number, status, url
        case errorType = "error_type"
        case retryCount = "retry_count"
        case lastAttemptAt = "last_attempt_at"
        case usedFallbackPrompt = "used_fallback_prompt"
        case timestampSeconds = "timestamp_seconds"
    }
}

/// `GET /stories/{id}`.
public struct StoryDTO: Codable, Sendable, Equatable {
    public var id: String
    public var heroID: String?
    public var heroName: String
    public var eventTitle: String
    public var language: String
    public var voice: String
    public var lengthMinutes: Int
    public var illustrationCount: Int
    public var stages: StoryStagesDTO
    /// Why a stage failed.
    public var failure: String?
    public var title: String?
    public var content: String?
    public var scenes: [StorySceneDTO]
    public var audio: StoryAudioDTO?
    public var illustrations: [StoryIllustrationDTO]
    public var cost: UsageCostDTO
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: String, heroID: String?, heroName: String, eventTitle: String, language: String, voice: String, lengthMinutes: Int,
        illustrationCount: Int, stages: StoryStagesDTO, failure: String?, title: String?, content: String?, scenes: [StorySceneDTO],
        audio: StoryAudioDTO?, illustrations: [StoryIllustrationDTO], cost: UsageCostDTO, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.heroID = heroID
        self.heroName = heroName
        self.eventTitle = eventTitle
        self.language = language
        self.voice = voice
        self.lengthMinutes = lengthMinutes
        self.illustrationCount = illustrationCount
        self.stages = stages
        self.failure = failure
        self.title = title
        self.content = content
        self.scenes = scenes
        self.audio = audio
        self.illustrations = illustrations
        self.cost = cost
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, language, voice, stages, failure, title, content, scenes, audio, illustrations, cost
        case heroID = "hero_id"
        case heroName = "hero_name"
        case eventTitle = "event_title"
        case lengthMinutes = "length_minutes"
        case illustrationCount = "illustration_count"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}

/// `POST /stories` (202).
public struct StoryAcceptedDTO: Codable, Sendable, Equatable {
    public var id: String

    public init(id: String) { self.id = id }
}

/// `GET /stories`: the user's library, newest first.
public struct StoriesPage: Codable, Sendable, Equatable {
    public var stories: [StoryDTO]
    public var nextCursor: String?

    public init(stories: [StoryDTO], nextCursor: String?) {
        self.stories = stories
        self.nextCursor = nextCursor
    }

    enum CodingKeys: String, CodingKey {
        case stories
        case nextCursor = "next_cursor"
    }
}

/// A storytelling voice (`GET /stories/voices`).
public struct StoryVoiceDTO: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var description: String

    public init(id: String, name: String, description: String) {
        self.id = id
        self.name = name
        self.description = description
    }
}

/// `GET /stories/voices`.
public struct StoryVoicesResponse: Codable, Sendable, Equatable {
    public var voices: [StoryVoiceDTO]

    public init(voices: [StoryVoiceDTO]) { self.voices = voices }
}

/// One server-sent event of `GET /stories/{id}/events` (the SSE `event:` is ``type``, `data:` this object):
/// `snapshot` (the story now), `stage` (a stage changed status), `text` (a piece of the story as it is written),
/// `narration` (a part is playable), `illustration` (a picture changed status), `completed`, `failed`.
public struct StoryProgressDTO: Codable, Sendable, Equatable {
    public var type: String
    public var storyID: String
    public var stage: String?
    public var status: String?
    public var delta: String?
    public var number: Int?
    public var partsReady: Int?
    public var story: StoryDTO?
    public var detail: String?

    public init(
        type: String, storyID: String, stage: String? = nil, status: String? = nil, delta: String? = nil, number: Int? = nil,
        partsReady: Int? = nil, story: StoryDTO? = nil, detail: String? = nil
    ) {
        self.type = type
        self.storyID = storyID
        self.stage = stage
        self.status = status
        self.delta = delta
        self.number = number
        self.partsReady = partsReady
        self.story = story
        self.detail = detail
    }

    enum CodingKeys: String, CodingKey {
        case type, stage, status, delta, number, story, detail
        case storyID = "story_id"
        case partsReady = "parts_ready"
    }
}
