import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Vapor

/// Heroes, story events, the custom-event assistant, stories and their progress stream, and signed story files.
///
/// Everything but the files needs a signed-in user, who sees only their own heroes, events and stories (another
/// user's are 404). Files (`/stories/files/…`) are fetched with the short-lived signed URLs the JSON carries, so a
/// player or an image view needs no token.
struct StoriesController: RouteCollection {
    let services: ChorusServices
    private var stories: StoriesServices { services.stories }

    func boot(routes: any RoutesBuilder) throws {
        routes.on(API.Stories.file, use: file)
        let authed = routes.grouped(UserAuthenticator(services: services))
        authed.on(API.Stories.createHero, use: createHero)
        authed.on(API.Stories.heroes, use: listHeroes)
        authed.on(API.Stories.hero, use: getHero)
        authed.on(API.Stories.updateHero, use: updateHero)
        authed.on(API.Stories.deleteHero, use: deleteHero)
        authed.on(API.Stories.generateAvatar, use: avatar)

        authed.on(API.Stories.voices, use: voices)
        authed.on(API.Stories.events, use: builtInEvents)
        authed.on(API.Stories.createCustomEvent, use: createCustomEvent)
        authed.on(API.Stories.customEvents, use: listCustomEvents)
        authed.on(API.Stories.deleteCustomEvent, use: deleteCustomEvent)
        authed.on(API.Stories.assist, use: assist)
        // 202 with a `Location` header naming the new story: the handler builds the response.
        authed.onResponse(API.Stories.createStory, use: createStory)
        authed.on(API.Stories.library, use: listStories)
        authed.on(API.Stories.story, use: getStory)
        authed.on(API.Stories.deleteStory, use: deleteStory)
        authed.on(API.Stories.progress, use: progress)
        authed.on(API.Stories.retryIllustration, use: retryIllustration)
    }

    // MARK: - Heroes

    static func validate(_ body: HeroRequest) throws -> HeroRequest {
        var body = body
        body.name = body.name.trimmingCharacters(in: .whitespacesAndNewlines)
        body.appearance = body.appearance.trimmingCharacters(in: .whitespacesAndNewlines)
        body.traits = body.traits.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        var errors: [FieldError] = []
        if body.name.isEmpty || body.name.count > 50 { errors.append(FieldError(field: "name", message: "Use 1 to 50 characters")) }
        if body.traits.count > 10 || body.traits.contains(where: { $0.count > 40 }) {
            errors.append(FieldError(field: "traits", message: "Use up to 10 traits of at most 40 characters"))
        }
        if body.appearance.count > 500 { errors.append(FieldError(field: "appearance", message: "Use at most 500 characters")) }
        if (body.avatarPrompt ?? "").count > 500 { errors.append(FieldError(field: "avatar_prompt", message: "Use at most 500 characters")) }
        guard errors.isEmpty else { throw APIError.validation(summary: "The hero is not valid", errors: errors) }
        return body
    }

    func heroDTO(_ hero: HeroRecord) -> HeroDTO {
        let profile = hero.visualProfile.flatMap { try? StoryStore.decodeJSON(HeroVisualProfile.self, $0) }
        return HeroDTO(
            id: hero.id, name: hero.name, traits: hero.traits, appearance: hero.appearance, avatarPrompt: hero.avatarPrompt,
            avatarURL: hero.avatarBlobKey.map { stories.fileURL($0, now: services.now()) },
            visualProfile: profile, createdAt: hero.createdAt, updatedAt: hero.updatedAt)
    }

    @Sendable
    func createHero(_ req: Request) async throws -> HeroDTO {
        let user = try req.user
        let body = try Self.validate(try req.body(of: API.Stories.createHero))
        let now = services.now()
        let hero = HeroRecord(
            id: UUID().uuidString.lowercased(), userID: user.id, name: body.name, traits: body.traits, appearance: body.appearance,
            avatarPrompt: body.avatarPrompt, avatarBlobKey: nil, visualProfile: nil, createdAt: now, updatedAt: now)
        try await req.store.stories.insertHero(hero)
        return heroDTO(hero)
    }

    @Sendable
    func listHeroes(_ req: Request) async throws -> HeroesResponse {
        let user = try req.user
        return HeroesResponse(heroes: try await req.store.stories.heroes(userID: user.id).map(heroDTO))
    }

