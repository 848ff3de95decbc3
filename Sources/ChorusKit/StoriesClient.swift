import ChorusAPI
import Foundation

/// The user's story heroes. Reached through ``ChorusClient/heroes``.
public struct HeroesClient: Sendable {
    let session: APISession

    /// The user's heroes, oldest first.
    public func list() async throws -> [HeroDTO] {
        try await session.send(API.Stories.heroes.request()).heroes
    }

    /// Creates a hero (name 1–50 characters, up to 10 traits, appearance and avatar prompt up to 500 characters).
    /// - Throws: ``ChorusError/validation(_:)`` with the fields at fault.
    public func create(_ hero: HeroRequest) async throws -> HeroDTO {
        try await session.send(try API.Stories.createHero.request(json: hero))
    }

    public func hero(_ id: String) async throws -> HeroDTO {
        try await session.send(API.Stories.hero.request(id))
    }

    /// Replaces the hero; a new appearance or avatar prompt makes the next story extract the hero's look again.
    public func update(_ id: String, _ hero: HeroRequest) async throws -> HeroDTO {
        try await session.send(try API.Stories.updateHero.request(id, json: hero))
    }

    /// Deletes the hero and its avatar; stories keep their own copy of the hero.
    public func delete(_ id: String) async throws {
        try await session.send(API.Stories.deleteHero.request(id))
    }

    /// Draws the hero's avatar (seconds with a real image model), `standard` (the default) or `hd` (seed 004: drawn at
    /// the image model's highest quality, which costs several times as much); the answer carries its signed URL and
    /// the hero's visual profile, reused by every illustration.
    public func generateAvatar(_ id: String, quality: AvatarQuality = .standard) async throws -> HeroDTO {
        try await session.send(try API.Stories.generateAvatar.request(id, json: AvatarRequest(quality: quality)))
    }
}

/// Bedtime stories: events, the custom-event assistant, stories and their progress. Reached through
/// ``ChorusClient/stories``.
public struct StoriesClient: Sendable {
    let session: APISession

    /// The seven storytelling voices.
    public func voices() async throws -> [StoryVoiceDTO] {
        try await session.send(API.Stories.voices.request()).voices
    }

    /// The built-in events with titles and prompt seeds in `language` (`en`, `es`, `fr`, `de`, `it`).
    public func events(language: String = "en") async throws -> [StoryEventDTO] {
        try await session.send(API.Stories.events.request(query: [URLQueryItem(name: "language", value: language)])).events
    }

    public func customEvents() async throws -> [StoryEventDTO] {
        try await session.send(API.Stories.customEvents.request()).events
    }

    /// Saves a custom event; its text passes the content policy, and a missing title or prompt seed is written by the
    /// assistant.
    public func createCustomEvent(_ event: CustomEventRequest) async throws -> StoryEventDTO {
        try await session.send(try API.Stories.createCustomEvent.request(json: event))
    }

    public func deleteCustomEvent(_ id: String) async throws {
        try await session.send(API.Stories.deleteCustomEvent.request(id))
    }

    /// The assistant: a title, an enhanced prompt seed, keywords and similar events for a description.
    public func assist(_ request: EventAssistRequest) async throws -> EventAssistResponse {
        try await session.send(try API.Stories.assist.request(json: request))
    }

    /// Starts a story; returns its id at once (the story is written, narrated and illustrated in the background).
    public func create(_ request: CreateStoryRequest) async throws -> String {
        try await session.send(try API.Stories.createStory.request(json: request)).id
    }

    /// The story with every stage's status, its text, scenes, narration, illustrations and cost.
    public func story(_ id: String) async throws -> StoryDTO {
        try await session.send(API.Stories.story.request(id))
    }

    /// One page of the user's library, newest first; pass the previous page's `next_cursor` for the next.
    public func library(cursor: String? = nil, limit: Int = 20) async throws -> StoriesPage {
        var query = [URLQueryItem(name: "limit", value: String(limit))]
        if let cursor { query.append(URLQueryItem(name: "cursor", value: cursor)) }
        return try await session.send(API.Stories.library.request(query: query))
    }

    /// Deletes the story: work in flight stops and its files are removed.
    public func delete(_ id: String) async throws {
        try await session.send(API.Stories.deleteStory.request(id))
    }

    /// Draws a failed illustration again.
    /// - Throws: ``ChorusError`` with status 409 when the illustration is not failed.
    public func retryIllustration(story id: String, number: Int) async throws -> StoryDTO {
        try await session.send(API.Stories.retryIllustration.request(id, String(number)))
    }

    /// The story each time it changes (a stage, a narration part, an illustration), until it is finished: an
    /// `AsyncSequence` for SwiftUI's `.task`. It polls `GET /stories/{id}` every `interval`, so it works through any
    /// ``HTTPTransport``; apps that want pushes can read the server-sent events of `GET /stories/{id}/events`.
    public func progress(of id: String, interval: Duration = .seconds(1)) -> AsyncThrowingStream<StoryDTO, any Error> {
        let poller = StoryPoller(client: self, id: id, interval: interval)
        return AsyncThrowingStream { try await poller.next() }
    }
}

/// The state of one ``StoriesClient/progress(of:interval:)`` sequence.
actor StoryPoller {
    let client: StoriesClient
    let id: String
    let interval: Duration
    private var last: StoryDTO?
    private var done = false

    init(client: StoriesClient, id: String, interval: Duration) {
        self.client = client
        self.id = id
        self.interval = interval
    }

    func next() async throws -> StoryDTO? {
        guard !done else { return nil }
        while true {
            if last != nil { try await Task.sleep(for: interval) }
            let story = try await client.story(id)
            if story != last || last == nil {
                last = story
                done = story.stages.isFinished
                return story
            }
        }
    }
}
