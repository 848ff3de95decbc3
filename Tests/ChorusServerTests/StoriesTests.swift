import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Testing

@testable import ChorusServer

/// Stories end to end over loopback HTTP: the sandbox OpenAI writes, narrates and draws; faults are injected per
/// request through the sandbox's behavior, or the provider is an in-process fake (`Fakes.swift`).
@Suite("Stories")
struct StoriesTests {
    typealias Person = MessagingTests.Person

    /// Fast pictures: no pause between batches.
    static let environment = ["CHORUS_STORIES_ILLUSTRATION_SPACING_SECONDS": "0", "CHORUS_STORIES_FREE_ILLUSTRATIONS": "8"]
    /// Narration by `/v1/audio/speech` (`gpt-4o-mini-tts`, still served until 2027-01-06): the tests of restarts and
    /// deletion inject per-text faults and delays into that endpoint, which the Realtime emulator has no twin of.
    static let httpSpeechEnvironment = environment.merging(["CHORUS_STORIES_TTS_MODEL": "gpt-4o-mini-tts"]) { $1 }

    static func hero(_ server: TestServer, _ person: Person, name: String = "Mia") async throws -> HeroDTO {
        let reply = try await server.request(
            .POST, "/heroes", token: person.token,
            json: HeroRequest(
                name: name, traits: ["brave", "kind"], appearance: "a girl with red curly hair, green eyes and freckles who wears a yellow raincoat"))
        #expect(reply.status == 201, "\(reply.text)")
        return try reply.decode(HeroDTO.self)
    }

    static func create(
        _ server: TestServer, _ person: Person, hero: String, minutes: Int, illustrations: Int, language: String = "en", voice: String = "coral"
    ) async throws -> String {
        let reply = try await server.request(
            .POST, "/stories", token: person.token,
            json: CreateStoryRequest(
                heroID: hero, eventID: "first_day_of_school", lengthMinutes: minutes, language: language, voice: voice,
                illustrationCount: illustrations))
        #expect(reply.status == 202, "\(reply.text)")
        #expect(reply.headers.first(name: "Location")?.hasPrefix("/stories/") == true)
        return try reply.decode(StoryAcceptedDTO.self).id
    }

    static func story(_ server: TestServer, _ person: Person, _ id: String) async throws -> StoryDTO {
        try await server.request(.GET, "/stories/\(id)", token: person.token).decode(StoryDTO.self)
    }

    static func finished(_ story: StoryDTO) -> Bool { story.stages.isFinished }

    /// The path and query of an absolute URL of this server.
    static func path(_ server: TestServer, _ url: String) -> String {
        #expect(url.hasPrefix(server.baseURL), "\(url) is an absolute URL of the server")
        return String(url.dropFirst(server.baseURL.count))
    }

    static func setFaults(_ server: TestServer, _ json: String) async throws {
        let reply = try await server.request(.PUT, "/sandbox/openai/behavior", body: Data(json.utf8), headers: [("Content-Type", "application/json")])
        #expect(reply.status == 200, "\(reply.text)")
    }