    private func ownedHero(_ req: Request) async throws -> HeroRecord {
        let user = try req.user
        guard let id = req.parameters.get("hero_id"), let hero = try await req.store.stories.hero(id: id, userID: user.id) else {
            throw APIError.notFound("Hero not found")
        }
        return hero
    }

    @Sendable
    func getHero(_ req: Request) async throws -> HeroDTO {
        heroDTO(try await ownedHero(req))
    }

    /// Replaces the hero; a changed look (appearance or avatar prompt) drops the cached visual profile.
    @Sendable
    func updateHero(_ req: Request) async throws -> HeroDTO {
        var hero = try await ownedHero(req)
        let body = try Self.validate(try req.body(of: API.Stories.updateHero))
        let lookChanged = body.appearance != hero.appearance || body.avatarPrompt != hero.avatarPrompt
        hero.name = body.name
        hero.traits = body.traits
        hero.appearance = body.appearance
        hero.avatarPrompt = body.avatarPrompt
        hero.updatedAt = services.now()
        if lookChanged { hero.visualProfile = nil }
        guard try await req.store.stories.updateHero(hero, lookChanged: lookChanged) else { throw APIError.notFound("Hero not found") }
        return heroDTO(hero)
    }

    /// Deletes the hero and its avatar; stories keep their own copy of the hero.
    @Sendable
    func deleteHero(_ req: Request) async throws {
        let user = try req.user
        guard let id = req.parameters.get("hero_id"), let avatar = try await req.store.stories.deleteHero(id: id, userID: user.id) else {
            throw APIError.notFound("Hero not found")
        }
        if let avatar, let key = BlobKey(rawValue: avatar) { try? await stories.blobs.delete(key) }
    }

    /// Draws the hero's avatar (and extracts the visual profile when the hero has none yet), `standard` or `hd` (the
    /// optional body's `quality`; see ``AvatarQuality/imageQuality(model:standard:)``).
    @Sendable
    func avatar(_ req: Request) async throws -> HeroDTO {
        var hero = try await ownedHero(req)
        let body = try req.decodeOptionalJSON(AvatarRequest.self) ?? AvatarRequest()
        try services.checkRateLimit("stories-avatar:\(hero.userID)", ChorusConfiguration.RateLimit(limit: 10, window: 3_600))
        try await stories.requireBudget()
        let settings = stories.settings
        let quality = (body.quality ?? .standard).imageQuality(model: settings.imageModel, standard: settings.imageQuality)
        let picture: GeneratedImage
        do {
            picture = try await MeteringContext.with(userID: hero.userID, subject: "hero:\(hero.id)") {
                if hero.visualProfile == nil,
                    let profile = try? await StoryPipeline(services: services).extractProfile(
                        name: hero.name, appearance: hero.appearance, avatarPrompt: hero.avatarPrompt)
                {
                    hero.visualProfile = StoryStore.json(profile)
                }
                let prompt = IllustrationPrompt.avatar(
                    heroName: hero.name, traits: hero.traits, appearance: hero.appearance, avatarPrompt: hero.avatarPrompt)
                do {
                    return try await stories.images.generate(
                        ImageGenerationRequest(model: settings.imageModel, prompt: prompt, size: settings.imageSize, quality: quality))
                } catch ImageGenerationError.contentPolicy {
                    return try await stories.images.generate(
                        ImageGenerationRequest(model: settings.imageModel, prompt: IllustrationPrompt.fallback, size: settings.imageSize, quality: quality))
                }
            }
        } catch let error as ProviderError {
            req.logger.warning("avatar generation failed", metadata: ["error": .string("\(error)")])
            throw APIError.unavailable(retryAfter: 30, detail: "The picture could not be drawn right now. Please try again in a moment.")
        } catch ImageGenerationError.contentPolicy {
            throw APIError.invalid("avatar_prompt", "This description could not be drawn. Please describe the hero differently.")
        }
        let key = "heroes/\(hero.id)/avatar-\(Int(services.now().timeIntervalSince1970 * 1000)).png"
        _ = try await stories.blobs.put(BlobKey(rawValue: key)!, data: picture.png, contentType: "image/png")
        let previous = hero.avatarBlobKey
        try await req.store.stories.setHeroAvatar(id: hero.id, blobKey: key, now: services.now())
        if let profile = hero.visualProfile { try await req.store.stories.setHeroVisualProfile(id: hero.id, profile: profile) }
        if let previous, let old = BlobKey(rawValue: previous) { try? await stories.blobs.delete(old) }
        hero.avatarBlobKey = key
        return heroDTO(hero)
    }

