import Foundation
import SQLKit

/// A hero as stored: traits as a JSON array, the visual profile as the model's JSON (extracted once, then reused).
struct HeroRecord: Sendable, Equatable {
    var id: String
    var userID: String
    var name: String
    var traits: [String]
    var appearance: String
    var avatarPrompt: String?
    var avatarBlobKey: String?
    var visualProfile: String?
    var createdAt: Date
    var updatedAt: Date
}

/// A user's own story event, with what the assistant (or the user) made of it.
struct CustomEventRecord: Sendable, Equatable {
    var id: String
    var userID: String
    var title: String
    var description: String
    var category: String
    var ageRange: String
    var tone: String
    var promptSeed: String
    var keywords: [String]
    var createdAt: Date
}

/// The hero and event as they were when the story was requested.
struct StorySnapshot: Sendable, Equatable, Codable {
    var heroName: String
    var heroTraits: [String]
    var heroAppearance: String
    var heroAvatarPrompt: String?
    var eventID: String?
    var customEventID: String?
    var eventTitle: String
    var eventPromptSeed: String

    enum CodingKeys: String, CodingKey {
        case heroName = "hero_name"
        case heroTraits = "hero_traits"
        case heroAppearance = "hero_appearance"
        case heroAvatarPrompt = "hero_avatar_prompt"
        case eventID = "event_id"
        case customEventID = "custom_event_id"
        case eventTitle = "event_title"
        case eventPromptSeed = "event_prompt_seed"
    }
}

/// One story row.
struct StoryRecord: Sendable, Equatable {
    var id: String
    var userID: String
    var heroID: String?
    var snapshot: StorySnapshot
    var language: String
    var voice: String
    var lengthMinutes: Int
    var illustrationCount: Int
    /// Stage name (`text`, `scenes`, `narration`, `illustrations`) → status.
    var stages: [String: String]
    var failureStage: String?
    var failure: String?
    var title: String?
    var content: String?
    /// The scenes with their timestamps, as JSON.
    var scenes: String?
    var audioBlobKey: String?
    var audioDurationMs: Int?
    var narrationPartsTotal: Int?
    var cancelledAt: Date?
    var createdAt: Date
    var updatedAt: Date
}

/// One synthesized part of a narration (stored as soon as it exists, so it can be played before the rest).
struct NarrationPartRecord: Sendable, Equatable {
    var part: Int
    var text: String
    var blobKey: String
    var durationMs: Int
}

/// One illustration's state.
struct IllustrationRecord: Sendable, Equatable {
    var number: Int
    var prompt: String
    var status: String
    var errorType: String?
    var error: String?
    var retryCount: Int
    var lastAttemptAt: Date?
    var usedFallback: Bool
    var blobKey: String?
    var timestampMs: Int?
}

/// Stories: heroes, custom events, stories with their pipeline stages, narration parts and illustrations.
///
/// Reached as `store.stories`, or `tx.stories` inside ``ChorusStore/writeTransaction(_:)``.
struct StoryStore: StoreArea {
    let base: ChorusStore

    // MARK: Heroes

