import ChorusAPI
import Foundation

/// Conversations of voice messages and their members: `/conversations`. Reached through
/// ``ChorusClient/conversations``.
///
/// Only members see a conversation: for everyone else it does not exist (``ChorusError/notFound``). Every method needs
/// a signed-in user (``ChorusError/signedOut`` otherwise).
public struct ConversationsClient: Sendable {
    let session: APISession

    /// The user's conversations, most recently active first, each with its unread and unheard counts.
    public func list() async throws -> [Conversation] {
        try await session.send(API.Messaging.conversations.request()).conversations
    }

    /// One conversation.
    ///
    /// - Throws: ``ChorusError/notFound`` when it does not exist or the user is not a member.
    public func conversation(id: String) async throws -> Conversation {
        try await session.send(API.Messaging.conversation.request(id))
    }

    /// The direct conversation with the person at `email`, started if there is none yet: there is one per pair of
    /// emails, so calling this again (from either side) returns the same conversation.
    ///
    /// The other person is invited, not added: they appear in ``Conversation/members`` once they accept (see
    /// ``invitations()``). The answer is the same whether or not an account uses the email (an invitation to an
    /// unregistered email waits for them to sign up). Calling this again brings the user back if they had left, and
    /// invites the other again if they had left or declined — never adds them.
    ///
    /// - Parameter email: the other person's email (matched case-insensitively).
    /// - Throws: ``ChorusError/validation(_:)`` (field `member_emails`) for an invalid email or the user's own.
    public func createDirect(with email: String) async throws -> Conversation {
        var request = try API.Messaging.createConversation.request(json: CreateConversationRequest(kind: .direct, memberEmails: [email]))
        request.request.idempotent = true  // the server returns the pair's existing conversation
        return try await session.send(request)
    }

    /// Starts a group with the user as its owner and invites the others: each appears in ``Conversation/members`` once
    /// they accept.
    ///
    /// A network failure is not retried: a repeated request would start a second group. Call ``list()`` to see
    /// whether the first one arrived.
    ///
    /// - Parameters:
    ///   - title: the group's name, 1–100 characters.
    ///   - memberEmails: the people to invite (1–49), by email; whether an account uses it yet makes no difference.
    /// - Throws: ``ChorusError/validation(_:)`` for a missing title, too many members, or an invalid email.
    public func createGroup(title: String, memberEmails: [String]) async throws -> Conversation {
        let body = CreateConversationRequest(kind: .group, title: title, memberEmails: memberEmails)
        return try await session.send(try API.Messaging.createConversation.request(json: body))
    }

    /// Invites people to a group; those already in it or invited are left as they are. They join when they accept.
    ///
    /// - Parameters:
    ///   - emails: the people to invite, by email (registered or not: the answer is the same).
    ///   - conversationID: the group.
    /// - Returns: the group (its members do not change until someone accepts).
    /// - Throws: ``ChorusError/validation(_:)`` for an invalid email or more than 50 members and invitations in all;
    ///   ``ChorusError/api(status:detail:)`` (400) for a direct conversation; ``ChorusError/notFound`` when the user is
    ///   not a member.
    public func addMembers(emails: [String], to conversationID: String) async throws -> Conversation {
        var request = try API.Messaging.addMembers.request(conversationID, json: AddMembersRequest(memberEmails: emails))
        request.request.idempotent = true  // adding someone already in the group changes nothing
        return try await session.send(request)
    }

    /// Removes a member from a group (the owner only), or the user themselves from any conversation.
    ///
    /// - Parameters:
    ///   - userID: the member's ``ConversationMember/userID``.
    ///   - conversationID: the conversation.
    /// - Throws: ``ChorusError/api(status:detail:)`` (403) when a member other than the owner removes someone else;
    ///   ``ChorusError/notFound`` when the user is not a member, or `userID` is not (or no longer) one.
    public func removeMember(userID: String, from conversationID: String) async throws {
        try await session.send(API.Messaging.removeMember.request(conversationID, userID))
    }

    /// The user leaves a conversation: it disappears from their list and they receive no more of its messages.
    ///
    /// - Throws: ``ChorusError/signedOut`` without a session; ``ChorusError/notFound`` when the user is not a member.
    public func leave(_ conversationID: String) async throws {
        guard let accountID = await AuthClient(session: session).accountID else { throw ChorusError.signedOut }
        try await removeMember(userID: accountID.uuidString.lowercased(), from: conversationID)
    }

    // MARK: Invitations

    /// The invitations waiting for the user's answer, newest first. An `invitation.created` realtime event
    /// announces a new one.
    public func invitations() async throws -> [ConversationInvitation] {
        try await session.send(API.Messaging.invitations.request()).invitations
    }