    // MARK: - Voices and events

    @Sendable
    func voices(_ req: Request) async throws -> StoryVoicesResponse {
        StoryVoicesResponse(voices: StoryVoiceCatalog.all.map { StoryVoiceDTO(id: $0.id, name: $0.name, description: $0.description) })
    }

    /// Built-in events in `?language=` (default English).
    @Sendable
    func builtInEvents(_ req: Request) async throws -> StoryEventsResponse {
        let language = try Self.language(req.query[String.self, at: "language"] ?? "en")
        return StoryEventsResponse(
            events: StoryEventCatalog.all.map {
                StoryEventDTO(id: $0.id, title: $0.title(language), promptSeed: $0.promptSeed(language), category: $0.category, custom: false)
            })
    }

    static func language(_ code: String) throws -> StoryLanguage {
        guard let language = StoryLanguage(code: code) else { throw APIError.invalid("language", "Use en, es, fr, de or it") }
        return language
    }

    static func customEventDTO(_ event: CustomEventRecord) -> StoryEventDTO {
        StoryEventDTO(
            id: event.id, title: event.title, promptSeed: event.promptSeed, category: event.category, description: event.description,
            ageRange: event.ageRange, tone: event.tone, keywords: event.keywords, custom: true)
    }

    private static func checkEventFields(description: String, category: String, ageRange: String, tone: String, title: String?) throws {
        var errors: [FieldError] = []
        if description.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || description.count > 1_000 {
            errors.append(FieldError(field: "description", message: "Use 1 to 1000 characters"))
        }
        if let title, title.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || title.count > 100 {
            errors.append(FieldError(field: "title", message: "Use 1 to 100 characters"))
        }
        for (field, value) in [("category", category), ("age_range", ageRange), ("tone", tone)] where value.isEmpty || value.count > 40 {
            errors.append(FieldError(field: field, message: "Use 1 to 40 characters"))
        }
        guard errors.isEmpty else { throw APIError.validation(summary: "The event is not valid", errors: errors) }
    }

    /// Saves a custom event. Its text passes the content policy filter (and the provider's moderation when
    /// configured); without a title or prompt seed, the assistant writes them.
    @Sendable
    func createCustomEvent(_ req: Request) async throws -> StoryEventDTO {
        let user = try req.user
        let body = try req.body(of: API.Stories.createCustomEvent)
        try Self.checkEventFields(description: body.description, category: body.category, ageRange: body.ageRange, tone: body.tone, title: body.title)
        let description = try await stories.screenUserText(body.description, field: "description", language: nil)
        var title = try await body.title.asyncMap { try await stories.screenUserText($0, field: "title", language: nil) }
        var seed = try await body.promptSeed.asyncMap { try await stories.screenUserText($0, field: "prompt_seed", language: nil) }
        var keywords = body.keywords ?? []
        if title == nil || seed == nil {
            let answer = try await assistant(
                title: title, description: description, category: body.category, ageRange: body.ageRange, tone: body.tone, language: .en,
                userID: user.id)
            title = title ?? answer.title
            seed = seed ?? answer.promptSeed
            if keywords.isEmpty { keywords = answer.keywords }
        }
        let event = CustomEventRecord(
            id: UUID().uuidString.lowercased(), userID: user.id, title: stories.filter.filter(title ?? "", language: nil).text,
            description: description,
            category: body.category, ageRange: body.ageRange, tone: body.tone, promptSeed: stories.filter.filter(seed ?? "", language: nil).text,
            keywords: Array(keywords.prefix(8)), createdAt: services.now())
        try await req.store.stories.insertCustomEvent(event)
        return Self.customEventDTO(event)
    }

