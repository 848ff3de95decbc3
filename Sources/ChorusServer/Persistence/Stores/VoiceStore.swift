import ChorusCore
import Foundation
import SQLKit

/// Where a cloned voice stands (issue 21): only a `ready` voice speaks for anyone.
enum VoiceProfileState: String, Sendable, Equatable {
    /// Cloned; its owner has not yet heard the preview and confirmed it. Deleted after a day.
    case pendingConfirmation = "pending_confirmation"
    /// ElevenLabs answered `requires_verification: true`: the voice cannot be used. Deleted after a day like a pending one.
    case requiresVerification = "requires_verification"
    /// Confirmed by its owner: messages are spoken in it.
    case ready
}

/// An account's cloned voice.
struct VoiceProfileRecord: Sendable, Equatable {
    var userID: String
    var provider: String
    var providerVoiceID: String
    var sampleAudioID: String?
    var script: String
    var consentStatement: String
    var consentedAt: Date
    var previewBlobKey: String?
    var createdAt: Date
    var state: VoiceProfileState = .ready
    /// When the owner confirmed it (`nil` until then).
    var confirmedAt: Date? = nil
}

/// A generated speech file, or a generation in progress.
struct SpeechCacheEntry: Sendable, Equatable {
    var key: String
    var status: String
    var blobKey: String?
    var contentType: String?
    var sizeBytes: Int?
    /// When this generation's row was made (a speech generated again after the cache sweep gets a new one).
    var createdAt: Date? = nil
}

/// Voice features: cloned voice profiles, voice usage counters, the speech cache, conversation summaries and digest
/// subscriptions.
///
/// Reached as `store.voices`, or `tx.voices` inside ``ChorusStore/writeTransaction(_:)``.
struct VoiceStore: StoreArea {
    let base: ChorusStore

    // MARK: Voice profiles

    /// The user's profile in any state (see ``VoiceProfileRecord/state``: only `ready` ones may speak).
    func voiceProfile(userID: String) async throws -> VoiceProfileRecord? {
        try await sql.raw("SELECT * FROM voice_profiles WHERE user_id = \(bind: userID)").first().map(Self.voiceProfileRecord)
    }

    /// Confirms the user's pending profile, if it is still pending and still the voice `providerVoiceID`: one
    /// compare-and-set update, so a confirmation racing a discard, a re-recording or the expiry sweep either confirms
    /// the voice that is there or changes nothing. Returns the confirmed profile, `nil` when nothing was pending.
    func confirmVoiceProfile(userID: String, providerVoiceID: String, now: Date) async throws -> VoiceProfileRecord? {
        try await sql.raw(
            """
            UPDATE voice_profiles SET state = \(bind: VoiceProfileState.ready.rawValue), confirmed_at = \(bind: now.epochMillis)
            WHERE user_id = \(bind: userID) AND provider_voice_id = \(bind: providerVoiceID)
              AND state = \(bind: VoiceProfileState.pendingConfirmation.rawValue)
            RETURNING *
            """
        ).first().map(Self.voiceProfileRecord)
    }

    /// Deletes up to `limit` profiles never confirmed (pending or awaiting verification) made before `cutoff`; returns
    /// them (the caller deletes their provider voices and speech). One statement whose condition is checked again on
    /// each row as it is deleted, so a profile confirmed meanwhile is kept.
    func deleteUnconfirmedVoiceProfiles(createdBefore cutoff: Date, limit: Int) async throws -> [VoiceProfileRecord] {
        try await sql.raw(
            """
            DELETE FROM voice_profiles
            WHERE user_id IN (
                SELECT user_id FROM voice_profiles WHERE state <> \(bind: VoiceProfileState.ready.rawValue)
                  AND created_at < \(bind: cutoff.epochMillis) LIMIT \(bind: limit))
              AND state <> \(bind: VoiceProfileState.ready.rawValue) AND created_at < \(bind: cutoff.epochMillis)
            RETURNING *
            """
        ).all().map(Self.voiceProfileRecord)
    }

