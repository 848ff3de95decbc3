import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Logging
import SQLKit

/// The story pipeline as durable jobs, one per stage: text → (scenes ∥ narration) → illustrations after scenes.
///
/// Each stage is retried on its own (the job runner's backoff) and is resumable: a finished stage is never run again,
/// narration keeps the parts already spoken and illustrations the pictures already drawn, so a restart repeats no
/// provider call that succeeded. The next stages are enqueued in the same transaction that records a stage's result.
/// Every job checks that the story was not deleted before each provider call, and works under the story's metering
/// subject (`story:<id>`), so the story's cost is the sum of its provider calls.
struct StoryPipeline: Sendable {
    let services: ChorusServices
    private var stories: StoriesServices { services.stories }

    static let maxAttempts = 4

    /// Enqueues `kind` for the story and wakes the job runner.
    static func enqueue(_ kind: String, payload: String, store: ChorusStore, now: Date) async throws {
        try await store.jobs.enqueueJob(kind: kind, payload: payload, runAt: now, now: now, maxAttempts: maxAttempts)
    }

    /// Loads the story, runs `body` under its metering context, and records a final failure on the stage.
    private func withStory(
        _ job: ClaimedJob, stage: String, storyID: String, store: ChorusStore, logger: Logger,
        _ body: @Sendable (StoryRecord, Logger) async throws -> Void
    ) async throws {
        guard let story = try await store.stories.story(id: storyID, userID: nil), story.cancelledAt == nil else { return }
        var logger = logger
        logger[metadataKey: "story_id"] = .string(story.id)
        logger[metadataKey: "user_id"] = .string(story.userID)
        let bound = logger
        do {
            // Admitted by `POST /stories` (``StoriesServices/admitStory()``): its calls are counted, not refused.
            try await MeteringContext.with(userID: story.userID, subject: "story:\(story.id)", admitted: true) {
                try await body(story, bound)
            }
        } catch {
            guard !(error is CancellationError), !(error is StoryCancelled), job.attempts >= job.maxAttempts || error is JobRunner.PermanentFailure
            else { throw error }
            let message = Self.describe(error)
            try await store.stories.failStage(storyID: story.id, stage: stage, message: message, now: services.now())
            bound.error("story stage failed", metadata: ["stage": .string(stage), "error": .string("\(error)")])
            await services.publishStoryProgress(
                StoryProgressDTO(type: "stage", storyID: story.id, stage: stage, status: "failed", detail: message), userID: story.userID)
            throw error
        }
    }

    private func moveStage(_ story: StoryRecord, _ stage: String, to status: String, store: ChorusStore) async throws {
        if try await store.stories.moveStage(
            storyID: story.id, stage: stage, from: ["pending", "running", "failed", "partial"], to: status, now: services.now())
        {
            await services.publishStoryProgress(
                StoryProgressDTO(type: "stage", storyID: story.id, stage: stage, status: status), userID: story.userID)
        }
    }

    /// Stores a file of the story, unless the story was deleted while it was being made (then the file is removed
    /// again and the job stops).
    private func putIfActive(_ key: String, _ data: Data, contentType: String, story: StoryRecord, store: ChorusStore) async throws {
        let blobKey = BlobKey(rawValue: key)!
        _ = try await stories.blobs.put(blobKey, data: data, contentType: contentType)
        if try await store.stories.isStoryCancelled(id: story.id) {
            try? await stories.blobs.delete(blobKey)
            throw StoryCancelled()
        }
    }

    /// Stops the job quietly when the story was deleted meanwhile.
    private func ensureActive(_ story: StoryRecord, store: ChorusStore) async throws {
        if try await store.stories.isStoryCancelled(id: story.id) { throw StoryCancelled() }
    }

    struct StoryCancelled: Error {}

    /// Runs a stage job; a deleted story ends it without error.
    func run(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        do {
            switch job.kind {
            case JobKind.storyText: try await text(job, store: store, logger: logger)
            case JobKind.storyScenes: try await scenes(job, store: store, logger: logger)
            case JobKind.storyNarration: try await narration(job, store: store, logger: logger)
            default: try await illustrations(job, store: store, logger: logger)
            }
        } catch is StoryCancelled {
            logger.info("story deleted: its work stopped", metadata: ["job_kind": .string(job.kind)])
        }
    }

