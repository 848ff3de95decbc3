import Foundation
import SQLKit

/// An account's voice-messaging settings (defaults apply until the user changes them).
struct MessagingProfileRecord: Sendable, Equatable {
    var userID: String
    var displayName: String
    var birthYear: Int?
    var retentionDays: Int
    var voiceEnabled: Bool
    var defaultVoice: String?

    static let defaultRetentionDays = 30
}

struct ConversationMemberRecord: Sendable, Equatable {
    var userID: String
    var displayName: String
    var role: String
    var joinedAt: Date
}

/// A conversation with one member's counters.
struct ConversationRecord: Sendable, Equatable {
    var id: String
    var kind: String
    var title: String?
    var createdBy: String
    var createdAt: Date
    var lastMessageAt: Date?
    var members: [ConversationMemberRecord]
    var unreadCount: Int
    var unheardVoiceCount: Int
    var hasUrgent: Bool
}

/// A stored recording.
struct AudioRecord: Sendable, Equatable {
    var id: String
    var ownerID: String
    var blobKey: String
    var format: String
    var contentType: String
    var sizeBytes: Int
    var durationMs: Int
    var longForm: Bool
    var createdAt: Date
    var expiresAt: Date?
    var transcript: String?
    var transcriptConfidence: Double?
    var transcriptLabel: String?
    var transcriptLanguage: String?
}

/// A message as one member sees it.
struct MessageRecord: Sendable, Equatable {
    var seq: Int64
    var id: String
    var conversationID: String
    var senderID: String
    var senderName: String
    var clientMessageID: String
    var sendMode: String
    var content: String?
    var audioID: String?
    var audioDurationMs: Int?
    var transcript: String?
    var transcriptConfidence: Double?
    var transcriptLabel: String?
    var urgent: Bool
    var urgentReasons: [String]
    var starred: Bool
    var createdAt: Date
    var editedAt: Date?
    var deletedAt: Date?
}

/// A message to create.
struct NewMessage: Sendable {
    var id: String
    var conversationID: String
    var senderID: String
    var clientMessageID: String
    var sendMode: String
    var content: String?
    var audio: AudioRecord?
    var urgent: Bool
    var urgentReasons: [String]
    var createdAt: Date
    /// A voice message of a capped account: the monthly counter and its limit, charged only when the message is new.
    var voiceQuota: (key: String, limit: Int)?
}

/// The monthly voice-message limit refused a new voice message (the transaction was rolled back).
struct VoiceQuotaExceeded: Error, Equatable {
    var limit: Int
}

enum SendMessageOutcome: Sendable, Equatable {
    case created(MessageRecord)
    /// The client already sent this `client_message_id`: the message it created.
    case duplicate(MessageRecord)
    /// The `client_message_id` was used for a message in another conversation.
    case clientIDReused
    /// The recording is already attached to another message.
    case audioInUse
}

/// Voice messages: profiles (`messaging_profiles`), conversations and members, messages with their per-member state,
/// and audio recordings (`audio_recordings`) with their transcripts.
///
/// Reached as `store.messaging`, or `tx.messaging` inside ``ChorusStore/writeTransaction(_:)``.
struct MessagingStore: StoreArea {
    let base: ChorusStore

    // MARK: Profiles

    /// The profile, or the defaults for an account that never set one (`nil` for an unknown account).
    func messagingProfile(userID: String) async throws -> MessagingProfileRecord? {
        guard
            let row = try await reader.raw(
                """
                SELECT u.id, u.email, p.display_name, p.birth_year, p.retention_days, p.voice_enabled, p.default_voice
                FROM users u LEFT JOIN messaging_profiles p ON p.user_id = u.id WHERE u.id = \(bind: userID)
                """
            ).first()
        else { return nil }
        let email = try row.string("email")
        return MessagingProfileRecord(
            userID: userID,
            displayName: try row.optionalString("display_name") ?? Self.defaultDisplayName(email: email),
            birthYear: try row.optionalInt("birth_year"),
            retentionDays: try row.optionalInt("retention_days") ?? MessagingProfileRecord.defaultRetentionDays,
            voiceEnabled: try row.decode(column: "voice_enabled", as: Bool?.self) ?? true,
            defaultVoice: try row.optionalString("default_voice")
        )
    }