    /// Stores the profile, replacing any previous one; returns the replaced profile (whose provider voice the caller
    /// deletes).
    func replaceVoiceProfile(_ profile: VoiceProfileRecord) async throws -> VoiceProfileRecord? {
        try await writeTransaction { tx in
            let previous = try await tx.voices.voiceProfile(userID: profile.userID)
            try await tx.sql.raw("DELETE FROM voice_profiles WHERE user_id = \(bind: profile.userID)").run()
            try await tx.sql.raw(
                """
                INSERT INTO voice_profiles (user_id, provider, provider_voice_id, sample_audio_id, script, consent_statement, consented_at,
                  preview_blob_key, created_at, state, confirmed_at)
                VALUES (\(bind: profile.userID), \(bind: profile.provider), \(bind: profile.providerVoiceID), \(bind: profile.sampleAudioID),
                  \(bind: profile.script), \(bind: profile.consentStatement), \(bind: profile.consentedAt.epochMillis),
                  \(bind: profile.previewBlobKey), \(bind: profile.createdAt.epochMillis), \(bind: profile.state.rawValue),
                  \(bind: profile.confirmedAt?.epochMillis))
                """
            ).run()
            return previous
        }
    }

    /// Removes the profile; returns it (the caller deletes the provider voice and the preview).
    func deleteVoiceProfile(userID: String) async throws -> VoiceProfileRecord? {
        try await sql.raw("DELETE FROM voice_profiles WHERE user_id = \(bind: userID) RETURNING *").first().map(Self.voiceProfileRecord)
    }

    private static func voiceProfileRecord(_ row: any SQLRow) throws -> VoiceProfileRecord {
        VoiceProfileRecord(
            userID: try row.string("user_id"), provider: try row.string("provider"), providerVoiceID: try row.string("provider_voice_id"),
            sampleAudioID: try row.optionalString("sample_audio_id"), script: try row.string("script"),
            consentStatement: try row.string("consent_statement"), consentedAt: try row.date("consented_at"),
            previewBlobKey: try row.optionalString("preview_blob_key"), createdAt: try row.date("created_at"),
            state: VoiceProfileState(rawValue: try row.string("state")) ?? .pendingConfirmation,
            confirmedAt: try row.optionalDate("confirmed_at"))
    }

    // MARK: Usage counters

    /// Counts one use against `limit` under `key` (e.g. `speech:2026-11-23`): one conditional upsert. Returns whether
    /// it was within the limit.
    func chargeVoiceUsage(userID: String, key: String, limit: Int) async throws -> Bool {
        guard limit > 0 else { return false }
        return try await sql.raw(
            """
            INSERT INTO voice_usage (user_id, key, used) VALUES (\(bind: userID), \(bind: key), 1)
            ON CONFLICT (user_id, key) DO UPDATE SET used = voice_usage.used + 1 WHERE voice_usage.used < \(bind: Int64(limit))
            RETURNING used
            """
        ).first() != nil
    }

    /// Gives one use back (the generation it paid for failed).
    func refundVoiceUsage(userID: String, key: String) async throws {
        try await sql.raw("UPDATE voice_usage SET used = used - 1 WHERE user_id = \(bind: userID) AND key = \(bind: key) AND used > 0").run()
    }

    func voiceUsage(userID: String, key: String) async throws -> Int {
        try await reader.raw("SELECT used FROM voice_usage WHERE user_id = \(bind: userID) AND key = \(bind: key)").first()
            .map { try $0.int("used") } ?? 0
    }

    // MARK: Speech cache

    /// The cache row of `key`; `fromReadPool` reads through SQLite's read connections, in parallel with the writer
    /// (serving audio), instead of the primary connection that generation's claims use.
    func speechCacheEntry(key: String, fromReadPool: Bool = false) async throws -> SpeechCacheEntry? {
        try await (fromReadPool ? reader : sql).raw("SELECT * FROM speech_cache WHERE key = \(bind: key)").first().map { row in
            SpeechCacheEntry(
                key: try row.string("key"), status: try row.string("status"), blobKey: try row.optionalString("blob_key"),
                contentType: try row.optionalString("content_type"), sizeBytes: try row.optionalInt("size_bytes"),
                createdAt: try row.optionalDate("created_at"))
        }
    }