    // MARK: - Text

    private func text(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        try await withStory(job, stage: "text", storyID: job.payload, store: store, logger: logger) { story, logger in
            guard story.stages["text"] != "succeeded" else { return }
            try await moveStage(story, "text", to: "running", store: store)
            do {
                try await stories.requireBudget()
            } catch let error as APIError {
                throw JobRunner.PermanentFailure(description: Self.describe(error))
            }
            let language = StoryLanguage(rawValue: story.language) ?? .en
            let brief = StoryBrief(
                language: language, heroName: story.snapshot.heroName, heroTraits: story.snapshot.heroTraits,
                heroAppearance: story.snapshot.heroAppearance, event: "\(story.snapshot.eventTitle): \(story.snapshot.eventPromptSeed)",
                lengthMinutes: story.lengthMinutes)
            try await ensureActive(story, store: store)
            let started = Date()
            // The text reaches the app as it is written: pieces gathered into `text` events of at least 200 characters
            // (or every 250 ms), so a slow model still shows progress and a fast one does not flood the connections.
            let relay = TextRelay(minimumCharacters: 200, interval: .milliseconds(250)) { piece in
                await services.publishStoryProgress(
                    StoryProgressDTO(type: "text", storyID: story.id, stage: "text", status: "running", delta: piece), userID: story.userID)
            }
            let generated = try await stories.text.stream(
                TextGenerationRequest(
                    model: stories.settings.textModel,
                    messages: [
                        ChatMessage(role: .system, content: StoryPrompt.system(language)), ChatMessage(role: .user, content: StoryPrompt.user(brief)),
                    ],
                    maxOutputTokens: StoryPrompt.maxOutputTokens(brief), temperature: 0.8, safetyIdentifier: Self.safetyIdentifier(story.userID)),
                onDelta: { await relay.add($0) })
            await relay.flush()
            let parsed = try StoryText.parse(generated.content)
            let now = services.now()
            try await store.writeTransaction { store in
                try await store.stories.saveStoryText(storyID: story.id, title: parsed.title, content: parsed.content, now: now)
                try await Self.enqueue(JobKind.storyNarration, payload: story.id, store: store, now: now)
                try await Self.enqueue(JobKind.storyScenes, payload: story.id, store: store, now: now)
            }
            services.jobSignal.notify()
            logger.info(
                "story text generated",
                metadata: ["words": .stringConvertible(parsed.wordCount), "ms": .stringConvertible(Int(Date().timeIntervalSince(started) * 1000))])
            await services.publishStoryProgress(
                StoryProgressDTO(type: "stage", storyID: story.id, stage: "text", status: "succeeded"), userID: story.userID)
        }
    }

    // MARK: - Scenes