    func saveMessagingProfile(_ profile: MessagingProfileRecord, now: Date) async throws {
        try await sql.raw(
            """
            INSERT INTO messaging_profiles (user_id, display_name, birth_year, retention_days, voice_enabled, default_voice, updated_at)
            VALUES (\(bind: profile.userID), \(bind: profile.displayName), \(bind: profile.birthYear.map(Int64.init)),
              \(bind: Int64(profile.retentionDays)), \(bind: profile.voiceEnabled), \(bind: profile.defaultVoice), \(bind: now.epochMillis))
            ON CONFLICT (user_id) DO UPDATE SET display_name = excluded.display_name, birth_year = excluded.birth_year,
              retention_days = excluded.retention_days, voice_enabled = excluded.voice_enabled, default_voice = excluded.default_voice,
              updated_at = excluded.updated_at
            """
        ).run()
    }

    static func defaultDisplayName(email: String) -> String {
        String(email.split(separator: "@").first ?? Substring(email))
    }

    /// Account ids by email (lower-cased); unknown emails are absent.
    func userIDs(emails: [String]) async throws -> [String: String] {
        guard !emails.isEmpty else { return [:] }
        let rows = try await reader.raw(
            "SELECT id, email FROM users WHERE email IN (\(SQLList(emails.map { SQLBind($0) })))"
        ).all()
        var result: [String: String] = [:]
        for row in rows { result[try row.string("email")] = try row.string("id") }
        return result
    }

    // MARK: Conversations

    /// Creates a conversation with the creator as its owner and invites the others by email (see ``invite``). A direct
    /// conversation between two emails exists once: creating it again returns the existing one with `created` false,
    /// the creator in it (their own request brings them back if they had left, or answers the other's invitation) and
    /// the other invited again unless they are a member — leaving is never undone by someone else. `invited` lists the
    /// emails that got a new invitation.
    func createConversation(
        id: String, kind: String, title: String?, creatorID: String, creatorEmail: String, inviteeEmails: [String], now: Date
    ) async throws -> (id: String, created: Bool, invited: [String]) {
        try await writeTransaction { tx in
            let directKey = kind == "direct" ? InvitationStore.directKey([creatorEmail] + inviteeEmails) : nil
            let inserted = try await tx.sql.raw(
                """
                INSERT INTO conversations (id, kind, title, direct_key, created_by, created_at)
                VALUES (\(bind: id), \(bind: kind), \(bind: title), \(bind: directKey), \(bind: creatorID), \(bind: now.epochMillis))
                ON CONFLICT (direct_key) DO NOTHING RETURNING id
                """
            ).first()
            var conversationID = id
            if inserted == nil {
                guard let directKey,
                    let existing = try await tx.sql.raw("SELECT id FROM conversations WHERE direct_key = \(bind: directKey)").first()
                else { throw ChorusStoreError.missingRow("conversations") }
                conversationID = try existing.string("id")
            }
            try await tx.messaging.insertMember(conversationID: conversationID, userID: creatorID, role: inserted == nil ? "member" : "owner", now: now)
            try await tx.sql.raw(
                "DELETE FROM conversation_invitations WHERE conversation_id = \(bind: conversationID) AND invitee_email = \(bind: creatorEmail)"
            ).run()
            var invited: [String] = []
            for email in inviteeEmails where email != creatorEmail {
                if try await tx.invitations.invite(conversationID: conversationID, inviterID: creatorID, email: email, now: now) { invited.append(email) }
            }
            return (conversationID, inserted != nil, invited)
        }
    }