    @Test(
        "avatars are standard by default and HD on request: the image model's configured and highest quality, metered by their tokens",
        arguments: TestDatabase.all)
    func avatarQualities(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: Self.environment) { server in
            let mia = try await MessagingTests.person(server, name: "parent")
            let hero = try await Self.hero(server, mia)
            /// The image output tokens and cost metered for the user so far.
            func images() async throws -> (tokens: Int, usd: Int64) {
                let usage = try await server.request(.GET, "/me/usage", token: mia.token).decode(ProviderUsageReport.self)
                let items = usage.features.flatMap(\.items).filter { $0.operation == "image" }
                return (items.reduce(0) { $0 + $1.outputTokens }, items.reduce(0) { $0 + $1.usdMicros })
            }
            func draw(_ body: (any Encodable)?, expecting tokens: Int) async throws -> (tokens: Int, usd: Int64) {
                let reply = try await server.request(.POST, "/heroes/\(hero.id)/avatar", token: mia.token, json: body)
                #expect(reply.status == 200, "\(reply.text)")
                #expect(try reply.decode(HeroDTO.self).avatarURL != nil)
                try await server.eventually("the picture is metered") { try await images().tokens == tokens }
                return try await images()
            }
            // No body: standard, drawn at CHORUS_STORIES_IMAGE_QUALITY (medium: 1,056 image tokens in the sandbox).
            let standard = try await draw(nil, expecting: 1_056)
            // HD: `high` (4,160 image tokens), about four times the cost of a standard one.
            let hd = try await draw(AvatarRequest(quality: .hd), expecting: 1_056 + 4_160)
            #expect(hd.usd - standard.usd > 3 * standard.usd, "\(standard.usd) then \(hd.usd)")
            _ = try await draw(AvatarRequest(quality: .standard), expecting: 1_056 * 2 + 4_160)
            // Anything else is refused before any picture is drawn.
            let refused = try await server.request(
                .POST, "/heroes/\(hero.id)/avatar", token: mia.token, body: Data(#"{"quality":"ultra"}"#.utf8),
                headers: [("Content-Type", "application/json")])
            #expect(refused.status == 422 && refused.text.contains("quality"), "\(refused.text)")
            #expect(try await images().tokens == 1_056 * 2 + 4_160)
        }
    }