    func insertHero(_ hero: HeroRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO heroes (id, user_id, name, traits, appearance, avatar_prompt, created_at, updated_at)
            VALUES (\(bind: hero.id), \(bind: hero.userID), \(bind: hero.name), \(bind: Self.json(hero.traits)), \(bind: hero.appearance),
              \(bind: hero.avatarPrompt), \(bind: hero.createdAt.epochMillis), \(bind: hero.updatedAt.epochMillis))
            """
        ).run()
    }

    func heroes(userID: String) async throws -> [HeroRecord] {
        try await reader.raw("SELECT * FROM heroes WHERE user_id = \(bind: userID) ORDER BY created_at, id").all().map(Self.hero)
    }

    /// The hero, when it is `userID`'s.
    func hero(id: String, userID: String) async throws -> HeroRecord? {
        try await sql.raw("SELECT * FROM heroes WHERE id = \(bind: id) AND user_id = \(bind: userID)").first().map(Self.hero)
    }

    /// Saves new details; a changed look drops the cached visual profile (it is extracted again when next needed).
    func updateHero(_ hero: HeroRecord, lookChanged: Bool) async throws -> Bool {
        let profile: SQLQueryString = lookChanged ? ", visual_profile = NULL" : ""
        return try await sql.raw(
            """
            UPDATE heroes SET name = \(bind: hero.name), traits = \(bind: Self.json(hero.traits)), appearance = \(bind: hero.appearance),
              avatar_prompt = \(bind: hero.avatarPrompt), updated_at = \(bind: hero.updatedAt.epochMillis)\(profile)
            WHERE id = \(bind: hero.id) AND user_id = \(bind: hero.userID) RETURNING id
            """
        ).first() != nil
    }

    /// Deletes the hero; returns its avatar's blob key (to delete) or `nil` when it was not there.
    func deleteHero(id: String, userID: String) async throws -> String?? {
        guard let row = try await sql.raw("DELETE FROM heroes WHERE id = \(bind: id) AND user_id = \(bind: userID) RETURNING avatar_blob_key").first()
        else { return nil }
        return .some(try row.optionalString("avatar_blob_key"))
    }

    func setHeroAvatar(id: String, blobKey: String, now: Date) async throws {
        try await sql.raw(
            "UPDATE heroes SET avatar_blob_key = \(bind: blobKey), updated_at = \(bind: now.epochMillis) WHERE id = \(bind: id)"
        ).run()
    }

    /// Caches the visual profile extracted for the hero's current look.
    func setHeroVisualProfile(id: String, profile: String) async throws {
        try await sql.raw("UPDATE heroes SET visual_profile = \(bind: profile) WHERE id = \(bind: id)").run()
    }

    private static func hero(_ row: any SQLRow) throws -> HeroRecord {
        HeroRecord(
            id: try row.string("id"), userID: try row.string("user_id"), name: try row.string("name"),
            traits: try decodeJSON([String].self, try row.string("traits")), appearance: try row.string("appearance"),
            avatarPrompt: try row.optionalString("avatar_prompt"), avatarBlobKey: try row.optionalString("avatar_blob_key"),
            visualProfile: try row.optionalString("visual_profile"), createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"))
    }

    // MARK: Custom events

    func insertCustomEvent(_ event: CustomEventRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO story_custom_events (id, user_id, title, description, category, age_range, tone, prompt_seed, keywords, created_at)
            VALUES (\(bind: event.id), \(bind: event.userID), \(bind: event.title), \(bind: event.description), \(bind: event.category),
              \(bind: event.ageRange), \(bind: event.tone), \(bind: event.promptSeed), \(bind: Self.json(event.keywords)),
              \(bind: event.createdAt.epochMillis))
            """
        ).run()
    }

    func customEvents(userID: String) async throws -> [CustomEventRecord] {
        try await reader.raw("SELECT * FROM story_custom_events WHERE user_id = \(bind: userID) ORDER BY created_at, id").all().map(Self.customEvent)
    }

    func customEvent(id: String, userID: String) async throws -> CustomEventRecord? {
        try await sql.raw("SELECT * FROM story_custom_events WHERE id = \(bind: id) AND user_id = \(bind: userID)").first().map(Self.customEvent)
    }

    func deleteCustomEvent(id: String, userID: String) async throws -> Bool {
        try await sql.raw("DELETE FROM story_custom_events WHERE id = \(bind: id) AND user_id = \(bind: userID) RETURNING id").first() != nil
    }

    private static func customEvent(_ row: any SQLRow) throws -> CustomEventRecord {
        CustomEventRecord(
            id: try row.string("id"), userID: try row.string("user_id"), title: try row.string("title"),
            description: try row.string("description"), category: try row.string("category"), ageRange: try row.string("age_range"),
            tone: try row.string("tone"), promptSeed: try row.string("prompt_seed"),
            keywords: try decodeJSON([String].self, try row.string("keywords")),
            createdAt: try row.date("created_at"))
    }

    // MARK: Stories

    static let storyStages = ["text", "scenes", "narration", "illustrations"]

    func insertStory(_ story: StoryRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO stories (id, user_id, hero_id, snapshot, language, voice, length_minutes, illustration_count, text_status,
              scenes_status, narration_status, illustrations_status, created_at, updated_at)
            VALUES (\(bind: story.id), \(bind: story.userID), \(bind: story.heroID), \(bind: Self.json(story.snapshot)),
              \(bind: story.language), \(bind: story.voice), \(bind: Int64(story.lengthMinutes)), \(bind: Int64(story.illustrationCount)),
              \(bind: story.stages["text"] ?? "pending"), \(bind: story.stages["scenes"] ?? "pending"),
              \(bind: story.stages["narration"] ?? "pending"), \(bind: story.stages["illustrations"] ?? "pending"),
              \(bind: story.createdAt.epochMillis), \(bind: story.updatedAt.epochMillis))
            """
        ).run()
    }

    /// The story, when it is `userID`'s (`nil` user: any owner, for jobs).
    func story(id: String, userID: String?) async throws -> StoryRecord? {
        let owner: SQLQueryString = userID.map { "AND user_id = \(bind: $0)" } ?? ""
        return try await sql.raw("SELECT * FROM stories WHERE id = \(bind: id) \(owner)").first().map(Self.story)
    }

    /// The user's stories, newest first, older than `before` (a creation time in epoch milliseconds) when given.
    func stories(userID: String, before: Int64?, limit: Int) async throws -> [StoryRecord] {
        let cursor: SQLQueryString = before.map { "AND created_at < \(bind: $0)" } ?? ""
        return try await reader.raw(
            "SELECT * FROM stories WHERE user_id = \(bind: userID) \(cursor) ORDER BY created_at DESC, id DESC LIMIT \(bind: Int64(limit))"
        ).all().map(Self.story)
    }

    /// Moves a stage from one of `from` to `to`, unless the story was cancelled; `false` when it was not in `from`.
    func moveStage(storyID: String, stage: String, from: [String], to: String, now: Date) async throws -> Bool {
        guard Self.storyStages.contains(stage) else { return false }
        let column = SQLIdentifier("\(stage)_status")
        let allowed = SQLGroupExpression(SQLList(from.map { SQLBind($0) }))
        return try await sql.update("stories")
            .set(column, to: to)
            .set("updated_at", to: now.epochMillis)
            .where("id", .equal, storyID)
            .where(column, .in, allowed)
            .where("cancelled_at", .is, SQLLiteral.null)
            .returning("id")
            .first() != nil
    }

    /// Records a stage's failure (the story keeps what earlier stages made).
    func failStage(storyID: String, stage: String, message: String, now: Date) async throws {
        guard Self.storyStages.contains(stage) else { return }
        try await sql.update("stories")
            .set(SQLIdentifier("\(stage)_status"), to: "failed")
            .set("failure_stage", to: stage)
            .set("failure", to: message)
            .set("updated_at", to: now.epochMillis)
            .where("id", .equal, storyID)
            .run()
    }

    func saveStoryText(storyID: String, title: String, content: String, now: Date) async throws {
        try await sql.raw(
            """
            UPDATE stories SET title = \(bind: title), content = \(bind: content), text_status = 'succeeded', updated_at = \(bind: now.epochMillis)
            WHERE id = \(bind: storyID) AND cancelled_at IS NULL
            """
        ).run()
    }

    func saveStoryScenes(storyID: String, scenes: String, status: String, now: Date) async throws {
        try await sql.raw(
            """
            UPDATE stories SET scenes = \(bind: scenes), scenes_status = \(bind: status), updated_at = \(bind: now.epochMillis)
            WHERE id = \(bind: storyID) AND cancelled_at IS NULL
            """
        ).run()
    }

    func setNarrationPartsTotal(storyID: String, total: Int) async throws {
        try await sql.raw("UPDATE stories SET narration_parts_total = \(bind: Int64(total)) WHERE id = \(bind: storyID)").run()
    }

    /// Stores one narration part (a second writer of the same part is a no-op).
    func insertNarrationPart(storyID: String, _ part: NarrationPartRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO story_narration_parts (story_id, part, text, blob_key, duration_ms)
            VALUES (\(bind: storyID), \(bind: Int64(part.part)), \(bind: part.text), \(bind: part.blobKey), \(bind: Int64(part.durationMs)))
            ON CONFLICT (story_id, part) DO NOTHING
            """
        ).run()
    }

    func narrationParts(storyID: String) async throws -> [NarrationPartRecord] {
        try await sql.raw("SELECT * FROM story_narration_parts WHERE story_id = \(bind: storyID) ORDER BY part").all().map { row in
            NarrationPartRecord(
                part: try row.int("part"), text: try row.string("text"), blobKey: try row.string("blob_key"), durationMs: try row.int("duration_ms"))
        }
    }

    func completeNarration(storyID: String, blobKey: String, durationMs: Int, scenes: String?, now: Date) async throws {
        try await sql.raw(
            """
            UPDATE stories SET audio_blob_key = \(bind: blobKey), audio_duration_ms = \(bind: Int64(durationMs)),
              scenes = COALESCE(\(bind: scenes), scenes), narration_status = 'succeeded', updated_at = \(bind: now.epochMillis)
            WHERE id = \(bind: storyID) AND cancelled_at IS NULL
            """
        ).run()
    }

    // MARK: Illustrations

    /// Creates the illustration rows (pending) once; later calls keep the existing ones.
    func insertIllustrations(storyID: String, _ items: [IllustrationRecord]) async throws {
        for item in items {
            try await sql.raw(
                """
                INSERT INTO story_illustrations (story_id, number, prompt, status, retry_count, used_fallback, timestamp_ms)
                VALUES (\(bind: storyID), \(bind: Int64(item.number)), \(bind: item.prompt), \(bind: item.status), 0, \(bind: false),
                  \(bind: item.timestampMs.map(Int64.init)))
                ON CONFLICT (story_id, number) DO NOTHING
                """
            ).run()
        }
    }

    func illustrations(storyID: String) async throws -> [IllustrationRecord] {
        try await sql.raw("SELECT * FROM story_illustrations WHERE story_id = \(bind: storyID) ORDER BY number").all().map { row in
            IllustrationRecord(
                number: try row.int("number"), prompt: try row.string("prompt"), status: try row.string("status"),
                errorType: try row.optionalString("error_type"), error: try row.optionalString("error"), retryCount: try row.int("retry_count"),
                lastAttemptAt: try row.optionalDate("last_attempt_at"), usedFallback: try row.decode(column: "used_fallback", as: Bool.self),
                blobKey: try row.optionalString("blob_key"), timestampMs: try row.optionalInt("timestamp_ms"))
        }
    }

    /// Saves an illustration's new state.
    func updateIllustration(storyID: String, _ item: IllustrationRecord) async throws {
        try await sql.raw(
            """
            UPDATE story_illustrations SET status = \(bind: item.status), error_type = \(bind: item.errorType), error = \(bind: item.error),
              retry_count = \(bind: Int64(item.retryCount)), last_attempt_at = \(bind: item.lastAttemptAt?.epochMillis),
              used_fallback = \(bind: item.usedFallback), blob_key = \(bind: item.blobKey), timestamp_ms = \(bind: item.timestampMs.map(Int64.init))
            WHERE story_id = \(bind: storyID) AND number = \(bind: Int64(item.number))
            """
        ).run()
    }

    /// Claims a failed illustration for a retry (failed → pending); `false` when it is not failed.
    func reopenIllustration(storyID: String, number: Int) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE story_illustrations SET status = 'pending', error_type = NULL, error = NULL
            WHERE story_id = \(bind: storyID) AND number = \(bind: Int64(number)) AND status = 'failed' RETURNING number
            """
        ).first() != nil
    }

    // MARK: Cancelling and deleting

    /// Marks the story cancelled (its jobs stop before their next provider call) and deletes its rows; returns every
    /// blob key it had, or `nil` when it is not the user's.
    func deleteStory(id: String, userID: String, now: Date) async throws -> [String]? {
        try await writeTransaction { store in
            guard
                let row = try await store.sql.raw(
                    """
                    UPDATE stories SET cancelled_at = \(bind: now.epochMillis) WHERE id = \(bind: id) AND user_id = \(bind: userID)
                    RETURNING audio_blob_key
                    """
                ).first()
            else { return nil }
            var keys = [try row.optionalString("audio_blob_key")].compactMap { $0 }
            keys += try await store.sql.raw("SELECT blob_key FROM story_narration_parts WHERE story_id = \(bind: id)").all()
                .map { try $0.string("blob_key") }
            keys += try await store.sql.raw("SELECT blob_key FROM story_illustrations WHERE story_id = \(bind: id) AND blob_key IS NOT NULL").all()
                .map { try $0.string("blob_key") }
            try await store.sql.raw("DELETE FROM story_illustrations WHERE story_id = \(bind: id)").run()
            try await store.sql.raw("DELETE FROM story_narration_parts WHERE story_id = \(bind: id)").run()
            try await store.sql.raw("DELETE FROM stories WHERE id = \(bind: id)").run()
            return keys
        }
    }

    /// Whether the story is gone or cancelled (jobs check before each provider call).
    func isStoryCancelled(id: String) async throws -> Bool {
        guard let row = try await sql.raw("SELECT cancelled_at FROM stories WHERE id = \(bind: id)").first() else { return true }
        return try row.optionalDate("cancelled_at") != nil
    }

    private static func story(_ row: any SQLRow) throws -> StoryRecord {
        var stages: [String: String] = [:]
        for stage in storyStages { stages[stage] = try row.string("\(stage)_status") }
        return StoryRecord(
            id: try row.string("id"), userID: try row.string("user_id"), heroID: try row.optionalString("hero_id"),
            snapshot: try decodeJSON(StorySnapshot.self, try row.string("snapshot")), language: try row.string("language"),
            voice: try row.string("voice"), lengthMinutes: try row.int("length_minutes"), illustrationCount: try row.int("illustration_count"),
            stages: stages, failureStage: try row.optionalString("failure_stage"), failure: try row.optionalString("failure"),
            title: try row.optionalString("title"), content: try row.optionalString("content"), scenes: try row.optionalString("scenes"),
            audioBlobKey: try row.optionalString("audio_blob_key"), audioDurationMs: try row.optionalInt("audio_duration_ms"),
            narrationPartsTotal: try row.optionalInt("narration_parts_total"), cancelledAt: try row.optionalDate("cancelled_at"),
            createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"))
    }

    // MARK: JSON columns

    static func json(_ value: some Encodable) -> String {
        (try? String(decoding: JSONEncoder().encode(value), as: UTF8.self)) ?? "null"
    }

    static func decodeJSON<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }
}