    /// Adds a member (no-op when already one); new members start with everything read.
    func insertMember(conversationID: String, userID: String, role: String, now: Date) async throws {
        try await sql.raw(
            """
            INSERT INTO conversation_members (conversation_id, user_id, role, joined_at, last_read_seq)
            VALUES (\(bind: conversationID), \(bind: userID), \(bind: role), \(bind: now.epochMillis),
              COALESCE((SELECT MAX(seq) FROM messages WHERE conversation_id = \(bind: conversationID)), 0))
            ON CONFLICT (conversation_id, user_id) DO NOTHING
            """
        ).run()
    }

    /// Removes a member; `true` when there was one.
    func removeMember(conversationID: String, userID: String) async throws -> Bool {
        try await sql.raw(
            """
            DELETE FROM conversation_members WHERE conversation_id = \(bind: conversationID) AND user_id = \(bind: userID) RETURNING user_id
            """
        ).first() != nil
    }

    /// The member ids of a conversation.
    func memberIDs(conversationID: String) async throws -> [String] {
        try await reader.raw("SELECT user_id FROM conversation_members WHERE conversation_id = \(bind: conversationID)").all()
            .map { try $0.string("user_id") }
    }

    /// Whether `userID` is a member of the conversation.
    func isMember(conversationID: String, userID: String) async throws -> Bool {
        try await reader.raw(
            "SELECT role FROM conversation_members WHERE conversation_id = \(bind: conversationID) AND user_id = \(bind: userID)"
        ).first() != nil
    }

    /// The conversations of `userID` with their counters, most recently active first; or only `conversationID`.
    func conversations(of userID: String, only conversationID: String? = nil) async throws -> [ConversationRecord] {
        let filter: SQLQueryString = conversationID.map { "AND c.id = \(bind: $0)" } ?? ""
        let rows = try await reader.raw(
            """
            SELECT c.id, c.kind, c.title, c.created_by, c.created_at, c.last_message_at,
              (SELECT COUNT(*) FROM messages x WHERE x.conversation_id = c.id AND x.seq > m.last_read_seq
                 AND x.sender_id <> m.user_id AND x.deleted_at IS NULL) AS unread_count,
              (SELECT COUNT(*) FROM messages x WHERE x.conversation_id = c.id AND x.audio_id IS NOT NULL
                 AND x.sender_id <> m.user_id AND x.deleted_at IS NULL
                 AND NOT EXISTS (SELECT 1 FROM message_receipts r WHERE r.message_seq = x.seq AND r.user_id = m.user_id
                   AND r.heard_at IS NOT NULL)) AS unheard_count,
              (SELECT COUNT(*) FROM messages x WHERE x.conversation_id = c.id AND x.seq > m.last_read_seq
                 AND x.sender_id <> m.user_id AND x.deleted_at IS NULL AND x.urgent = \(bind: true)) AS urgent_count
            FROM conversations c JOIN conversation_members m ON m.conversation_id = c.id AND m.user_id = \(bind: userID)
            WHERE 1 = 1 \(filter)
            ORDER BY COALESCE(c.last_message_at, c.created_at) DESC, c.id
            """
        ).all()
        guard !rows.isEmpty else { return [] }
        let ids = try rows.map { try $0.string("id") }
        let memberRows = try await reader.raw(
            """
            SELECT cm.conversation_id, cm.user_id, cm.role, cm.joined_at, u.email, p.display_name
            FROM conversation_members cm JOIN users u ON u.id = cm.user_id
            LEFT JOIN messaging_profiles p ON p.user_id = cm.user_id
            WHERE cm.conversation_id IN (\(SQLList(ids.map { SQLBind($0) })))
            ORDER BY cm.joined_at, cm.user_id
            """
        ).all()
        var members: [String: [ConversationMemberRecord]] = [:]
        for row in memberRows {
            let email = try row.string("email")
            members[try row.string("conversation_id"), default: []].append(
                ConversationMemberRecord(
                    userID: try row.string("user_id"),
                    displayName: try row.optionalString("display_name") ?? Self.defaultDisplayName(email: email),
                    role: try row.string("role"), joinedAt: try row.date("joined_at")
                ))
        }
        return try rows.map { row in
            let id = try row.string("id")
            return ConversationRecord(
                id: id, kind: try row.string("kind"), title: try row.optionalString("title"), createdBy: try row.string("created_by"),
                createdAt: try row.date("created_at"), lastMessageAt: try row.optionalDate("last_message_at"),
                members: members[id] ?? [], unreadCount: try row.int("unread_count"), unheardVoiceCount: try row.int("unheard_count"),
                hasUrgent: try row.int("urgent_count") > 0
            )
        }
    }