    @Sendable
    func listCustomEvents(_ req: Request) async throws -> StoryEventsResponse {
        let user = try req.user
        return StoryEventsResponse(events: try await req.store.stories.customEvents(userID: user.id).map(Self.customEventDTO))
    }

    @Sendable
    func deleteCustomEvent(_ req: Request) async throws {
        let user = try req.user
        guard let id = req.parameters.get("event_id"), try await req.store.stories.deleteCustomEvent(id: id, userID: user.id) else {
            throw APIError.notFound("Event not found")
        }
    }

    /// The seed's assistant: title, prompt seed, keywords, similar events.
    @Sendable
    func assist(_ req: Request) async throws -> EventAssistResponse {
        let user = try req.user
        let body = try req.body(of: API.Stories.assist)
        try Self.checkEventFields(description: body.description, category: body.category, ageRange: body.ageRange, tone: body.tone, title: body.title)
        let language = try Self.language(body.language ?? "en")
        let description = try await stories.screenUserText(body.description, field: "description", language: nil)
        let title = try await body.title.asyncMap { try await stories.screenUserText($0, field: "title", language: nil) }
        let answer = try await assistant(
            title: title, description: description, category: body.category, ageRange: body.ageRange, tone: body.tone, language: language,
            userID: user.id)
        return EventAssistResponse(
            title: stories.filter.filter(answer.title, language: language).text,
            promptSeed: stories.filter.filter(answer.promptSeed, language: language).text, keywords: answer.keywords,
            similarEvents: answer.similarEvents)
    }

    private func assistant(
        title: String?, description: String, category: String, ageRange: String, tone: String, language: StoryLanguage, userID: String
    ) async throws -> EventAssistPrompt.Answer {
        try services.checkRateLimit("stories-assist:\(userID)", ChorusConfiguration.RateLimit(limit: 60, window: 3_600))
        try await stories.requireBudget()
        let prompt = EventAssistPrompt.prompt(
            title: title, description: description, category: category, ageRange: ageRange, tone: tone, language: language)
        do {
            let generated = try await stories.text.generate(
                TextGenerationRequest(
                    model: stories.settings.textModel,
                    messages: [ChatMessage(role: .system, content: prompt.system), ChatMessage(role: .user, content: prompt.user)],
                    format: StructuredOutputFormat(name: EventAssistPrompt.schemaName, schemaJSON: EventAssistPrompt.jsonSchema),
                    maxOutputTokens: EventAssistPrompt.maxOutputTokens, temperature: 0.7,
                    safetyIdentifier: StoryPipeline.safetyIdentifier(userID)))
            return try EventAssistPrompt.decode(json: Data(generated.content.utf8))
        } catch let error as ProviderError {
            throw APIError.unavailable(
                retryAfter: 30, detail: "The assistant is not available right now (\(error.isTransient ? "busy" : "error")). Please try again.")
        } catch {
            throw APIError.unavailable(retryAfter: 30, detail: "The assistant could not help with this description. Please rephrase it.")
        }
    }

    // MARK: - Stories