    private func scenes(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        try await withStory(job, stage: "scenes", storyID: job.payload, store: store, logger: logger) { story, logger in
            guard story.stages["scenes"] != "succeeded", let content = story.content else { return }
            let words = content.split(whereSeparator: \.isWhitespace).count
            let count = ScenePlan.sceneCount(words: words, illustrationCount: story.illustrationCount)
            let now = services.now()
            guard count > 0 else {
                try await store.writeTransaction { store in
                    try await store.stories.saveStoryScenes(storyID: story.id, scenes: "[]", status: "succeeded", now: now)
                    _ = try await store.stories.moveStage(storyID: story.id, stage: "illustrations", from: ["pending"], to: "skipped", now: now)
                }
                await services.publishStoryProgress(
                    StoryProgressDTO(type: "stage", storyID: story.id, stage: "scenes", status: "succeeded"), userID: story.userID)
                return
            }
            try await moveStage(story, "scenes", to: "running", store: store)
            try await ensureActive(story, store: store)
            let language = StoryLanguage(rawValue: story.language) ?? .en
            let description = "\(story.snapshot.heroAppearance). Personality: \(story.snapshot.heroTraits.joined(separator: ", "))."
            var scenes: [StoryScene]
            do {
                let generated = try await stories.text.generate(
                    TextGenerationRequest(
                        model: stories.settings.textModel,
                        messages: [
                            ChatMessage(role: .system, content: ScenePlan.system),
                            ChatMessage(
                                role: .user,
                                content: ScenePlan.user(
                                    story: content, sceneCount: count, heroName: story.snapshot.heroName, heroDescription: description,
                                    language: language)),
                        ],
                        format: StructuredOutputFormat(name: ScenePlan.schemaName, schemaJSON: ScenePlan.jsonSchema),
                        maxOutputTokens: ScenePlan.maxOutputTokens(scenes: count), temperature: 0.3,
                        safetyIdentifier: Self.safetyIdentifier(story.userID)))
                scenes = try ScenePlan.decode(json: Data(generated.content.utf8), story: content, count: count)
            } catch let error as ProviderError where error.isTransient {
                throw error
            } catch {
                // Unusable scenes (refused, cut off, not in the story): the deterministic plan keeps the story going.
                logger.warning("scene extraction unusable: evenly spread sentences are used", metadata: ["error": .string("\(error)")])
                scenes = ScenePlan.fallback(story: content, count: count, heroName: story.snapshot.heroName)
            }
            let encoded = StoryStore.json(scenes)
            try await store.writeTransaction { store in
                try await store.stories.saveStoryScenes(storyID: story.id, scenes: encoded, status: "succeeded", now: now)
                try await Self.enqueue(JobKind.storyIllustrations, payload: story.id, store: store, now: now)
            }
            services.jobSignal.notify()
            await services.publishStoryProgress(
                StoryProgressDTO(type: "stage", storyID: story.id, stage: "scenes", status: "succeeded"), userID: story.userID)
        }
    }

    // MARK: - Narration

    private func narration(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        try await withStory(job, stage: "narration", storyID: job.payload, store: store, logger: logger) { story, logger in
            guard story.stages["narration"] != "succeeded", let content = story.content else { return }
            try await moveStage(story, "narration", to: "running", store: store)
            let language = StoryLanguage(rawValue: story.language) ?? .en
            let voice = StoryVoiceCatalog.voice(story.voice) ?? StoryVoiceCatalog.all[0]
            let parts = TextChunker(maxCharacters: stories.speech.maxInputCharacters).split(content)
            try await store.stories.setNarrationPartsTotal(storyID: story.id, total: parts.count)
            var spoken = Dictionary(uniqueKeysWithValues: try await store.stories.narrationParts(storyID: story.id).map { ($0.part, $0) })
            for (index, text) in parts.enumerated() where spoken[index + 1] == nil {
                try await ensureActive(story, store: store)
                let speech = try await stories.speech.synthesize(
                    SpeechRequest(
                        text: text, voiceID: voice.id, model: stories.settings.speechModel,
                        instructions: StoryVoiceCatalog.instructions(for: voice, language: language), format: .mp3))
                // The part in the format the synthesizer returned (WAV when Realtime speech has no MP3 encoder).
                let part = try NarrationAudio.part(speech.audio, format: speech.format)
                let key = "stories/\(story.id)/narration-\(index + 1).\(speech.format.rawValue)"
                try await putIfActive(key, part.bytes, contentType: speech.format.contentType, story: story, store: store)
                let record = NarrationPartRecord(part: index + 1, text: text, blobKey: key, durationMs: part.durationMs)
                try await store.stories.insertNarrationPart(storyID: story.id, record)
                spoken[index + 1] = record
                await services.publishStoryProgress(
                    StoryProgressDTO(
                        type: "narration_part", storyID: story.id, stage: "narration", status: "running", number: index + 1, partsReady: spoken.count),
                    userID: story.userID)
            }
            // One seamless file: the parts in order (MP3 frames with tags and summary frames dropped, or WAV samples).
            let ordered = spoken.values.sorted(by: { $0.part < $1.part })
            let formats = Set(ordered.map { NarrationAudio.format(ofKey: $0.blobKey) })
            guard formats.count == 1, let format = formats.first ?? nil else {
                throw JobRunner.PermanentFailure(description: "the narration parts are not all MP3 or all WAV")
            }
            var files: [Data] = []
            for part in ordered {
                guard let data = try await stories.blobs.data(BlobKey(rawValue: part.blobKey)!) else {
                    throw JobRunner.PermanentFailure(description: "narration part \(part.part) is missing from storage")
                }
                files.append(data)
            }
            let audio = try NarrationAudio.join(files, format: format)
            let key = "stories/\(story.id)/narration.\(format.rawValue)"
            _ = try await stories.blobs.put(BlobKey(rawValue: key)!, data: audio, contentType: format.contentType)
            let durationMs = spoken.values.reduce(0) { $0 + $1.durationMs }
            try await store.stories.completeNarration(storyID: story.id, blobKey: key, durationMs: durationMs, scenes: nil, now: services.now())
            logger.info("story narrated", metadata: ["parts": .stringConvertible(parts.count), "duration_ms": .stringConvertible(durationMs)])
            await services.publishStoryProgress(
                StoryProgressDTO(type: "stage", storyID: story.id, stage: "narration", status: "succeeded", partsReady: parts.count),
                userID: story.userID)
        }
    }