    // MARK: Messages

    private static let messageColumns: SQLQueryString = """
        x.seq, x.id, x.conversation_id, x.sender_id, x.client_message_id, x.send_mode, x.content, x.audio_id, x.audio_duration_ms,
        x.transcript, x.transcript_confidence, x.transcript_label, x.urgent, x.urgent_reasons, x.created_at, x.edited_at,
        x.deleted_at, u.email AS sender_email, p.display_name AS sender_display_name
        """

    private static func messageJoins(viewer: String) -> SQLQueryString {
        """
        JOIN users u ON u.id = x.sender_id
        LEFT JOIN messaging_profiles p ON p.user_id = x.sender_id
        LEFT JOIN message_receipts r ON r.message_seq = x.seq AND r.user_id = \(bind: viewer)
        """
    }

    private static func messageRecord(_ row: any SQLRow) throws -> MessageRecord {
        let reasons = try row.string("urgent_reasons")
        return MessageRecord(
            seq: try row.decode(column: "seq", as: Int64.self), id: try row.string("id"),
            conversationID: try row.string("conversation_id"), senderID: try row.string("sender_id"),
            senderName: try row.optionalString("sender_display_name") ?? defaultDisplayName(email: try row.string("sender_email")),
            clientMessageID: try row.string("client_message_id"), sendMode: try row.string("send_mode"),
            content: try row.optionalString("content"), audioID: try row.optionalString("audio_id"),
            audioDurationMs: try row.optionalInt("audio_duration_ms"), transcript: try row.optionalString("transcript"),
            transcriptConfidence: try row.decode(column: "transcript_confidence", as: Double?.self),
            transcriptLabel: try row.optionalString("transcript_label"), urgent: try row.decode(column: "urgent", as: Bool.self),
            urgentReasons: reasons.isEmpty ? [] : reasons.split(separator: ",").map(String.init),
            starred: try row.decode(column: "starred_at", as: Int64?.self) != nil, createdAt: try row.date("created_at"),
            editedAt: try row.optionalDate("edited_at"), deletedAt: try row.optionalDate("deleted_at")
        )
    }

    /// One message as `viewer` sees it, or `nil` when it does not exist or `viewer` is not a member of its conversation.
    func message(id: String, viewer: String) async throws -> MessageRecord? {
        try await sql.raw(
            """
            SELECT \(Self.messageColumns), r.starred_at FROM messages x \(Self.messageJoins(viewer: viewer))
            JOIN conversation_members m ON m.conversation_id = x.conversation_id AND m.user_id = \(bind: viewer)
            WHERE x.id = \(bind: id)
            """
        ).first().map(Self.messageRecord)
    }