    /// `POST /stories` → 202 with the story id; the pipeline runs as jobs.
    @Sendable
    func createStory(_ req: Request) async throws -> Response {
        let user = try req.user
        let body = try req.body(of: API.Stories.createStory)
        let now = services.now()
        var errors: [FieldError] = []
        let language = StoryLanguage(code: body.language)
        if language == nil { errors.append(FieldError(field: "language", message: "Use en, es, fr, de or it")) }
        if StoryVoiceCatalog.voice(body.voice) == nil {
            errors.append(FieldError(field: "voice", message: "Use one of \(StoryVoiceCatalog.all.map(\.id).joined(separator: ", "))"))
        }
        if (body.eventID == nil) == (body.customEventID == nil) {
            errors.append(FieldError(field: "event_id", message: "Give exactly one of event_id and custom_event_id"))
        }
        let subscriptions = try await req.store.purchases.subscriptions(userID: user.id).map(\.snapshot)
        let premium = services.entitlements.current(subscriptions, at: now)?.isActive ?? false
        for problem in StoryRequestPolicy.problems(
            lengthMinutes: body.lengthMinutes, illustrationCount: body.illustrationCount, tierCap: stories.illustrationCap(premium: premium))
        {
            errors.append(FieldError(field: problem.field, message: problem.message))
        }
        guard errors.isEmpty, let language else { throw APIError.validation(summary: "The story request is not valid", errors: errors) }
        guard let hero = try await req.store.stories.hero(id: body.heroID, userID: user.id) else { throw APIError.notFound("Hero not found") }
        let title: String
        let seed: String
        if let eventID = body.eventID {
            guard let event = StoryEventCatalog.event(eventID) else { throw APIError.notFound("Event not found") }
            (title, seed) = (event.title(language), event.promptSeed(language))
        } else {
            guard let event = try await req.store.stories.customEvent(id: body.customEventID ?? "", userID: user.id) else {
                throw APIError.notFound("Event not found")
            }
            (title, seed) = (event.title, event.promptSeed)
        }
        try services.checkRateLimit("stories-create:\(user.id)", ChorusConfiguration.RateLimit(limit: 30, window: 3_600))
        try await stories.admitStory()
        let story = StoryRecord(
            id: UUID().uuidString.lowercased(), userID: user.id, heroID: hero.id,
            snapshot: StorySnapshot(
                heroName: hero.name, heroTraits: hero.traits, heroAppearance: hero.appearance, heroAvatarPrompt: hero.avatarPrompt,
                eventID: body.eventID,
                customEventID: body.customEventID, eventTitle: title, eventPromptSeed: seed),
            language: language.rawValue, voice: body.voice.lowercased(), lengthMinutes: body.lengthMinutes, illustrationCount: body.illustrationCount,
            stages: [:], failureStage: nil, failure: nil, title: nil, content: nil, scenes: nil, audioBlobKey: nil, audioDurationMs: nil,
            narrationPartsTotal: nil, cancelledAt: nil, createdAt: now, updatedAt: now)
        try await req.store.writeTransaction { store in
            try await store.stories.insertStory(story)
            try await StoryPipeline.enqueue(JobKind.storyText, payload: story.id, store: store, now: now)
        }
        services.jobSignal.notify()
        req.logger.info("story requested", metadata: ["story_id": .string(story.id), "length_minutes": .stringConvertible(story.lengthMinutes)])
        let response = try req.json(
            StoryAcceptedDTO(id: story.id), status: HTTPResponseStatus(statusCode: API.Stories.createStory.successStatus))
        response.headers.replaceOrAdd(name: .location, value: API.Stories.story.path(story.id))
        return response
    }

    private func ownedStory(_ req: Request) async throws -> StoryRecord {
        let user = try req.user
        guard let id = req.parameters.get("story_id"), let story = try await req.store.stories.story(id: id, userID: user.id), story.cancelledAt == nil else {
            throw APIError.notFound("Story not found")
        }
        return story
    }

    @Sendable
    func getStory(_ req: Request) async throws -> StoryDTO {
        try await services.storyDTO(try await ownedStory(req), store: req.store)
    }

    /// The user's library, newest first: `?limit=` (1–50, default 20) and `?cursor=` from the previous page.
    @Sendable
    func listStories(_ req: Request) async throws -> StoriesPage {
        let user = try req.user
        let limit = req.query[Int.self, at: "limit"] ?? 20
        guard (1...50).contains(limit) else { throw APIError.invalid("limit", "Use 1 to 50") }
        let before = try req.query[String.self, at: "cursor"].map { cursor -> Int64 in
            guard let value = Int64(cursor) else { throw APIError.invalid("cursor", "Use the next_cursor of the previous page") }
            return value
        }
        let page = try await req.store.stories.stories(userID: user.id, before: before, limit: limit + 1)
        var dtos: [StoryDTO] = []
        for story in page.prefix(limit) { dtos.append(try await services.storyDTO(story, store: req.store)) }
        let next = page.count > limit ? page[limit - 1].createdAt.epochMillis : nil
        return StoriesPage(stories: dtos, nextCursor: next.map(String.init))
    }

    /// Cancels the story's work in flight (jobs stop before their next provider call) and deletes it and its files.
    @Sendable
    func deleteStory(_ req: Request) async throws {
        let user = try req.user
        guard let id = req.parameters.get("story_id"), let keys = try await req.store.stories.deleteStory(id: id, userID: user.id, now: services.now()) else {
            throw APIError.notFound("Story not found")
        }
        for key in keys.compactMap(BlobKey.init(rawValue:)) { try? await stories.blobs.delete(key) }
        await services.publishStoryProgress(StoryProgressDTO(type: "deleted", storyID: id), userID: user.id)
    }