    /// Claims the generation of `key` for `until`: succeeds when nobody generated it and nobody holds a live claim.
    /// `voiceOwnerID` is the account whose cloned voice speaks (`nil` for default voices), so erasing that account's voice
    /// data erases this speech too.
    func claimSpeech(key: String, voiceOwnerID: String?, now: Date, until: Date) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO speech_cache (key, status, owner_user_id, created_at, last_used_at, claimed_until)
            VALUES (\(bind: key), 'pending', \(bind: voiceOwnerID), \(bind: now.epochMillis), \(bind: now.epochMillis), \(bind: until.epochMillis))
            ON CONFLICT (key) DO UPDATE SET claimed_until = excluded.claimed_until, owner_user_id = excluded.owner_user_id
            WHERE speech_cache.status = 'pending' AND speech_cache.claimed_until < \(bind: now.epochMillis)
            RETURNING key
            """
        ).first() != nil
    }

    func completeSpeech(key: String, blobKey: String, contentType: String, sizeBytes: Int) async throws {
        try await sql.raw(
            """
            UPDATE speech_cache SET status = 'ready', blob_key = \(bind: blobKey), content_type = \(bind: contentType),
              size_bytes = \(bind: Int64(sizeBytes)), claimed_until = NULL
            WHERE key = \(bind: key)
            """
        ).run()
    }

    /// Records audio produced without a claim (a multi-voice playback): ready at once; a second writer is a no-op.
    func storeSpeech(key: String, blobKey: String, contentType: String, sizeBytes: Int, now: Date) async throws {
        try await sql.raw(
            """
            INSERT INTO speech_cache (key, status, blob_key, content_type, size_bytes, created_at, last_used_at)
            VALUES (\(bind: key), 'ready', \(bind: blobKey), \(bind: contentType), \(bind: Int64(sizeBytes)), \(bind: now.epochMillis),
              \(bind: now.epochMillis))
            ON CONFLICT (key) DO NOTHING
            """
        ).run()
    }

    /// Notes that `key`'s URL was handed out at `now`, so it does not expire: written at most once a day per key.
    func touchSpeech(key: String, now: Date) async throws {
        try await sql.raw(
            """
            UPDATE speech_cache SET last_used_at = \(bind: now.epochMillis)
            WHERE key = \(bind: key) AND status = 'ready' AND last_used_at < \(bind: now.addingTimeInterval(-86_400).epochMillis)
            """
        ).run()
    }

    /// Removes up to `limit` ready speeches (and playbacks) whose URL was last handed out before `cutoff`; returns their
    /// blob keys to delete. Pending generations are never touched.
    func deleteUnusedSpeech(before cutoff: Date, limit: Int) async throws -> [String] {
        try await sql.raw(
            """
            DELETE FROM speech_cache WHERE key IN (
              SELECT key FROM speech_cache WHERE status = 'ready' AND last_used_at < \(bind: cutoff.epochMillis) LIMIT \(bind: limit))
            RETURNING blob_key
            """
        ).all().compactMap { try $0.optionalString("blob_key") }
    }

    /// Drops a failed claim so the next request tries again.
    func abandonSpeech(key: String) async throws {
        try await sql.raw("DELETE FROM speech_cache WHERE key = \(bind: key) AND status = 'pending'").run()
    }

    /// How many speeches were generated in `userID`'s cloned voice.
    func speechCount(voiceOwnerID userID: String) async throws -> Int {
        try await reader.raw("SELECT COUNT(*) AS n FROM speech_cache WHERE owner_user_id = \(bind: userID)").first().map { try $0.int("n") } ?? 0
    }

    /// Removes every speech generated in `userID`'s cloned voice; returns the blob keys to delete.
    func deleteSpeech(voiceOwnerID userID: String) async throws -> [String] {
        try await sql.raw("DELETE FROM speech_cache WHERE owner_user_id = \(bind: userID) RETURNING blob_key").all()
            .compactMap { try $0.optionalString("blob_key") }
    }
}

/// A stored conversation summary.
struct SummaryRecord: Sendable {
    var id: String
    var conversationID: String
    var selection: String
    var lastSeq: Int64
    var messageCount: Int
    var summary: ConversationSummary
    var narration: String
    var speechKey: String?
    var createdAt: Date
}

extension VoiceStore {
    /// The newest summary of the same selection covering exactly up to `lastSeq`.
    func summary(conversationID: String, selection: String, lastSeq: Int64) async throws -> SummaryRecord? {
        try await reader.raw(
            """
            SELECT * FROM conversation_summaries WHERE conversation_id = \(bind: conversationID) AND selection = \(bind: selection)
              AND last_seq = \(bind: lastSeq) ORDER BY created_at DESC LIMIT 1
            """
        ).first().map(Self.summaryRecord)
    }

    func summary(id: String) async throws -> SummaryRecord? {
        try await reader.raw("SELECT * FROM conversation_summaries WHERE id = \(bind: id)").first().map(Self.summaryRecord)
    }

    private static func summaryRecord(_ row: any SQLRow) throws -> SummaryRecord {
        SummaryRecord(
            id: try row.string("id"), conversationID: try row.string("conversation_id"), selection: try row.string("selection"),
            lastSeq: try row.decode(column: "last_seq", as: Int64.self),
            messageCount: try row.int("message_count"), summary: try ConversationSummary.decode(json: Data(try row.string("summary_json").utf8)),
            narration: try row.string("narration"), speechKey: try row.optionalString("speech_key"), createdAt: try row.date("created_at"))
    }

    func saveSummary(_ record: SummaryRecord) async throws {
        let json = String(decoding: try JSONEncoder().encode(record.summary), as: UTF8.self)
        try await sql.raw(
            """
            INSERT INTO conversation_summaries (id, conversation_id, selection, last_seq, message_count, summary_json, narration, speech_key,
              created_at)
            VALUES (\(bind: record.id), \(bind: record.conversationID), \(bind: record.selection), \(bind: record.lastSeq),
              \(bind: Int64(record.messageCount)), \(bind: json), \(bind: record.narration), \(bind: record.speechKey),
              \(bind: record.createdAt.epochMillis))
            """
        ).run()
    }
}

/// A member's daily digest of a conversation.
struct DigestSubscriptionRecord: Sendable, Equatable {
    var conversationID: String
    var userID: String
    var schedule: String
    var timeZone: String
    var version: Int64
    var lastDigestAt: Date?
    var nextAt: Date?
}

extension VoiceStore {
    func digestSubscription(conversationID: String, userID: String) async throws -> DigestSubscriptionRecord? {
        try await sql.raw(
            "SELECT * FROM digest_subscriptions WHERE conversation_id = \(bind: conversationID) AND user_id = \(bind: userID)"
        ).first().map { row in
            DigestSubscriptionRecord(
                conversationID: conversationID, userID: userID, schedule: try row.string("schedule"), timeZone: try row.string("time_zone"),
                version: try row.decode(column: "version", as: Int64.self), lastDigestAt: try row.optionalDate("last_digest_at"),
                nextAt: try row.optionalDate("next_at"))
        }
    }

    /// Replaces the member's subscription (a new version) and enqueues its first digest when it has one.
    func setDigestSubscription(
        conversationID: String, userID: String, schedule: String, timeZone: String, next: Date?, now: Date
    ) async throws -> DigestSubscriptionRecord {
        try await writeTransaction { tx in
            guard
                let row = try await tx.sql.raw(
                    """
                    INSERT INTO digest_subscriptions (conversation_id, user_id, schedule, time_zone, version, next_at)
                    VALUES (\(bind: conversationID), \(bind: userID), \(bind: schedule), \(bind: timeZone), 1, \(bind: next?.epochMillis))
                    ON CONFLICT (conversation_id, user_id) DO UPDATE SET schedule = excluded.schedule, time_zone = excluded.time_zone,
                      version = digest_subscriptions.version + 1, next_at = excluded.next_at
                    RETURNING version
                    """
                ).first()
            else { throw ChorusStoreError.missingRow("digest_subscriptions") }
            let version = try row.decode(column: "version", as: Int64.self)
            if let next {
                try await tx.jobs.enqueueJob(kind: JobKind.conversationDigest, payload: "\(conversationID)|\(userID)|\(version)", runAt: next, now: now)
            }
            guard let record = try await tx.voices.digestSubscription(conversationID: conversationID, userID: userID) else {
                throw ChorusStoreError.missingRow("digest_subscriptions")
            }
            return record
        }
    }

    /// Records a digest and enqueues the next one, unless the subscription changed meanwhile (compare-and-set on its
    /// version: the replacement has its own job).
    func digestRan(_ subscription: DigestSubscriptionRecord, at now: Date, next: Date) async throws {
        try await writeTransaction { tx in
            let updated = try await tx.sql.raw(
                """
                UPDATE digest_subscriptions SET last_digest_at = \(bind: now.epochMillis), next_at = \(bind: next.epochMillis)
                WHERE conversation_id = \(bind: subscription.conversationID) AND user_id = \(bind: subscription.userID)
                  AND version = \(bind: subscription.version)
                RETURNING version
                """
            ).first()
            guard updated != nil else { return }
            try await tx.jobs.enqueueJob(
                kind: JobKind.conversationDigest, payload: "\(subscription.conversationID)|\(subscription.userID)|\(subscription.version)",
                runAt: next, now: now)
        }
    }
}