    /// Messages of a conversation, newest first, older than `before` (a sequence number) when given.
    func messages(conversationID: String, viewer: String, before: Int64?, limit: Int) async throws -> [MessageRecord] {
        let cursor: SQLQueryString = before.map { "AND x.seq < \(bind: $0)" } ?? ""
        return try await reader.raw(
            """
            SELECT \(Self.messageColumns), r.starred_at FROM messages x \(Self.messageJoins(viewer: viewer))
            WHERE x.conversation_id = \(bind: conversationID) \(cursor)
            ORDER BY x.seq DESC LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.messageRecord)
    }

    /// The messages holding a recording, as their senders see them.
    func messages(withAudio audioID: String) async throws -> [MessageRecord] {
        try await sql.raw(
            """
            SELECT \(Self.messageColumns), NULL AS starred_at FROM messages x
            JOIN users u ON u.id = x.sender_id LEFT JOIN messaging_profiles p ON p.user_id = x.sender_id
            WHERE x.audio_id = \(bind: audioID) AND x.deleted_at IS NULL
            """
        ).all().map(Self.messageRecord)
    }

    /// One message without any viewer's state (for background jobs).
    func message(id: String) async throws -> MessageRecord? {
        try await sql.raw(
            """
            SELECT \(Self.messageColumns), NULL AS starred_at FROM messages x
            JOIN users u ON u.id = x.sender_id LEFT JOIN messaging_profiles p ON p.user_id = x.sender_id
            WHERE x.id = \(bind: id)
            """
        ).first().map(Self.messageRecord)
    }

    /// Flags a message urgent on the summary model's word, once: `false` when it was already urgent or is deleted.
    func flagUrgentByModel(id: String) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE messages SET urgent = \(bind: true), urgent_reasons = 'model'
            WHERE id = \(bind: id) AND urgent = \(bind: false) AND deleted_at IS NULL RETURNING seq
            """
        ).first() != nil
    }

    /// Messages of a conversation in sending order, the newest `limit` (for summaries and playback).
    func recentMessages(conversationID: String, viewer: String, since: Date?, limit: Int) async throws -> [MessageRecord] {
        let sinceFilter: SQLQueryString = since.map { "AND x.created_at >= \(bind: $0.epochMillis)" } ?? ""
        return try await reader.raw(
            """
            SELECT \(Self.messageColumns), r.starred_at FROM messages x \(Self.messageJoins(viewer: viewer))
            WHERE x.conversation_id = \(bind: conversationID) AND x.deleted_at IS NULL \(sinceFilter)
            ORDER BY x.seq DESC LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.messageRecord).reversed()
    }

    /// Case-insensitive substring search over the text and transcripts of `viewer`'s conversations.
    func searchMessages(viewer: String, query: String, limit: Int) async throws -> [MessageRecord] {
        let escaped = query.lowercased().replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
        let pattern = "%\(escaped)%"
        return try await reader.raw(
            """
            SELECT \(Self.messageColumns), r.starred_at FROM messages x \(Self.messageJoins(viewer: viewer))
            JOIN conversation_members m ON m.conversation_id = x.conversation_id AND m.user_id = \(bind: viewer)
            WHERE x.deleted_at IS NULL
              AND (x.content_lc LIKE \(bind: pattern) ESCAPE '\\' OR x.transcript_lc LIKE \(bind: pattern) ESCAPE '\\')
            ORDER BY x.seq DESC LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.messageRecord)
    }