    /// Retries one failed illustration (202; the story's illustrations stage runs again for it).
    @Sendable
    func retryIllustration(_ req: Request) async throws -> StoryDTO {
        let story = try await ownedStory(req)
        guard let number = req.parameters.get("number", as: Int.self) else { throw APIError.notFound("Illustration not found") }
        let items = try await req.store.stories.illustrations(storyID: story.id)
        guard items.contains(where: { $0.number == number }) else { throw APIError.notFound("Illustration not found") }
        try await stories.admitStory()
        let now = services.now()
        let reopened = try await req.store.writeTransaction { store -> Bool in
            guard try await store.stories.reopenIllustration(storyID: story.id, number: number) else { return false }
            try await StoryPipeline.enqueue(JobKind.storyIllustrations, payload: "\(story.id)#\(number)", store: store, now: now)
            return true
        }
        guard reopened else { throw APIError.detail(.conflict, "Only a failed illustration can be retried") }
        services.jobSignal.notify()
        let refreshed = try await req.store.stories.story(id: story.id, userID: story.userID) ?? story
        return try await services.storyDTO(refreshed, store: req.store)
    }

    // MARK: - Progress stream

    /// `GET /stories/{id}/events`: server-sent events. First `snapshot` (the whole story), then `stage`, `text` (the
    /// story's text as it is ready), `narration_part`, `illustration` and finally `done` (the whole story) or `deleted`;
    /// a comment line every 15 s keeps proxies from closing the stream.
    @Sendable
    func progress(_ req: Request) async throws -> Response {
        let user = try req.user
        let services = self.services
        let (stream, loaded) = try await HubEventStream.listening(hub: services.messaging.hub, key: user.id) {
            () async throws -> (StoryRecord, StoryDTO) in
            let story = try await self.ownedStory(req)
            return (story, try await services.storyDTO(story, store: req.store))
        }
        let (story, snapshot) = loaded
        let store = try req.store
        return stream.response { sse in
            try await sse.send("snapshot", StoryProgressDTO(type: "snapshot", storyID: story.id, story: snapshot))
            guard !story.isFinished else {
                try await sse.send("done", StoryProgressDTO(type: "done", storyID: story.id, story: snapshot))
                return
            }
            let decoder = ChorusJSON.makeDecoder()
            for await text in stream.events {
                if text.isEmpty {
                    try await sse.keepAlive()
                    continue
                }
                guard let event = try? decoder.decode(RealtimeEventDTO.self, from: Data(text.utf8)), let progress = event.story,
                    progress.storyID == story.id
                else { continue }
                try await sse.send(progress.type, progress)
                if progress.type == "deleted" { return }
                if progress.type == "stage", let current = try await store.stories.story(id: story.id, userID: nil), current.isFinished {
                    let dto = try await services.storyDTO(current, store: store)
                    try await sse.send("done", StoryProgressDTO(type: "done", storyID: story.id, story: dto))
                    return
                }
            }
        }
    }

    // MARK: - Files

    /// A story or hero file by signed URL, with `Range` support.
    @Sendable
    func file(_ req: Request) async throws -> Response {
        let folder = req.parameters.get("folder") ?? ""
        let key = [folder, req.parameters.get("owner_id") ?? "", req.parameters.get("file_name") ?? ""].joined(separator: "/")
        guard let signed = AudioURLSigner.signedQuery(req.url.query), let blobKey = BlobKey(rawValue: key), folder == "stories" || folder == "heroes"
        else { throw APIError.notFound("File not found") }
        guard stories.files.isValid(audioID: key, expires: signed.expires, signature: signed.signature, now: services.now()) else {
            throw APIError.detail(.forbidden, "This link is invalid or has expired; fetch the story again for a new one")
        }
        return try await AudioController.serve(blobKey, from: stories.blobs, request: req)
    }
}

extension Optional {
    fileprivate func asyncMap<U>(_ transform: (Wrapped) async throws -> U) async rethrows -> U? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
