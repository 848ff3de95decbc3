import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Vapor

/// The messaging core: conversations and members, messages (idempotent sending, edits and deletes by the sender),
/// read/heard/star state, search, and the account's messaging profile. Only members see a conversation, its messages
/// or its audio: everyone else gets 404, as if it did not exist. People are invited by email, never added: they become
/// members by accepting (``InvitationsController``).
struct ConversationsController: RouteCollection {
    let services: ChorusServices

    static let maxGroupMembers = 50
    static let maxContentLength = 10_000
    static let defaultPageSize = 50
    static let maxPageSize = 200

    func boot(routes: any RoutesBuilder) throws {
        let routes = routes.grouped(UserAuthenticator(services: services))
        routes.on(API.Messaging.profile, use: profile)
        routes.on(API.Messaging.updateProfile, use: updateProfile)
        // 201 for a new conversation, 200 for the existing direct one.
        routes.onResponse(API.Messaging.createConversation, use: create)
        routes.on(API.Messaging.conversations, use: list)
        routes.on(API.Messaging.conversation, use: show)
        routes.on(API.Messaging.addMembers, use: addMembers)
        routes.on(API.Messaging.removeMember, use: removeMember)
        routes.on(API.Messaging.messages, use: messages)
        // 201 for a new message, 200 for the replay of one already sent with the same client_message_id.
        routes.onResponse(API.Messaging.sendMessage, use: send)
        routes.on(API.Messaging.markRead, use: markRead)
        routes.on(API.Messaging.searchMessages, use: search)
        routes.on(API.Messaging.editMessage, use: edit)
        routes.on(API.Messaging.deleteMessage, use: delete)
        routes.on(API.Messaging.markHeard, use: heard)
        routes.on(API.Messaging.star, use: star)
        routes.on(API.Messaging.unstar, use: unstar)
    }

    // MARK: Profile

    @Sendable
    func profile(_ req: Request) async throws -> MessagingProfileDTO {
        let user = try req.user
        guard let profile = try await req.store.messaging.messagingProfile(userID: user.id) else { throw APIError.notAuthenticated }
        return Self.dto(profile)
    }