    /// Creates a message once per (sender, client message id), attaching the recording and its transcript; bumps the
    /// conversation's activity. The caller checked membership.
    func sendMessage(_ new: NewMessage) async throws -> SendMessageOutcome {
        try await writeTransaction { tx in
            if let audio = new.audio {
                let used = try await tx.sql.raw(
                    """
                    SELECT sender_id, client_message_id FROM messages WHERE audio_id = \(bind: audio.id)
                    """
                ).first()
                if let used, try used.string("client_message_id") != new.clientMessageID || used.string("sender_id") != new.senderID {
                    return .audioInUse
                }
            }
            let transcript = new.audio?.transcript
            let inserted = try await tx.sql.raw(
                """
                INSERT INTO messages (id, conversation_id, sender_id, client_message_id, send_mode, content, content_lc, audio_id,
                  audio_duration_ms, transcript, transcript_lc, transcript_confidence, transcript_label, urgent, urgent_reasons,
                  created_at)
                VALUES (\(bind: new.id), \(bind: new.conversationID), \(bind: new.senderID), \(bind: new.clientMessageID),
                  \(bind: new.sendMode), \(bind: new.content), \(bind: new.content?.lowercased()), \(bind: new.audio?.id),
                  \(bind: new.audio.map { Int64($0.durationMs) }), \(bind: transcript), \(bind: transcript?.lowercased()),
                  \(bind: new.audio?.transcriptConfidence), \(bind: new.audio?.transcriptLabel), \(bind: new.urgent),
                  \(bind: new.urgentReasons.joined(separator: ",")), \(bind: new.createdAt.epochMillis))
                ON CONFLICT (sender_id, client_message_id) DO NOTHING RETURNING seq
                """
            ).first()
            guard inserted != nil else {
                guard
                    let existing = try await tx.sql.raw(
                        "SELECT id, conversation_id FROM messages WHERE sender_id = \(bind: new.senderID) AND client_message_id = \(bind: new.clientMessageID)"
                    ).first()
                else { throw ChorusStoreError.missingRow("messages") }
                guard try existing.string("conversation_id") == new.conversationID,
                    let message = try await tx.messaging.message(id: existing.string("id"), viewer: new.senderID)
                else { return .clientIDReused }
                return .duplicate(message)
            }
            if let quota = new.voiceQuota, try await !tx.voices.chargeVoiceUsage(userID: new.senderID, key: quota.key, limit: quota.limit) {
                throw VoiceQuotaExceeded(limit: quota.limit)
            }
            try await tx.sql.raw(
                """
                UPDATE conversations SET last_message_at = \(bind: new.createdAt.epochMillis) WHERE id = \(bind: new.conversationID)
                """
            ).run()
            // The sender has read (and heard) what they sent.
            try await tx.sql.raw(
                """
                UPDATE conversation_members SET last_read_seq = (SELECT MAX(seq) FROM messages WHERE conversation_id = \(bind: new.conversationID))
                WHERE conversation_id = \(bind: new.conversationID) AND user_id = \(bind: new.senderID)
                """
            ).run()
            // Read without the sender's view when they left the conversation in the meantime (a concurrent request).
            var message = try await tx.messaging.message(id: new.id, viewer: new.senderID)
            if message == nil { message = try await tx.messaging.message(id: new.id) }
            guard let message else { throw ChorusStoreError.missingRow("messages") }
            return .created(message)
        }
    }

    /// Replaces the text of the sender's own message; `nil` when it is not theirs, deleted or missing.
    func editMessage(id: String, senderID: String, content: String, now: Date) async throws -> MessageRecord? {
        let updated = try await sql.raw(
            """
            UPDATE messages SET content = \(bind: content), content_lc = \(bind: content.lowercased()), edited_at = \(bind: now.epochMillis)
            WHERE id = \(bind: id) AND sender_id = \(bind: senderID) AND deleted_at IS NULL RETURNING seq
            """
        ).first()
        guard updated != nil else { return nil }
        return try await message(id: id, viewer: senderID)
    }

    /// Deletes the sender's own message: its text and transcript are erased and its recording detached. Returns the
    /// message as deleted and the detached recording id, or `nil` when it is not theirs or already deleted.
    func deleteMessage(id: String, senderID: String, now: Date) async throws -> (message: MessageRecord, audioID: String?)? {
        try await writeTransaction { tx in
            guard
                let row = try await tx.sql.raw(
                    """
                    SELECT x.audio_id FROM messages x
                    JOIN conversation_members m ON m.conversation_id = x.conversation_id AND m.user_id = \(bind: senderID)
                    WHERE x.id = \(bind: id) AND x.sender_id = \(bind: senderID) AND x.deleted_at IS NULL
                    """
                ).first()
            else { return nil }
            let audioID = try row.optionalString("audio_id")
            try await tx.sql.raw(
                """
                UPDATE messages SET content = NULL, content_lc = NULL, transcript = NULL, transcript_lc = NULL, audio_id = NULL,
                  transcript_confidence = NULL, transcript_label = NULL, deleted_at = \(bind: now.epochMillis)
                WHERE id = \(bind: id)
                """
            ).run()
            // The sender may have left the conversation since the check above (a concurrent request, committed in
            // between under PostgreSQL's READ COMMITTED): the message as deleted is then read without their view of it.
            var message = try await tx.messaging.message(id: id, viewer: senderID)
            if message == nil { message = try await tx.messaging.message(id: id) }
            guard let message else { return nil }
            return (message, audioID)
        }
    }

