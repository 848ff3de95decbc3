import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Vapor

/// The dependencies of Stories: metered providers (text, pictures, narration, moderation), storage and settings.
struct StoriesServices: Sendable {
    let settings: ChorusConfiguration.StorySettings
    /// Stories, scenes, visual profiles and the event assistant.
    let text: any TextGenerator
    /// Avatars and illustrations, through a connection whose deadline is the illustration timeout and which does not
    /// retry: the illustration queue retries with its own backoff and records every attempt.
    let images: any ImageGenerator
    /// Narration (OpenAI speech with storytelling instructions).
    let speech: any SpeechSynthesizer
    /// The provider's moderation, a second opinion on user-supplied text; `nil` when not configured.
    let moderator: (any ContentModerator)?
    let meter: UsageMeter
    let blobs: any BlobStore
    /// Signs file URLs (`<public URL>/stories/files/{key}?expires=…&signature=…`).
    let files: AudioURLSigner
    /// The server as the outside world sees it (`CHORUS_PUBLIC_URL`), the base of file URLs.
    let publicURL: URL
    let filter = ContentPolicyFilter.standard

    /// The user's illustration limit: premium with an active plan.
    func illustrationCap(premium: Bool) -> Int {
        premium ? settings.premiumIllustrations : settings.freeIllustrations
    }

    /// Refuses new work when the feature's budget is spent.
    func requireBudget() async throws {
        try await meter.requireBudget()
    }

    /// Admits a story (or a retried stage) for the signed-in user: one of their daily operations and the feature's
    /// budgets, checked atomically (503 once a budget is spent, 429 once the user's operations are used up). The
    /// stages' provider calls then run as admitted work (reserved and counted, never refused).
    func admitStory() async throws {
        _ = try await meter.reserve(estimate: 0, operation: .chat)
    }

    /// The user-supplied text after the content policy filter, refused when the provider's moderation flags it.
    func screenUserText(_ text: String, field: String, language: StoryLanguage?) async throws -> String {
        let filtered = filter.filter(text, language: language).text
        if let moderator, let model = settings.moderationModel {
            let verdict = try await moderator.moderate(filtered, model: model)
            if verdict.flagged {
                throw APIError.invalid(field, "This text is not suitable for a children's story (\(verdict.categories.joined(separator: ", ")))")
            }
        }
        return filtered
    }

    /// The absolute, signed URL of a story or hero file.
    func fileURL(_ key: String, now: Date) -> String {
        let base = publicURL.absoluteString.hasSuffix("/") ? String(publicURL.absoluteString.dropLast()) : publicURL.absoluteString
        return base + "/stories/files/\(key)?" + files.query(id: key, now: now)
    }
}

/// An ``ImageGenerator`` that meters every picture (tokens when reported, else one image).
struct MeteredImageGenerator: ImageGenerator {
    let base: any ImageGenerator
    let provider: String
    let meter: UsageMeter

    func generate(_ request: ImageGenerationRequest) async throws -> GeneratedImage {
        let estimate = meter.prices.imageEstimateMicrodollars(
            model: request.model, promptBytes: request.prompt.utf8.count, size: request.size, quality: request.quality)
        return try await meter.metered(.image, provider: provider, estimate: estimate) {
            try await base.generate(request)
        } consumption: { image in
            (image.model, Consumption(inputTokens: image.inputTokens ?? 0, outputTokens: image.outputTokens ?? 0, images: 1))
        }
    }
}

/// A ``ContentModerator`` that meters every check (free at OpenAI, but counted).
struct MeteredModerator: ContentModerator {
    let base: any ContentModerator
    let provider: String
    let meter: UsageMeter

    func moderate(_ text: String, model: String) async throws -> ModerationResult {
        let result = try await base.moderate(text, model: model)
        await meter.record(.moderation, provider: provider, model: model, consumption: Consumption(characters: text.count))
        return result
    }
}