    @Sendable
    func updateProfile(_ req: Request) async throws -> MessagingProfileDTO {
        let user = try req.user
        let body = try req.body(of: API.Messaging.updateProfile)
        guard var profile = try await req.store.messaging.messagingProfile(userID: user.id) else { throw APIError.notAuthenticated }
        let year = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: services.now()).year ?? 2026
        var validator = FieldValidator()
        if let text = body.displayName {
            // Stored in NFC; bidi controls and invisible characters are refused (a name must read as what it is).
            let name = UserText.name(text, characters: 1...60, bytes: 240)
            validator.check(
                name != nil, "display_name", "Use 1 to 60 characters (at most 240 bytes), without control or bidirectional-override characters")
            profile.displayName = name ?? profile.displayName
        }
        if let birthYear = body.birthYear {
            validator.check((year - 120...year).contains(birthYear), "birth_year", "Use a four-digit year of birth")
            profile.birthYear = birthYear
        }
        if let days = body.retentionDays {
            validator.check((1...365).contains(days), "retention_days", "Keep recordings between 1 and 365 days")
            profile.retentionDays = days
        }
        if let enabled = body.voiceFeaturesEnabled { profile.voiceEnabled = enabled }
        if let voice = body.defaultVoice {
            validator.check(services.voices.voice(id: voice) != nil, "default_voice", "Pick a voice of GET /voices/defaults")
            profile.defaultVoice = voice
        }
        try validator.throwIfInvalid()
        try await req.store.messaging.saveMessagingProfile(profile, now: services.now())
        // Opting out of voice features revokes the cloned voice.
        if !profile.voiceEnabled, let voice = try await req.store.voices.voiceProfile(userID: user.id) {
            try await VoiceData(services: services).deleteClonedVoice(voice, store: req.store, logger: req.logger)
            _ = try await req.store.voices.deleteVoiceProfile(userID: user.id)
        }
        return Self.dto(profile)
    }

    static func dto(_ profile: MessagingProfileRecord) -> MessagingProfileDTO {
        MessagingProfileDTO(
            displayName: profile.displayName, birthYear: profile.birthYear, retentionDays: profile.retentionDays,
            voiceFeaturesEnabled: profile.voiceEnabled, defaultVoice: profile.defaultVoice)
    }

    // MARK: Conversations

    @Sendable
    func create(_ req: Request) async throws -> Response {
        let user = try req.user
        let body = try req.body(of: API.Messaging.createConversation)
        var validator = FieldValidator()
        validator.check(["direct", "group"].contains(body.kind), "kind", "Use direct or group")
        let emails = Array(Set(body.memberEmails.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }))
        if body.kind == "direct" {
            validator.check(emails.count == 1, "member_emails", "A direct conversation has exactly one other member")
        } else {
            validator.check(
                (1...Self.maxGroupMembers - 1).contains(emails.count), "member_emails",
                "A group has 1 to \(Self.maxGroupMembers - 1) other members")
            validator.check(
                UserText.name(body.title ?? "", characters: 1...100, bytes: 400) != nil, "title",
                "A group needs a title of 1 to 100 characters (at most 400 bytes), without control or bidirectional-override characters")
        }
        validator.check(emails.allSatisfy(EmailAddress.isValid), "member_emails", "Use valid email addresses")
        try validator.throwIfInvalid()
        let me = try await callerEmail(req)
        guard !emails.contains(me) else { throw APIError.invalid("member_emails", "Do not list yourself") }
        let title = body.kind == "group" ? body.title.flatMap { UserText.name($0, characters: 1...100, bytes: 400) } : nil
        let (id, created, invited) = try await req.store.messaging.createConversation(
            id: UUID().uuidString.lowercased(), kind: body.kind.rawValue, title: title, creatorID: user.id, creatorEmail: me, inviteeEmails: emails,
            now: services.now())
        guard let conversation = try await req.store.messaging.conversations(of: user.id, only: id).first else {
            throw APIError.notFound("Conversation not found")
        }
        if created {
            await services.messaging.fanout.publish(
                RealtimeEventDTO(type: "conversation.updated", conversationID: id), to: conversation.members.map(\.userID))
        }
        try await notifyInvited(invited, conversationID: id, store: req.store)
        return try req.json(Self.dto(conversation), status: created ? .created : .ok)
    }

    /// The signed-in user's email (invitations are addressed to emails).
    private func callerEmail(_ req: Request) async throws -> String {
        guard let email = try await req.store.invitations.email(userID: try req.user.id) else { throw APIError.notAuthenticated }
        return email
    }

    /// Tells the invitees who already have an account that an invitation waits for them (`invitation.created`). Only
    /// they hear of it: the inviter's answer is the same whether or not an account uses the email, or whether its
    /// owner blocked them.
    private func notifyInvited(_ emails: [String], conversationID: String, store: ChorusStore) async throws {
        guard !emails.isEmpty else { return }
        let invitees = try await store.messaging.userIDs(emails: emails)
        guard !invitees.isEmpty else { return }
        await services.messaging.fanout.publish(
            RealtimeEventDTO(type: "invitation.created", conversationID: conversationID), to: Array(invitees.values))
    }

    @Sendable
    func list(_ req: Request) async throws -> ConversationsResponse {
        let user = try req.user
        let conversations = try await req.store.messaging.conversations(of: user.id)
        return ConversationsResponse(conversations: conversations.map(Self.dto))
    }

    @Sendable
    func show(_ req: Request) async throws -> ConversationDTO {
        Self.dto(try await conversation(req))
    }

    /// The conversation named in the path as the caller sees it; 404 unless the caller is a member.
    private func conversation(_ req: Request) async throws -> ConversationRecord {
        let user = try req.user
        guard let id = req.parameters.get("conversation_id"),
            let conversation = try await req.store.messaging.conversations(of: user.id, only: id).first
        else { throw APIError.notFound("Conversation not found") }
        return conversation
    }

    static func dto(_ record: ConversationRecord) -> ConversationDTO {
        ConversationDTO(
            id: record.id, kind: ConversationKind(rawValue: record.kind), title: record.title,
            members: record.members.map {
                ConversationMemberDTO(
                    userID: $0.userID, displayName: $0.displayName, role: ConversationRole(rawValue: $0.role), joinedAt: $0.joinedAt)
            }, createdAt: record.createdAt, lastMessageAt: record.lastMessageAt, unreadCount: record.unreadCount,
            unheardVoiceCount: record.unheardVoiceCount, hasUrgent: record.hasUrgent)
    }

    @Sendable
    func addMembers(_ req: Request) async throws -> ConversationDTO {
        let user = try req.user
        let conversation = try await conversation(req)
        guard conversation.kind == "group" else {
            throw APIError.badRequest("Members cannot be added to a direct conversation; start a group instead")
        }
        let body = try req.body(of: API.Messaging.addMembers)
        let emails = Array(Set(body.memberEmails.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }))
        guard !emails.isEmpty else { throw APIError.invalid("member_emails", "List at least one email") }
        guard emails.allSatisfy(EmailAddress.isValid) else { throw APIError.invalid("member_emails", "Use valid email addresses") }
        // Members and everyone invited count towards the limit (an email already in the group counts too: the answer
        // must not depend on who has an account).
        let pending = try await req.store.invitations.pendingInvitationCount(conversationID: conversation.id)
        guard conversation.members.count + pending + emails.count <= Self.maxGroupMembers else {
            throw APIError.invalid("member_emails", "A group has at most \(Self.maxGroupMembers) members and invitations")
        }
        let now = services.now()
        var invited: [String] = []
        for email in emails {
            if try await req.store.invitations.invite(conversationID: conversation.id, inviterID: user.id, email: email, now: now) { invited.append(email) }
        }
        try await notifyInvited(invited, conversationID: conversation.id, store: req.store)
        return Self.dto(conversation)
    }

    /// A member leaves (removing themselves), or the owner removes someone.
    @Sendable
    func removeMember(_ req: Request) async throws {
        let user = try req.user
        let conversation = try await conversation(req)
        guard let target = req.parameters.get("user_id") else { throw APIError.notFound("Member not found") }
        let isOwner = conversation.members.contains { $0.userID == user.id && $0.role == "owner" }
        guard target == user.id || (isOwner && conversation.kind == "group") else {
            throw APIError.detail(.forbidden, "Only the group's owner can remove other members")
        }
        guard try await req.store.messaging.removeMember(conversationID: conversation.id, userID: target) else {
            throw APIError.notFound("Member not found")
        }
        await services.messaging.fanout.publish(
            RealtimeEventDTO(type: "conversation.updated", conversationID: conversation.id, userID: target),
            to: conversation.members.map(\.userID))
    }

    // MARK: Messages

    @Sendable
    func messages(_ req: Request) async throws -> MessagesPage {
        let user = try req.user
        let conversation = try await conversation(req)
        let limit = min(max(req.query[Int.self, at: "limit"] ?? Self.defaultPageSize, 1), Self.maxPageSize)
        var before: Int64?
        if let cursor = req.query[String.self, at: "before"] {
            guard let value = Int64(cursor), value > 0 else { throw APIError.invalid("before", "Use the next_cursor of a previous page") }
            before = value
        }
        let page = try await req.store.messaging.messages(conversationID: conversation.id, viewer: user.id, before: before, limit: limit + 1)
        let visible = Array(page.prefix(limit))
        let next = page.count > limit ? visible.last.map { String($0.seq) } : nil
        let now = services.now()
        return MessagesPage(messages: visible.map { messageDTO($0, now: now) }, nextCursor: next)
    }

    @Sendable
    func send(_ req: Request) async throws -> Response {
        let user = try req.user
        let conversation = try await conversation(req)
        let body = try req.body(of: API.Messaging.sendMessage)
        var validator = FieldValidator()
        let clientID = body.clientMessageID.trimmingCharacters(in: .whitespaces)
        validator.check((1...64).contains(clientID.count), "client_message_id", "Use 1 to 64 characters (a UUID)")
        validator.check(["text", "audio", "both"].contains(body.sendMode), "send_mode", "Use text, audio or both")
        let content = body.content?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let content { validator.check(content.count <= Self.maxContentLength, "content", "At most \(Self.maxContentLength) characters") }
        switch body.sendMode {
        case "text":
            validator.check(!(content ?? "").isEmpty, "content", "A text message needs content")
            validator.check(body.audioID == nil, "audio_id", "A text message has no recording; use send_mode both")
        case "audio", "both":
            validator.check(body.audioID != nil, "audio_id", "A voice message needs the audio_id of POST /audio")
        default: break
        }
        try validator.throwIfInvalid()

        var audio: AudioRecord?
        if let audioID = body.audioID {
            _ = try await VoicePrivacy.requireVoiceAllowed(userID: user.id, store: req.store, now: services.now())
            guard let record = try await req.store.messaging.audio(id: audioID), record.ownerID == user.id else {
                throw APIError.invalid("audio_id", "No recording of yours has this id")
            }
            audio = record
        }
        let text = body.sendMode == "audio" ? nil : content
        let urgency = UrgencyPolicy.standard.assess([text, audio?.transcript].compactMap { $0 }.joined(separator: "\n"))
        var reasons = urgency.categories.map(\.rawValue).sorted()
        if body.urgent == true { reasons.append("sender") }
        let urgent = body.urgent ?? urgency.isUrgent
        var voiceQuota: (key: String, limit: Int)?
        if audio != nil, let limit = try await voiceMessageLimit(userID: user.id, store: req.store) {
            voiceQuota = (VoiceUsagePolicy.monthlyVoiceMessagesKey(at: services.now()), limit)
        }
        let outcome: SendMessageOutcome
        do {
            outcome = try await req.store.messaging.sendMessage(
                NewMessage(
                    id: UUID().uuidString.lowercased(), conversationID: conversation.id, senderID: user.id, clientMessageID: clientID,
                    sendMode: body.sendMode.rawValue, content: text, audio: audio, urgent: urgent, urgentReasons: urgent ? reasons : [],
                    createdAt: services.now(), voiceQuota: voiceQuota))
        } catch let exceeded as VoiceQuotaExceeded {
            throw APIError.detail(.paymentRequired, VoiceUsagePolicy.overQuotaMessage(limit: exceeded.limit))
        }
        let now = services.now()
        switch outcome {
        case .duplicate(let message):
            return try req.json(messageDTO(message, now: now))
        case .clientIDReused:
            throw APIError.detail(.conflict, "This client_message_id was already used for a message in another conversation")
        case .audioInUse:
            throw APIError.detail(.conflict, "This recording is already attached to another message")
        case .created(let message):
            if let audio, audio.transcript == nil {
                try await req.store.jobs.enqueueJob(kind: JobKind.transcribeMessageAudio, payload: audio.id, runAt: now, now: now)
            }
            try await MessageUrgency.enqueueIfNeeded(message, senderChose: body.urgent != nil, services: services, store: req.store)
            await publish(message, type: "message.created", to: conversation.members.map(\.userID), now: now)
            return try req.json(messageDTO(message, now: now), status: .created)
        }
    }

    /// The monthly voice-message limit of the user's tier: capped without a paid plan, unlimited with one.
    private func voiceMessageLimit(userID: String, store: ChorusStore) async throws -> Int? {
        let account = try await CallPlacement(services: services, store: store, logger: Logger(label: "chorus.messaging")).account(userID: userID)
        let tier: VoiceTier = services.policy.position(of: account, at: services.now()).plan == nil ? .free : .paid
        return VoiceUsagePolicy(
            dailyGenerationsPerUser: services.configuration.voiceMessages.dailyGenerationsPerUser,
            freeMonthlyVoiceMessages: services.configuration.voiceMessages.freeMonthlyVoiceMessages
        ).monthlyVoiceMessageLimit(tier: tier)
    }

    /// Sends `type` with the message to the members (each gets the same view; per-member fields such as `starred`
    /// are the sender's and refreshed by `GET`).
    private func publish(_ message: MessageRecord, type: String, to members: [String], now: Date) async {
        var dto = messageDTO(message, now: now)
        dto.starred = false
        await services.messaging.fanout.publish(RealtimeEventDTO(type: type, conversationID: message.conversationID, message: dto), to: members)
    }

    func messageDTO(_ record: MessageRecord, now: Date) -> MessageDTO {
        services.messageDTO(record, now: now)
    }

    /// The message in the path, as the caller sees it; 404 unless the caller is a member of its conversation.
    private func message(_ req: Request) async throws -> MessageRecord {
        let user = try req.user
        guard let id = req.parameters.get("message_id"), let message = try await req.store.messaging.message(id: id, viewer: user.id) else {
            throw APIError.notFound("Message not found")
        }
        return message
    }

    @Sendable
    func edit(_ req: Request) async throws -> MessageDTO {
        let user = try req.user
        let existing = try await message(req)
        let body = try req.body(of: API.Messaging.editMessage)
        let content = body.content.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...Self.maxContentLength).contains(content.count) else {
            throw APIError.invalid("content", "Use 1 to \(Self.maxContentLength) characters")
        }
        guard existing.senderID == user.id else { throw APIError.detail(.forbidden, "Only the sender can edit a message") }
        guard existing.sendMode != "audio" else { throw APIError.badRequest("An audio-only message has no text to edit") }
        let now = services.now()
        guard let updated = try await req.store.messaging.editMessage(id: existing.id, senderID: user.id, content: content, now: now) else {
            throw APIError.notFound("Message not found")
        }
        let members = try await req.store.messaging.memberIDs(conversationID: updated.conversationID)
        await publish(updated, type: "message.updated", to: members, now: now)
        return messageDTO(updated, now: now)
    }

    @Sendable
    func delete(_ req: Request) async throws {
        let user = try req.user
        let existing = try await message(req)
        guard existing.senderID == user.id else { throw APIError.detail(.forbidden, "Only the sender can delete a message") }
        let now = services.now()
        guard let (deleted, audioID) = try await req.store.messaging.deleteMessage(id: existing.id, senderID: user.id, now: now) else {
            throw APIError.notFound("Message not found")
        }
        if let audioID { try await VoiceData(services: services).deleteRecording(id: audioID, store: req.store) }
        let members = try await req.store.messaging.memberIDs(conversationID: deleted.conversationID)
        await publish(deleted, type: "message.deleted", to: members, now: now)
    }

    @Sendable
    func markRead(_ req: Request) async throws -> ConversationDTO {
        let user = try req.user
        let conversation = try await conversation(req)
        let body = try req.decodeOptionalJSON(MarkReadRequest.self)
        var upTo: Int64?
        if let messageID = body?.upToMessageID {
            guard let message = try await req.store.messaging.message(id: messageID, viewer: user.id), message.conversationID == conversation.id else {
                throw APIError.invalid("up_to_message_id", "No message of this conversation has this id")
            }
            upTo = message.seq
        }
        try await req.store.messaging.markRead(conversationID: conversation.id, userID: user.id, upTo: upTo)
        guard let updated = try await req.store.messaging.conversations(of: user.id, only: conversation.id).first else {
            throw APIError.notFound("Conversation not found")
        }
        return Self.dto(updated)
    }

    @Sendable
    func heard(_ req: Request) async throws {
        let user = try req.user
        let message = try await message(req)
        guard message.audioID != nil || message.deletedAt != nil else { throw APIError.badRequest("This message has no recording") }
        try await req.store.messaging.markHeard(messageSeq: message.seq, userID: user.id, now: services.now())
    }

    @Sendable
    func star(_ req: Request) async throws -> MessageDTO {
        try await setStar(req, starred: true)
    }

    @Sendable
    func unstar(_ req: Request) async throws -> MessageDTO {
        try await setStar(req, starred: false)
    }

    private func setStar(_ req: Request, starred: Bool) async throws -> MessageDTO {
        let user = try req.user
        let message = try await message(req)
        let now = services.now()
        try await req.store.messaging.setStarred(messageSeq: message.seq, userID: user.id, starred: starred, now: now)
        guard let updated = try await req.store.messaging.message(id: message.id, viewer: user.id) else { throw APIError.notFound("Message not found") }
        return messageDTO(updated, now: now)
    }

    @Sendable
    func search(_ req: Request) async throws -> MessageSearchResponse {
        let user = try req.user
        let query = (req.query[String.self, at: "q"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard (2...200).contains(query.count) else { throw APIError.invalid("q", "Search for 2 to 200 characters") }
        let limit = min(max(req.query[Int.self, at: "limit"] ?? Self.defaultPageSize, 1), Self.maxPageSize)
        let found = try await req.store.messaging.searchMessages(viewer: user.id, query: query, limit: limit)
        let now = services.now()
        return MessageSearchResponse(messages: found.map { messageDTO($0, now: now) })
    }
}

extension ChorusServices {
    /// A message for the wire, with a fresh signed URL for its recording.
    func messageDTO(_ record: MessageRecord, now: Date) -> MessageDTO {
        let audioURL = record.audioID.map { absoluteURL(messaging.audioURLs.path(audioID: $0, now: now)) }
        return MessageDTO(
            id: record.id, conversationID: record.conversationID, senderID: record.senderID, senderName: record.senderName,
            clientMessageID: record.clientMessageID, sendMode: MessageSendMode(rawValue: record.sendMode), content: record.content, audioURL: audioURL,
            audioDuration: record.audioDurationMs.map { Double($0) / 1000 }, transcript: record.transcript,
            transcriptionConfidence: record.transcriptConfidence, transcriptionConfidenceLabel: record.transcriptLabel.map(ConfidenceLabel.init(rawValue:)),
            urgent: record.urgent, urgentReasons: record.urgentReasons.map(UrgentReason.init(rawValue:)), starred: record.starred, createdAt: record.createdAt,
            editedAt: record.editedAt, deletedAt: record.deletedAt)
    }
}