    /// Moves the member's read position forward to `upTo` (a sequence number; the newest message when `nil`).
    func markRead(conversationID: String, userID: String, upTo: Int64?) async throws {
        let target: SQLQueryString =
            upTo.map { "\(bind: $0)" } ?? "(SELECT COALESCE(MAX(seq), 0) FROM messages WHERE conversation_id = \(bind: conversationID))"
        try await sql.raw(
            """
            UPDATE conversation_members SET last_read_seq = CASE WHEN last_read_seq < \(target) THEN \(target) ELSE last_read_seq END
            WHERE conversation_id = \(bind: conversationID) AND user_id = \(bind: userID)
            """
        ).run()
    }

    /// Records that the member played the voice message (first time only).
    func markHeard(messageSeq: Int64, userID: String, now: Date) async throws {
        try await sql.raw(
            """
            INSERT INTO message_receipts (message_seq, user_id, heard_at) VALUES (\(bind: messageSeq), \(bind: userID), \(bind: now.epochMillis))
            ON CONFLICT (message_seq, user_id) DO UPDATE SET heard_at = COALESCE(message_receipts.heard_at, excluded.heard_at)
            """
        ).run()
    }

    /// Stars or unstars the message for the member (a starred message keeps its recording past retention).
    func setStarred(messageSeq: Int64, userID: String, starred: Bool, now: Date) async throws {
        let value: Int64? = starred ? now.epochMillis : nil
        try await sql.raw(
            """
            INSERT INTO message_receipts (message_seq, user_id, starred_at) VALUES (\(bind: messageSeq), \(bind: userID), \(bind: value))
            ON CONFLICT (message_seq, user_id) DO UPDATE SET starred_at = excluded.starred_at
            """
        ).run()
    }

    // MARK: Recordings

    func insertAudio(_ audio: AudioRecord) async throws {
        try await sql.raw(
            """
            INSERT INTO audio_recordings (id, owner_id, blob_key, format, content_type, size_bytes, duration_ms, long_form, created_at,
              expires_at)
            VALUES (\(bind: audio.id), \(bind: audio.ownerID), \(bind: audio.blobKey), \(bind: audio.format), \(bind: audio.contentType),
              \(bind: Int64(audio.sizeBytes)), \(bind: Int64(audio.durationMs)), \(bind: audio.longForm), \(bind: audio.createdAt.epochMillis),
              \(bind: audio.expiresAt?.epochMillis))
            """
        ).run()
    }

    func audio(id: String) async throws -> AudioRecord? {
        try await sql.raw("SELECT * FROM audio_recordings WHERE id = \(bind: id)").first().map(Self.audioRecord)
    }

    /// Whether `userID` may hear the recording: its owner, or a member of a conversation holding a message with it.
    func canAccessAudio(id: String, userID: String) async throws -> Bool {
        try await reader.raw(
            """
            SELECT a.id FROM audio_recordings a WHERE a.id = \(bind: id) AND (a.owner_id = \(bind: userID) OR EXISTS (
              SELECT 1 FROM messages x JOIN conversation_members m ON m.conversation_id = x.conversation_id
              WHERE x.audio_id = a.id AND m.user_id = \(bind: userID)))
            """
        ).first() != nil
    }

    /// Stores the transcript of a recording (and of the messages already holding it).
    func saveTranscript(audioID: String, text: String, confidence: Double?, label: String?, language: String?) async throws {
        try await writeTransaction { tx in
            try await tx.sql.raw(
                """
                UPDATE audio_recordings SET transcript = \(bind: text), transcript_confidence = \(bind: confidence),
                  transcript_label = \(bind: label), transcript_language = \(bind: language) WHERE id = \(bind: audioID)
                """
            ).run()
            try await tx.sql.raw(
                """
                UPDATE messages SET transcript = \(bind: text), transcript_lc = \(bind: text.lowercased()),
                  transcript_confidence = \(bind: confidence), transcript_label = \(bind: label)
                WHERE audio_id = \(bind: audioID) AND deleted_at IS NULL
                """
            ).run()
        }
    }