    // MARK: - Illustrations

    /// Payload `<story id>` draws every pending illustration; `<story id>#<n>` retries one.
    private func illustrations(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        let pieces = job.payload.split(separator: "#", maxSplits: 1).map(String.init)
        let only = pieces.count == 2 ? Int(pieces[1]) : nil
        try await withStory(job, stage: "illustrations", storyID: pieces[0], store: store, logger: logger) { story, logger in
            guard story.stages["scenes"] == "succeeded", let scenesJSON = story.scenes else { return }
            let scenes = (try? StoryStore.decodeJSON([StoryScene].self, scenesJSON)) ?? []
            guard !scenes.isEmpty else { return }
            if only == nil, story.stages["illustrations"] == "succeeded" { return }
            try await moveStage(story, "illustrations", to: "running", store: store)
            if try await store.stories.illustrations(storyID: story.id).isEmpty {
                let character = try await characterDescription(story, store: store)
                let items = scenes.map {
                    IllustrationRecord(
                        number: $0.number, prompt: IllustrationPrompt.scene($0, heroName: story.snapshot.heroName, character: character),
                        status: "pending",
                        errorType: nil, error: nil, retryCount: 0, lastAttemptAt: nil, usedFallback: false, blobKey: nil, timestampMs: nil)
                }
                try await store.stories.insertIllustrations(storyID: story.id, items)
            }
            let remaining = try await store.stories.illustrations(storyID: story.id).filter { item in
                if let only { return item.number == only }
                return item.status == "pending" || item.status == "running"
            }
            let settings = stories.settings
            for (index, batch) in stride(from: 0, to: remaining.count, by: settings.illustrationBatchSize).map({
                Array(remaining[$0..<min(remaining.count, $0 + settings.illustrationBatchSize)])
            }).enumerated() {
                if index > 0 { try await Task.sleep(for: .milliseconds(Int(settings.illustrationBatchSpacing * 1000))) }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for item in batch {
                        group.addTask { try await self.draw(item, story: story, store: store, logger: logger) }
                    }
                    try await group.waitForAll()
                }
            }
            let final = try await store.stories.illustrations(storyID: story.id)
            let succeeded = final.filter { $0.status == "succeeded" }.count
            let status = succeeded == final.count ? "succeeded" : (succeeded == 0 ? "failed" : "partial")
            try await moveStage(story, "illustrations", to: status, store: store)
        }
    }

    /// The hero's look for every picture: the cached visual profile, extracted once and saved on the hero.
    private func characterDescription(_ story: StoryRecord, store: ChorusStore) async throws -> String {
        let snapshot = story.snapshot
        let hero = try await story.heroID.asyncFlatMap { try await store.stories.hero(id: $0, userID: story.userID) }
        var profile = hero?.visualProfile.flatMap { try? StoryStore.decodeJSON(HeroVisualProfile.self, $0) }
        if profile == nil {
            try await ensureActive(story, store: store)
            profile = try? await extractProfile(name: snapshot.heroName, appearance: snapshot.heroAppearance, avatarPrompt: snapshot.heroAvatarPrompt)
            if let profile, let hero { try await store.stories.setHeroVisualProfile(id: hero.id, profile: StoryStore.json(profile)) }
        }
        return (profile ?? HeroVisualProfile()).sceneCharacterDescription(heroName: snapshot.heroName, fallbackAppearance: snapshot.heroAppearance)
    }

    /// Asks the text model for the hero's visual profile (strict JSON).
    func extractProfile(name: String, appearance: String, avatarPrompt: String?) async throws -> HeroVisualProfile {
        let prompt = HeroVisualProfile.prompt(heroName: name, appearance: appearance, avatarPrompt: avatarPrompt)
        let generated = try await stories.text.generate(
            TextGenerationRequest(
                model: stories.settings.textModel,
                messages: [ChatMessage(role: .system, content: prompt.system), ChatMessage(role: .user, content: prompt.user)],
                format: StructuredOutputFormat(name: HeroVisualProfile.schemaName, schemaJSON: HeroVisualProfile.jsonSchema),
                maxOutputTokens: HeroVisualProfile.maxOutputTokens, temperature: 0))
        return try HeroVisualProfile.decode(json: Data(generated.content.utf8))
    }

    /// Draws one illustration: up to the configured attempts, exponential backoff on rate limits (never shorter than
    /// `Retry-After`), timeouts and server errors; on a content-policy refusal the seed's ultra-safe prompt at once.
    /// The item's state is saved after every attempt; a failure is the item's, never the story's.
    private func draw(_ original: IllustrationRecord, story: StoryRecord, store: ChorusStore, logger: Logger) async throws {
        var item = original
        let settings = stories.settings
        var attempt = 0
        while true {
            attempt += 1
            try await ensureActive(story, store: store)
            item.status = "running"
            item.lastAttemptAt = services.now()
            try await store.stories.updateIllustration(storyID: story.id, item)
            var delay: Double?
            do {
                let image = try await stories.images.generate(
                    ImageGenerationRequest(
                        model: settings.imageModel, prompt: item.usedFallback ? IllustrationPrompt.fallback : item.prompt, size: settings.imageSize,
                        quality: settings.imageQuality, safetyIdentifier: Self.safetyIdentifier(story.userID)))
                let key = "stories/\(story.id)/illustration-\(item.number).png"
                try await putIfActive(key, image.png, contentType: "image/png", story: story, store: store)
                item.status = "succeeded"
                item.blobKey = key
                item.error = nil
                try await store.stories.updateIllustration(storyID: story.id, item)
                logger.info("illustration drawn", metadata: ["number": .stringConvertible(item.number), "attempts": .stringConvertible(attempt)])
                await services.publishStoryProgress(
                    StoryProgressDTO(type: "illustration", storyID: story.id, stage: "illustrations", status: "succeeded", number: item.number),
                    userID: story.userID)
                return
            } catch ImageGenerationError.contentPolicy(let message) {
                item.errorType = "content_policy"
                item.error = message
                if !item.usedFallback {
                    logger.warning(
                        "illustration refused by the safety system: the fallback prompt is used",
                        metadata: ["number": .stringConvertible(item.number)])
                    item.usedFallback = true
                    delay = 0
                }
            } catch let error as ProviderError {
                item.error = "\(error)"
                switch error {
                case .rateLimited(let retryAfter, _):
                    item.errorType = "rate_limit"
                    delay = RetryBackoff.delay(
                        attempt: attempt, retryAfter: retryAfter.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 },
                        jitter: Double.random(in: 0.5...1))
                case .unavailable:
                    item.errorType = error.isTimeout ? "timeout" : "server_error"
                    delay = RetryBackoff.delay(attempt: attempt, retryAfter: nil, jitter: Double.random(in: 0.5...1))
                case .quotaExceeded: item.errorType = "quota"
                case .rejected: item.errorType = "rejected"
                case .invalidResponse: item.errorType = "invalid_response"
                }
            } catch is CancellationError {
                throw CancellationError()
            } catch is StoryCancelled {
                throw StoryCancelled()
            } catch {
                item.errorType = "storage"
                item.error = "\(error)"
            }
            item.retryCount += 1
            guard let wait = delay, attempt < settings.illustrationAttempts else {
                item.status = "failed"
                try await store.stories.updateIllustration(storyID: story.id, item)
                logger.warning(
                    "illustration failed", metadata: ["number": .stringConvertible(item.number), "error_type": .string(item.errorType ?? "-")])
                await services.publishStoryProgress(
                    StoryProgressDTO(
                        type: "illustration", storyID: story.id, stage: "illustrations", status: "failed", number: item.number, detail: item.errorType
                    ),
                    userID: story.userID)
                return
            }
            item.status = "pending"
            try await store.stories.updateIllustration(storyID: story.id, item)
            logger.info("illustration will be retried", metadata: ["number": .stringConvertible(item.number), "wait_s": .stringConvertible(wait)])
            if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
        }
    }

    // MARK: - Helpers

    /// The user's opaque id (a UUID, no personal data) for the provider's abuse detection, as the other features send it.
    static func safetyIdentifier(_ userID: String) -> String {
        String(userID.prefix(64))
    }

    /// What the app shows for a failed stage.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as APIError: "\(error)"
        case let failure as JobRunner.PermanentFailure: failure.description
        case ProviderError.quotaExceeded: "The story service is temporarily unavailable. Please try again later."
        case ProviderError.rateLimited, ProviderError.unavailable: "The story service is busy. Please try again in a few minutes."
        case TextGenerationError.refused: "This story could not be written. Please choose another event."
        case is StoryTextError, TextGenerationError.incomplete: "The story came back incomplete. Please try again."
        default: "Something went wrong while creating the story. Please try again."
        }
    }
}