    /// Accepts an invitation: the user joins the conversation.
    ///
    /// - Parameter invitationID: the ``ConversationInvitation/id``.
    /// - Returns: the conversation, with the user among its members.
    /// - Throws: ``ChorusError/notFound`` when the user has no such invitation (declined, already accepted, or never
    ///   theirs); ``ChorusError/api(status:detail:)`` (409) when the group already has 50 members.
    public func accept(_ invitationID: String) async throws -> Conversation {
        try await session.send(API.Messaging.acceptInvitation.request(invitationID))
    }

    /// Declines an invitation; the inviter is not told.
    ///
    /// - Throws: ``ChorusError/notFound`` when the user has no such invitation.
    public func decline(_ invitationID: String) async throws {
        try await session.send(API.Messaging.declineInvitation.request(invitationID))
    }

    /// Declines an invitation and blocks its inviter: their other invitations to the user are dropped, and later ones
    /// are never delivered (the inviter cannot tell).
    ///
    /// - Throws: ``ChorusError/notFound`` when the user has no such invitation.
    public func blockInviter(of invitationID: String) async throws {
        try await session.send(API.Messaging.blockInviter.request(invitationID))
    }

    /// Marks messages read: all of them, or those up to and including one message.
    ///
    /// - Parameters:
    ///   - conversationID: the conversation.
    ///   - messageID: the last message read; `nil` for everything.
    /// - Returns: the conversation with its updated ``Conversation/unreadCount``.
    /// - Throws: ``ChorusError/validation(_:)`` (field `up_to_message_id`) for a message of another conversation.
    @discardableResult
    public func markRead(_ conversationID: String, upTo messageID: String? = nil) async throws -> Conversation {
        var request = try API.Messaging.markRead.request(conversationID, json: MarkReadRequest(upToMessageID: messageID))
        request.request.idempotent = true  // marking read twice changes nothing
        return try await session.send(request)
    }

    // MARK: Conversation audio

    /// What the summaries throw (as ``ChorusError/api(status:detail:)``, status 503) when none can be produced: the
    /// product's own wording.
    public static let summaryFailedMessage = "Couldn't generate summary right now. Try again in a moment."

    /// A narrated summary of the conversation's last messages: overview, decisions, action items, dates and urgent
    /// items, and the narration spoken by the narrator voice. Served from storage while no new message arrives (up to
    /// 7 days), and announced by a `summary.ready` event when new.
    ///
    /// - Parameters:
    ///   - conversationID: the conversation.
    ///   - last: how many of the latest messages to summarise, 20–200.
    /// - Throws: ``ChorusError/validation(_:)`` (field `last`) out of range; ``ChorusError/api(status:detail:)`` with
    ///   400 when there are no messages, 503 with ``summaryFailedMessage``; ``ChorusError/notFound`` for a
    ///   conversation the user is not a member of.
    public func summary(of conversationID: String, last: Int = 50) async throws -> ConversationSummary {
        try await summary(of: conversationID, SummaryRequest(last: last))
    }

    /// A narrated summary of the conversation's messages since a time (at most the last 200), e.g. since the user last
    /// opened it.
    ///
    /// - Parameters:
    ///   - conversationID: the conversation.
    ///   - since: summarise the messages sent after this time.
    /// - Throws: like ``summary(of:last:)``.
    public func summary(of conversationID: String, since: Date) async throws -> ConversationSummary {
        try await summary(of: conversationID, SummaryRequest(since: since))
    }

    private func summary(of conversationID: String, _ body: SummaryRequest) async throws -> ConversationSummary {
        var request = try API.Messaging.summary.request(conversationID, json: body)
        request.request.idempotent = true  // the same messages give the stored summary
        do {
            return ConversationSummary(try await session.send(request))
        } catch ChorusError.server(status: 503, _) {
            throw ChorusError.api(status: 503, detail: Self.summaryFailedMessage)
        }
    }

    /// A summary or daily digest made earlier: the `summary_id` of a `summary.ready` or `digest.ready` event.
    ///
    /// - Parameters:
    ///   - summaryID: the summary's ``ConversationSummary/id``.
    ///   - conversationID: its conversation.
    /// - Throws: ``ChorusError/notFound`` when it does not exist, belongs to another conversation, or the user is not a
    ///   member.
    public func storedSummary(id summaryID: String, in conversationID: String) async throws -> ConversationSummary {
        ConversationSummary(try await session.send(API.Messaging.storedSummary.request(conversationID, summaryID)))
    }