extension ProviderError {
    /// Whether the provider did not answer within the deadline (see ``ProviderHTTP``'s `"<provider> timed out"`).
    var isTimeout: Bool {
        if case .unavailable(let message) = self { return message.hasSuffix("timed out") }
        return false
    }
}

// MARK: - Wire forms

extension ChorusServices {
    /// The story as the API shows it: every stage, the narration (parts as they become ready, the joined file when
    /// done), scenes with timestamps from the real narration, illustrations and the cost so far.
    func storyDTO(_ story: StoryRecord, store: ChorusStore) async throws -> StoryDTO {
        let now = self.now()
        let parts = try await store.stories.narrationParts(storyID: story.id)
        let illustrations = try await store.stories.illustrations(storyID: story.id)
        var scenes = story.scenes.flatMap { try? StoryStore.decodeJSON([StoryScene].self, $0) } ?? []
        if let content = story.content, !parts.isEmpty, parts.count == story.narrationPartsTotal {
            scenes = SceneTiming.timestamps(
                for: scenes, story: content, parts: parts.map { SceneTiming.Part(text: $0.text, durationSeconds: Double($0.durationMs) / 1_000) })
        }
        let timestamps = Dictionary(uniqueKeysWithValues: scenes.map { ($0.number, $0.timestampSeconds) })
        let audio: StoryAudioDTO? =
            parts.isEmpty && story.audioBlobKey == nil
            ? nil
            : StoryAudioDTO(
                url: story.audioBlobKey.map { stories.fileURL($0, now: now) }, durationSeconds: story.audioDurationMs.map { Double($0) / 1_000 },
                partsReady: parts.count, partsTotal: story.narrationPartsTotal,
                parts: parts.map {
                    StoryAudioPartDTO(part: $0.part, url: stories.fileURL($0.blobKey, now: now), durationSeconds: Double($0.durationMs) / 1_000)
                })
        let costs = try await store.metering.subjectCosts("story:\(story.id)")
        return StoryDTO(
            id: story.id, heroID: story.heroID, heroName: story.snapshot.heroName, eventTitle: story.snapshot.eventTitle, language: story.language,
            voice: story.voice, lengthMinutes: story.lengthMinutes, illustrationCount: story.illustrationCount,
            stages: story.stagesDTO,
            failure: story.failure, title: story.title, content: story.content,
            scenes: scenes.map {
                StorySceneDTO(
                    number: $0.number, text: $0.textSegment, emotion: $0.emotion, importance: $0.importance, timestampSeconds: $0.timestampSeconds)
            },
            audio: audio,
            illustrations: illustrations.map {
                StoryIllustrationDTO(
                    number: $0.number, status: StoryStageStatus(rawValue: $0.status), errorType: $0.errorType, retryCount: $0.retryCount,
                    lastAttemptAt: $0.lastAttemptAt,
                    usedFallbackPrompt: $0.usedFallback, url: $0.blobKey.map { stories.fileURL($0, now: now) },
                    timestampSeconds: timestamps[$0.number] ?? nil)
            },
            cost: UsageCostDTO(usdMicros: costs.clampedSum { $0.usdMicros }, items: costs.map(UsageItem.init)),
            createdAt: story.createdAt, updatedAt: story.updatedAt)
    }

    /// Announces a story's progress to its owner's realtime connections and event streams (every instance).
    func publishStoryProgress(_ progress: StoryProgressDTO, userID: String) async {
        await messaging.fanout.publish(RealtimeEventDTO(type: "story.progress", story: progress), to: [userID])
    }
}

extension StoryRecord {
    var stagesDTO: StoryStagesDTO {
        func status(_ stage: String) -> StoryStageStatus { stages[stage].map(StoryStageStatus.init(rawValue:)) ?? .pending }
        return StoryStagesDTO(
            text: status("text"), scenes: status("scenes"), narration: status("narration"), illustrations: status("illustrations"))
    }

    /// Whether no stage will change any more (``StoryStagesDTO/isFinished``).
    var isFinished: Bool { stagesDTO.isFinished }
}