extension Optional {
    fileprivate func asyncFlatMap<U>(_ transform: (Wrapped) async throws -> U?) async rethrows -> U? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

/// Gathers streamed pieces of text and hands them on in batches: when at least `minimumCharacters` are waiting or
/// `interval` has passed since the last hand-over.
actor TextRelay {
    private let minimumCharacters: Int
    private let interval: Duration
    private let send: @Sendable (String) async -> Void
    private var pending = ""
    private var last = ContinuousClock.now

    init(minimumCharacters: Int, interval: Duration, send: @escaping @Sendable (String) async -> Void) {
        self.minimumCharacters = minimumCharacters
        self.interval = interval
        self.send = send
    }

    func add(_ piece: String) async {
        pending += piece
        if pending.count >= minimumCharacters || ContinuousClock.now - last >= interval { await flush() }
    }

    func flush() async {
        guard !pending.isEmpty else { return }
        let text = pending
        pending = ""
        last = .now
        await send(text)
    }
}

/// The narration's audio in either format speech comes in: MP3 (parts as frames, joined frame by frame) or WAV (Realtime
/// speech without libmp3lame; parts joined sample by sample).
enum NarrationAudio {
    /// A part as stored (MP3 without tags and summary frame; WAV as it is) and its duration.
    static func part(_ audio: Data, format: SpeechAudioFormat) throws -> (bytes: Data, durationMs: Int) {
        switch format {
        case .mp3:
            let frames = try MP3Joiner.frames(of: audio)
            return (frames.bytes, Int((frames.durationSeconds * 1000).rounded()))
        case .wav:
            let info = try AudioContainer.inspect(audio)
            return (audio, Int((info.durationSeconds * 1000).rounded()))
        }
    }

    /// The format of a stored part, from its key's extension.
    static func format(ofKey key: String) -> SpeechAudioFormat? {
        key.hasSuffix(".wav") ? .wav : key.hasSuffix(".mp3") ? .mp3 : nil
    }

    /// The parts as one file.
    static func join(_ parts: [Data], format: SpeechAudioFormat) throws -> Data {
        switch format {
        case .mp3:
            return try MP3Joiner.join(parts.map(MP3Joiner.frames)).bytes
        case .wav:
            let clips = parts.enumerated().map { WAVClip(messageID: String($0.offset + 1), sender: "narrator", wav: $0.element) }
            return try WAVSplicer.splice(clips, gapMs: 0).wav
        }
    }
}