    /// The conversation's last messages read aloud, each in its sender's voice (cloned or default), joined into one
    /// WAV file with a timeline of who speaks when, answered when every clip is made (the server makes several at a
    /// time). To start playing the first clip while the others are made, use ``playbackUpdates(of:last:)``.
    ///
    /// A clip that cannot be made is reported in ``ConversationPlayback/clips`` (status ``ConversationPlayback/Status/partial``,
    /// the file has the others); when none can, the status is ``ConversationPlayback/Status/failed`` and
    /// ``ConversationPlayback/fallbackMessage`` offers the summary (``summary(of:last:)``).
    ///
    /// - Parameters:
    ///   - conversationID: the conversation.
    ///   - last: how many of the latest messages with text, 1–30.
    /// - Throws: ``ChorusError/validation(_:)`` (field `last`) out of range; ``ChorusError/api(status:detail:)`` with
    ///   400 when there is nothing to play; ``ChorusError/notFound`` for a conversation the user is not a member of.
    public func playback(of conversationID: String, last: Int = 10) async throws -> ConversationPlayback {
        var request = try API.Messaging.playback.request(conversationID, json: PlaybackRequest(last: last))
        request.request.idempotent = true  // each message's speech is generated once, the joined file stored once
        return try ConversationPlayback(try await session.send(request))
    }

    /// Starts a playback of the conversation's last messages and answers at once, with every clip pending; the clips
    /// fill in on the server, cached ones at once (``MessagingEvent/playbackUpdated(_:)``, ``playbackState(id:in:)``).
    ///
    /// - Throws: as ``playback(of:last:)``.
    public func startPlayback(of conversationID: String, last: Int = 10) async throws -> ConversationPlayback {
        let request = try API.Messaging.playback.request(conversationID, json: PlaybackRequest(last: last, stream: true))
        return try ConversationPlayback(try await session.send(request))
    }

    /// A playback started with ``startPlayback(of:last:)`` as it stands now.
    ///
    /// - Throws: ``ChorusError/notFound`` when the playback is unknown (another user's, or older than an hour).
    public func playbackState(id playbackID: String, in conversationID: String) async throws -> ConversationPlayback {
        try ConversationPlayback(try await session.send(API.Messaging.playbackState.request(conversationID, playbackID)))
    }

    /// A playback of the conversation's last messages as it fills in: the started playback first, then each time a
    /// clip becomes ready or fails, ending with the finished playback (``ConversationPlayback/isFinished``). Play
    /// ``ConversationPlayback/Clip/audioURL`` of each ready clip in order while the rest are made.
    ///
    /// ```swift
    /// for try await playback in chorus.conversations.playbackUpdates(of: conversationID, last: 30) {
    ///     player.enqueue(playback.clips.filter { $0.state == .ready })
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - interval: how often the server is asked, in seconds, kept within 0.05–5 (NaN means the default).
    /// - Throws: as ``startPlayback(of:last:)``; the stream ends with the error.
    public func playbackUpdates(
        of conversationID: String, last: Int = 10, interval: TimeInterval = 0.25
    ) -> AsyncThrowingStream<ConversationPlayback, any Error> {
        // Within 0.05–5 s whatever is passed (NaN, which no comparison bounds, is the default): never a trap.
        let seconds = interval.isNaN ? 0.25 : min(max(interval, 0.05), 5)
        let pause = Duration.milliseconds(Int((seconds * 1000).rounded()))
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var playback = try await startPlayback(of: conversationID, last: last)
                    continuation.yield(playback)
                    while !playback.isFinished {
                        try await Task.sleep(for: pause)
                        let next = try await playbackState(id: playback.id, in: conversationID)
                        // Only changes: a clip made or failed, or the playback finished.
                        if next.clips.map(\.state) != playback.clips.map(\.state) || next.isFinished { continuation.yield(next) }
                        playback = next
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The user's daily digest of the conversation; `off` until they subscribe.
    ///
    /// - Throws: ``ChorusError/notFound`` for a conversation the user is not a member of.
    public func digest(of conversationID: String) async throws -> DigestSubscription {
        DigestSubscription(try await session.send(API.Messaging.digest.request(conversationID)))
    }

    /// Subscribes the user to a daily digest of the conversation (a narrated summary of the day's messages at 07:00 or
    /// 19:00 in their time zone), or ends it with `.off`.
    ///
    /// - Parameters:
    ///   - conversationID: the conversation.
    ///   - schedule: morning, evening or off.
    ///   - timeZone: the time zone the schedule follows; the device's by default.
    /// - Returns: the subscription, with when the next digest is due.
    /// - Throws: ``ChorusError/validation(_:)`` naming `schedule` or `time_zone`; ``ChorusError/notFound`` for a
    ///   conversation the user is not a member of.
    @discardableResult
    public func setDigest(
        of conversationID: String, schedule: DigestSchedule, timeZone: TimeZone = .current
    ) async throws
        -> DigestSubscription
    {
        let body = DigestSubscriptionDTO(schedule: schedule, timeZone: timeZone.identifier)
        return DigestSubscription(try await session.send(try API.Messaging.setDigest.request(conversationID, json: body)))
    }
}