    /// Removes the recording's row (after its blob was deleted) and detaches it from messages.
    func deleteAudio(id: String) async throws {
        try await writeTransaction { tx in
            try await tx.sql.raw("UPDATE messages SET audio_id = NULL WHERE audio_id = \(bind: id)").run()
            try await tx.sql.raw("DELETE FROM audio_recordings WHERE id = \(bind: id)").run()
        }
    }

    /// Every recording of the user, newest first.
    func audio(ownerID: String) async throws -> [AudioRecord] {
        try await reader.raw("SELECT * FROM audio_recordings WHERE owner_id = \(bind: ownerID) ORDER BY created_at DESC").all()
            .map(Self.audioRecord)
    }

    /// The voice messages the user sent (deleted ones excluded), newest first.
    func voiceMessages(senderID: String) async throws -> [MessageRecord] {
        try await reader.raw(
            """
            SELECT \(Self.messageColumns), NULL AS starred_at FROM messages x
            JOIN users u ON u.id = x.sender_id LEFT JOIN messaging_profiles p ON p.user_id = x.sender_id
            WHERE x.sender_id = \(bind: senderID) AND x.deleted_at IS NULL AND (x.audio_id IS NOT NULL OR x.transcript IS NOT NULL)
            ORDER BY x.seq DESC
            """
        ).all().map(Self.messageRecord)
    }

    /// Erases the transcripts of the user's messages (their recordings are deleted separately); returns how many.
    func eraseTranscripts(senderID: String) async throws -> Int {
        try await sql.raw(
            """
            UPDATE messages SET transcript = NULL, transcript_lc = NULL, transcript_confidence = NULL, transcript_label = NULL
            WHERE sender_id = \(bind: senderID) AND transcript IS NOT NULL RETURNING seq
            """
        ).all().count
    }

    /// Removes the stored payloads of large realtime events published before `date` (PostgreSQL fan-out).
    func deleteRealtimePayloads(before date: Date) async throws {
        try await sql.raw("DELETE FROM realtime_payloads WHERE created_at < \(bind: date.epochMillis)").run()
    }

    /// Recordings past their expiry that no member starred, oldest first.
    func expiredAudio(now: Date, limit: Int) async throws -> [AudioRecord] {
        try await reader.raw(
            """
            SELECT a.* FROM audio_recordings a
            WHERE a.expires_at IS NOT NULL AND a.expires_at <= \(bind: now.epochMillis)
              AND NOT EXISTS (SELECT 1 FROM messages x JOIN message_receipts r ON r.message_seq = x.seq
                WHERE x.audio_id = a.id AND r.starred_at IS NOT NULL)
            ORDER BY a.expires_at LIMIT \(bind: Int64(limit))
            """
        ).all().map(Self.audioRecord)
    }

    private static func audioRecord(_ row: any SQLRow) throws -> AudioRecord {
        AudioRecord(
            id: try row.string("id"), ownerID: try row.string("owner_id"), blobKey: try row.string("blob_key"),
            format: try row.string("format"), contentType: try row.string("content_type"), sizeBytes: try row.int("size_bytes"),
            durationMs: try row.int("duration_ms"), longForm: try row.decode(column: "long_form", as: Bool.self),
            createdAt: try row.date("created_at"), expiresAt: try row.optionalDate("expires_at"),
            transcript: try row.optionalString("transcript"),
            transcriptConfidence: try row.decode(column: "transcript_confidence", as: Double?.self),
            transcriptLabel: try row.optionalString("transcript_label"), transcriptLanguage: try row.optionalString("transcript_language")
        )
    }
}

extension MessagingStore {
    /// The display name a user set on their messaging profile, if they set one (never the email-derived default): the
    /// first name a call's disclosure may say.
    func explicitDisplayName(userID: String) async throws -> String? {
        try await reader.raw("SELECT display_name FROM messaging_profiles WHERE user_id = \(bind: userID)").first()?
            .optionalString("display_name")
    }
}