    @Test(
        "a 10-minute story with 8 illustrations: text, scenes, chunked narration joined into one file, pictures, progress events, cost",
        arguments: TestDatabase.all)
    func fullPipeline(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: Self.environment) { server in
            let mia = try await MessagingTests.person(server, name: "parent")
            let hero = try await Self.hero(server, mia)
            let avatar = try await server.request(.POST, "/heroes/\(hero.id)/avatar", token: mia.token).decode(HeroDTO.self)
            let avatarURL = try #require(avatar.avatarURL)
            #expect(avatar.visualProfile?.hairColor == "red" && avatar.visualProfile?.eyeColor == "green")
            let png = try await server.request(.GET, Self.path(server, avatarURL))
            #expect(png.status == 200 && png.body.prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))

            let id = try await Self.create(server, mia, hero: hero.id, minutes: 10, illustrations: 8)
            // The progress stream, read while the story is made: it ends with `done`.
            async let stream = server.request(.GET, "/stories/\(id)/events", token: mia.token)
            try await server.eventually(timeout: .seconds(60), "the story is finished") { Self.finished(try await Self.story(server, mia, id)) }
            let events = try await stream
            #expect(events.headers.first(name: "Content-Type")?.hasPrefix("text/event-stream") == true)
            let names = events.text.split(separator: "\n").filter { $0.hasPrefix("event: ") }.map { String($0.dropFirst(7)) }
            #expect(names.first == "snapshot" && names.last == "done", "\(names)")
            for expected in ["text", "narration_part", "illustration", "stage"] { #expect(names.contains(expected), "\(expected) in \(names)") }

            let story = try await Self.story(server, mia, id)
            #expect(story.stages == StoryStagesDTO(text: "succeeded", scenes: "succeeded", narration: "succeeded", illustrations: "succeeded"))
            let content = try #require(story.content)
            // The text arrived as it was written: several `text` events whose pieces join into the title and story.
            let pieces = events.text.components(separatedBy: "\n\n").filter { $0.hasPrefix("event: text\n") }.compactMap { block in
                block.split(separator: "\n").last.flatMap {
                    try? ChorusJSON.makeDecoder().decode(StoryProgressDTO.self, from: Data($0.dropFirst(6).utf8))
                }?.delta
            }
            #expect(pieces.count > 5 && pieces.joined().contains(content) && pieces.joined().hasPrefix(story.title ?? "-"), "\(pieces.count) pieces")
            let words = content.split(whereSeparator: \.isWhitespace).count
            #expect(abs(words - 1_500) <= 75, "\(words) words")
            #expect(content.contains("Mia") && content.contains("brave") && content.contains("kind") && content.contains("first day of school. Mia discovers"))
            #expect(story.title?.isEmpty == false)

            // Narration over the provider's 4,096-character limit: spoken in parts, joined into one file whose length
            // is the sum of the parts'.
            let audio = try #require(story.audio)
            #expect(content.count > 4_096 && audio.partsTotal == audio.parts.count && audio.parts.count >= 3)
            let sum = audio.parts.reduce(0) { $0 + $1.durationSeconds }
            #expect(abs((audio.durationSeconds ?? 0) - sum) < 0.01, "\(audio.durationSeconds ?? 0) vs \(sum)")
            let ranged = try await server.request(.GET, Self.path(server, try #require(audio.url)), headers: [("Range", "bytes=0-99")])
            #expect(ranged.status == 206 && ranged.body.count == 100)
            // Narrated on the Realtime API (the default model): each part read aloud by a gpt-realtime-2.1-mini session,
            // encoded to MP3 at 24 kHz.
            let narration = try await server.request(.GET, Self.path(server, try #require(audio.url)))
            #expect(narration.headers.first(name: "Content-Type") == "audio/mpeg")
            #expect(try MP3Joiner.frames(of: narration.body).sampleRate == 24_000)
            let read = try await VoiceTests.realtimeReadings(server)
            #expect(read.count == audio.parts.count)
            #expect(read.joined(separator: " ").split(whereSeparator: \.isWhitespace) == content.split(whereSeparator: \.isWhitespace))

            // Eight scenes with timestamps from the narration, increasing and within it; eight pictures.
            #expect(story.scenes.count == 8)
            let stamps = story.scenes.compactMap(\.timestampSeconds)
            #expect(stamps.count == 8 && stamps == stamps.sorted() && (stamps.last ?? 0) <= (audio.durationSeconds ?? 0))
            #expect(story.illustrations.count == 8 && story.illustrations.allSatisfy { $0.status == "succeeded" && $0.url != nil })
            #expect(story.illustrations.map(\.timestampSeconds) == story.scenes.map(\.timestampSeconds))
            var pictures = Set<Data>()
            for illustration in story.illustrations {
                pictures.insert(try await server.request(.GET, Self.path(server, try #require(illustration.url))).body)
            }
            #expect(pictures.count == 8, "every scene has its own picture")

            // Every picture prompt carried the hero's visual profile, extracted once and cached on the hero.
            #expect(try await VoiceTests.providerRequests(server, path: "images/generations", containing: "hair: red") == 8)
            #expect(try await VoiceTests.providerRequests(server, path: "chat/completions", containing: "visual_profile") == 1)
            #expect(try await server.request(.GET, "/heroes/\(hero.id)", token: mia.token).decode(HeroDTO.self).visualProfile != nil)

            // Cost: the sum of the story's provider calls, text, speech and pictures.
            #expect(story.cost.usdMicros > 0 && story.cost.usdMicros == story.cost.items.reduce(0) { $0 + $1.usdMicros })
            #expect(Set(story.cost.items.map(\.operation)) == ["chat", "image", "speech"])
            #expect(story.cost.items.first { $0.operation == "image" }?.calls == 8)
            let spoken = story.cost.items.first { $0.operation == "speech" }?.characters ?? 0
            #expect(spoken <= content.count && content.count - spoken < 100, "\(spoken) characters spoken of \(content.count)")

            // The library, and privacy: another user sees nothing.
            let library = try await server.request(.GET, "/stories", token: mia.token).decode(StoriesPage.self)
            #expect(library.stories.map(\.id) == [id])
            let stranger = try await MessagingTests.person(server, name: "stranger")
            #expect(try await server.request(.GET, "/stories/\(id)", token: stranger.token).status == 404)
            #expect(try await server.request(.DELETE, "/stories/\(id)", token: stranger.token).status == 404)
            #expect(try await server.request(.GET, "/stories/\(id)/events", token: stranger.token).status == 404)
            #expect(try await server.request(.GET, "/heroes/\(hero.id)", token: stranger.token).status == 404)
            #expect(try await server.request(.GET, "/stories", token: stranger.token).decode(StoriesPage.self).stories.isEmpty)
            var forged = try #require(story.illustrations.first?.url)
            forged = forged.replacingOccurrences(of: "illustration-1", with: "illustration-2")
            #expect(try await server.request(.GET, Self.path(server, forged)).status == 403)
        }
    }

    @Test("the illustration timeout is the image client's deadline on the wire: a picture the model takes too long to draw fails as a timeout")
    func illustrationTimeoutOnTheWire() async throws {
        let environment = Self.environment.merging([
            "CHORUS_STORIES_ILLUSTRATION_TIMEOUT_SECONDS": "1", "CHORUS_STORIES_ILLUSTRATION_ATTEMPTS": "1",
        ]) { $1 }
        try await TestServer.run(on: .sqlite, environment: environment) { server in
            try await Self.setFaults(
                server, #"{"faults":[{"kind":"timeout","endpoint":"images/generations","match":"Scene 1:","delay_ms":2500}]}"#)
            let parent = try await MessagingTests.person(server, name: "parent")
            let hero = try await Self.hero(server, parent)
            let id = try await Self.create(server, parent, hero: hero.id, minutes: 2, illustrations: 2)
            try await server.eventually(timeout: .seconds(40), "the story is finished") { Self.finished(try await Self.story(server, parent, id)) }
            let items = Dictionary(uniqueKeysWithValues: try await Self.story(server, parent, id).illustrations.map { ($0.number, $0) })
            #expect(items[1]?.status == "failed" && items[1]?.errorType == "timeout", "\(String(describing: items[1]))")
            #expect(items[2]?.status == "succeeded")
        }
    }

    @Test(
        "illustration failures: a rate limit is waited out, a refused prompt falls back to the safe one, timeouts fail the item only and it can be retried once at a time"
    )
    func illustrationFailures() async throws {
        let environment = Self.environment.merging(["CHORUS_STORIES_ILLUSTRATION_ATTEMPTS": "2"]) { $1 }
        // The image model, in process: what its client reports for a 429, a refused prompt, a deadline passed, a 500.
        let images = FakeImageGenerator(failures: [
            .init(match: "Scene 1:", error: ProviderError.rateLimited(retryAfter: .seconds(1), message: "Rate limit reached")),
            .init(match: "Scene 2:", error: ImageGenerationError.contentPolicy("Your request was rejected by the safety system.")),
            .init(match: "Scene 3:", error: ProviderError.unavailable("openai timed out"), times: 2),
            .init(match: "Scene 4:", error: ProviderError.unavailable("openai answered 500"), times: 2),
        ])
        try await TestServer.run(on: .sqlite, environment: environment, options: .testing().fake(\.images, images)) { server in
            let parent = try await MessagingTests.person(server, name: "parent")
            let hero = try await Self.hero(server, parent)
            let id = try await Self.create(server, parent, hero: hero.id, minutes: 2, illustrations: 4, language: "fr", voice: "fable")
            try await server.eventually(timeout: .seconds(40), "the story is finished") { Self.finished(try await Self.story(server, parent, id)) }
            let story = try await Self.story(server, parent, id)
            #expect(story.stages.narration == "succeeded" && story.stages.illustrations == "partial", "\(story.stages)")
            let items = Dictionary(uniqueKeysWithValues: story.illustrations.map { ($0.number, $0) })
            #expect(items[1]?.status == "succeeded" && items[1]?.errorType == "rate_limit" && items[1]?.retryCount == 1)
            #expect(items[2]?.status == "succeeded" && items[2]?.usedFallbackPrompt == true && items[2]?.errorType == "content_policy")
            #expect(items[3]?.status == "failed" && items[3]?.errorType == "timeout" && items[3]?.retryCount == 2 && items[3]?.lastAttemptAt != nil)
            #expect(items[4]?.status == "failed" && items[4]?.errorType == "server_error")
            #expect(images.requests.filter { $0.prompt.contains("Colorful happy cartoon characters") }.count == 1)
            #expect(story.content?.contains("Mia") == true && story.language == "fr")

            // Ten concurrent retries of the timed-out picture: exactly one is accepted.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<10 {
                    group.addTask { try await server.request(.POST, "/stories/\(id)/illustrations/3/retry", token: parent.token).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.sorted() == [202] + Array(repeating: 409, count: 9), "\(statuses)")
            try await server.eventually("the retried picture is drawn") {
                try await Self.story(server, parent, id).illustrations.first { $0.number == 3 }?.status == "succeeded"
            }
            #expect(try await server.request(.POST, "/stories/\(id)/illustrations/3/retry", token: parent.token).status == 409)
            #expect(try await server.request(.POST, "/stories/\(id)/illustrations/9/retry", token: parent.token).status == 404)
            #expect(try await server.request(.POST, "/stories/\(id)/illustrations/4/retry", token: parent.token).status == 202)
            try await server.eventually("the story is complete after the retries") {
                try await Self.story(server, parent, id).stages.illustrations == "succeeded"
            }
        }
    }

    @Test("a restart in the middle of the narration resumes it without repeating finished stages or provider calls")
    func restartResumes() async throws {
        let provisioned = try TestDatabase.sqlite.make()
        defer { provisioned.drop() }
        var parent: Person?
        var id = ""
        var partsBefore = 0
        try await TestServer.run(on: .sqlite, database: provisioned, environment: Self.httpSpeechEnvironment) { server in
            // The last part of the narration (the one with the closing words) keeps failing on this instance.
            try await Self.setFaults(server, #"{"faults":[{"kind":"server_error","endpoint":"audio/speech","match":"sweet dreams","times":100}]}"#)
            let person = try await MessagingTests.person(server, name: "parent")
            parent = person
            let hero = try await Self.hero(server, person)
            id = try await Self.create(server, person, hero: hero.id, minutes: 10, illustrations: 2)
            try await server.eventually(timeout: .seconds(30), "all parts but the last are spoken and the pictures drawn") {
                let story = try await Self.story(server, person, id)
                return story.audio?.partsReady == (story.audio?.partsTotal ?? 0) - 1 && story.stages.illustrations == "succeeded"
            }
            partsBefore = try await Self.story(server, person, id).audio?.partsReady ?? 0
            #expect(try await VoiceTests.providerRequests(server, path: "chat/completions", containing: "Create a 10-minute bedtime story") == 1)
        }
        let person = try #require(parent)
        try await TestServer.run(on: .sqlite, database: provisioned, environment: Self.httpSpeechEnvironment) { server in
            try await server.eventually(timeout: .seconds(40), "the narration is finished after the restart") {
                try await Self.story(server, person, id).stages.narration == "succeeded"
            }
            let story = try await Self.story(server, person, id)
            #expect(partsBefore >= 2 && story.audio?.partsTotal == partsBefore + 1)
            // Only the missing part was spoken; the text, scenes and pictures were not made again.
            let speechRequests = try await server.request(.GET, "/sandbox/requests").json["requests"] as? [[String: Any]] ?? []
            let spoken = speechRequests.filter { ($0["path"] as? String)?.contains("audio/speech") == true }.map {
                String(($0["body"] as? String ?? "").prefix(80))
            }
            #expect(spoken.count == 1, "\(spoken)")
            #expect(try await VoiceTests.providerRequests(server, path: "chat/completions", containing: "") == 0)
            #expect(try await VoiceTests.providerRequests(server, path: "images/generations", containing: "") == 0)
            let sum = story.audio?.parts.reduce(0) { $0 + $1.durationSeconds } ?? 0
            #expect(abs((story.audio?.durationSeconds ?? 0) - sum) < 0.01)
        }
    }

    @Test("deleting a story mid-generation stops its provider calls and deletes its files")
    func deleteStopsWork() async throws {
        try await TestServer.run(on: .sqlite, environment: Self.httpSpeechEnvironment) { server in
            // Every narration part takes a second: the story is still being narrated when it is deleted.
            try await Self.setFaults(server, #"{"faults":[{"kind":"timeout","endpoint":"audio/speech","times":100,"delay_ms":1000}]}"#)
            let parent = try await MessagingTests.person(server, name: "parent")
            let hero = try await Self.hero(server, parent)
            let id = try await Self.create(server, parent, hero: hero.id, minutes: 12, illustrations: 8)
            try await server.eventually(timeout: .seconds(20), "the first part is spoken") {
                (try await Self.story(server, parent, id).audio?.partsReady ?? 0) >= 1
            }
            let before = try await Self.story(server, parent, id)
            let partURL = try #require(before.audio?.parts.first?.url)
            #expect(try await server.request(.DELETE, "/stories/\(id)", token: parent.token).status == 204)
            try await Task.sleep(for: .milliseconds(300))
            let counted = try await server.request(.GET, "/sandbox/openai/request-counts").json
            try await Task.sleep(for: .seconds(3))
            let later = try await server.request(.GET, "/sandbox/openai/request-counts").json
            #expect(counted["audio/speech"] as? Int == later["audio/speech"] as? Int, "\(counted) → \(later)")
            #expect(counted["images/generations"] as? Int == later["images/generations"] as? Int)
            #expect(try await server.request(.GET, "/stories/\(id)", token: parent.token).status == 404)
            #expect(try await server.request(.GET, Self.path(server, partURL)).status == 404)
            #expect(try await server.request(.DELETE, "/stories/\(id)", token: parent.token).status == 404)
        }
    }

    @Test("heroes, events, voices, the custom-event assistant with the content policy, validation and the budget")
    func catalogValidationAndBudget() async throws {
        try await TestServer.run(on: .sqlite, environment: ["CHORUS_STORIES_DAILY_BUDGET_USD": "0.01"]) { server in
            let parent = try await MessagingTests.person(server, name: "parent")
            #expect(try await server.request(.GET, "/stories/voices", token: parent.token).decode(StoryVoicesResponse.self).voices.count == 7)
            let french = try await server.request(.GET, "/stories/events?language=fr", token: parent.token).decode(StoryEventsResponse.self)
            #expect(french.events.first?.title == "Le premier jour d'école")
            #expect(try await server.request(.GET, "/stories/events?language=pt", token: parent.token).status == 422)

            // Heroes: validation, update (a new look drops the cached profile), delete.
            #expect(
                try await server.request(.POST, "/heroes", token: parent.token, json: HeroRequest(name: "", traits: [], appearance: "")).status == 422
            )
            let hero = try await Self.hero(server, parent, name: "Leo")
            let renamed = try await server.request(
                .PUT, "/heroes/\(hero.id)", token: parent.token,
                json: HeroRequest(name: "Léo", traits: ["curious"], appearance: "a boy with brown hair"))
            #expect(try renamed.decode(HeroDTO.self).name == "Léo")
            #expect(try await server.request(.GET, "/heroes", token: parent.token).decode(HeroesResponse.self).heroes.count == 1)

            // The assistant, and user text through the content policy filter.
            let assisted = try await server.request(
                .POST, "/stories/custom-events/assist", token: parent.token,
                json: EventAssistRequest(
                    description: "Our puppy learns to swim in the lake this summer", category: "pets", ageRange: "4-6", tone: "playful"))
            let answer = try assisted.decode(EventAssistResponse.self)
            #expect(!answer.title.isEmpty && !answer.promptSeed.isEmpty && !answer.keywords.isEmpty && answer.similarEvents.count == 3)
            let created = try await server.request(
                .POST, "/stories/custom-events", token: parent.token,
                json: CustomEventRequest(
                    description: "A monster with a sword visits, all alone", category: "adventure", ageRange: "4-6", tone: "calm"))
            #expect(created.status == 201, "\(created.text)")
            let event = try created.decode(StoryEventDTO.self)
            #expect(event.description == "A friendly creature with a magical wand visits, with friends" && event.custom && !event.title.isEmpty)
            let flagged = try await server.request(
                .POST, "/stories/custom-events", token: parent.token,
                json: CustomEventRequest(description: "Kill them all [sandbox:flag]", category: "adventure", ageRange: "4-6", tone: "calm"))
            #expect(flagged.status == 422, "the provider's moderation is a second opinion: \(flagged.text)")

            // Validation of story requests.
            func attempt(_ request: CreateStoryRequest) async throws -> Int {
                try await server.request(.POST, "/stories", token: parent.token, json: request).status
            }
            #expect(
                try await attempt(
                    CreateStoryRequest(heroID: hero.id, eventID: "birthday", lengthMinutes: 16, language: "en", voice: "nova", illustrationCount: 0))
                    == 422)
            #expect(
                try await attempt(
                    CreateStoryRequest(heroID: hero.id, eventID: "birthday", lengthMinutes: 3, language: "pt", voice: "nova", illustrationCount: 0))
                    == 422)
            #expect(
                try await attempt(
                    CreateStoryRequest(heroID: hero.id, eventID: "birthday", lengthMinutes: 3, language: "en", voice: "bob", illustrationCount: 0))
                    == 422)
            #expect(
                try await attempt(
                    CreateStoryRequest(heroID: hero.id, eventID: "birthday", lengthMinutes: 3, language: "en", voice: "nova", illustrationCount: 4))
                    == 422)
            #expect(
                try await attempt(CreateStoryRequest(heroID: hero.id, lengthMinutes: 3, language: "en", voice: "nova", illustrationCount: 0)) == 422)
            #expect(
                try await attempt(
                    CreateStoryRequest(heroID: "nope", eventID: "birthday", lengthMinutes: 3, language: "en", voice: "nova", illustrationCount: 0))
                    == 404)
            #expect(
                try await attempt(
                    CreateStoryRequest(heroID: hero.id, eventID: "nope", lengthMinutes: 3, language: "en", voice: "nova", illustrationCount: 0))
                    == 404)

            // A story from the custom event; its cost spends the day's budget, so the next request is refused.
            let reply = try await server.request(
                .POST, "/stories", token: parent.token,
                json: CreateStoryRequest(
                    heroID: hero.id, customEventID: event.id, lengthMinutes: 2, language: "de", voice: "onyx", illustrationCount: 0))
            let id = try reply.decode(StoryAcceptedDTO.self).id
            try await server.eventually(timeout: .seconds(30), "the story is finished") { Self.finished(try await Self.story(server, parent, id)) }
            let story = try await Self.story(server, parent, id)
            #expect(story.stages.illustrations == "skipped" && story.illustrations.isEmpty && story.heroName == "Léo")
            #expect(story.content?.contains("Léo") == true && story.cost.usdMicros > 10_000)
            let refused = try await server.request(
                .POST, "/stories", token: parent.token,
                json: CreateStoryRequest(heroID: hero.id, eventID: "birthday", lengthMinutes: 1, language: "en", voice: "nova", illustrationCount: 0))
            #expect(refused.status == 503 && refused.detail?.contains("daily spending limit") == true, "\(refused.text)")
            let usage = try await server.request(.GET, "/me/usage", token: parent.token).decode(ProviderUsageReport.self)
            #expect(usage.features.contains { $0.feature == "stories" && $0.usdMicros >= story.cost.usdMicros })

            // Deleting the hero keeps the story (it has its own copy); deleting the event likewise.
            #expect(try await server.request(.DELETE, "/heroes/\(hero.id)", token: parent.token).status == 204)
            #expect(try await server.request(.GET, "/heroes/\(hero.id)", token: parent.token).status == 404)
            #expect(try await server.request(.DELETE, "/stories/custom-events/\(event.id)", token: parent.token).status == 204)
            #expect(try await Self.story(server, parent, id).heroName == "Léo")
        }
    }
}
