import Foundation

// Voice messages: conversations, messages, recordings and transcripts.

/// `POST /conversations` body.
public struct CreateConversationRequest: Codable, Sendable, Equatable {
    /// `direct` (exactly one other member) or `group`.
    public var kind: ConversationKind
    /// The group's name (required for groups, ignored for direct conversations), 1–100 characters.
    public var title: String?
    /// The other members, by the email they registered with (1 for direct, 1–49 for groups).
    public var memberEmails: [String]

    public init(kind: ConversationKind, title: String? = nil, memberEmails: [String]) {
        self.kind = kind
        self.title = title
        self.memberEmails = memberEmails
    }

    enum CodingKeys: String, CodingKey {
        case kind
        case title
        case memberEmails = "member_emails"
    }
}

/// A member of a conversation.
public struct ConversationMemberDTO: Codable, Sendable, Hashable, Identifiable {
    public var userID: String
    public var displayName: String
    /// `owner` (created the conversation; may remove members) or `member`.
    public var role: ConversationRole
    public var joinedAt: Date

    /// The member's account id, ``userID``.
    public var id: String { userID }

    public init(userID: String, displayName: String, role: ConversationRole, joinedAt: Date) {
        self.userID = userID
        self.displayName = displayName
        self.role = role
        self.joinedAt = joinedAt
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case displayName = "display_name"
        case role
        case joinedAt = "joined_at"
    }
}

/// A conversation as one member sees it.
public struct ConversationDTO: Codable, Sendable, Hashable, Identifiable {
    public var id: String
    public var kind: ConversationKind
    public var title: String?
    public var members: [ConversationMemberDTO]
    public var createdAt: Date
    public var lastMessageAt: Date?
    /// Messages from others after this member's read position.
    public var unreadCount: Int
    /// Voice messages from others this member has not played yet.
    public var unheardVoiceCount: Int
    /// An unread urgent message from others is waiting.
    public var hasUrgent: Bool

    public init(
        id: String, kind: ConversationKind, title: String?, members: [ConversationMemberDTO], createdAt: Date, lastMessageAt: Date?,
        unreadCount: Int, unheardVoiceCount: Int, hasUrgent: Bool
    ) {
        self.id = id
        self.kind = kind
        self.title = title
        self.members = members
        self.createdAt = createdAt
        self.lastMessageAt = lastMessageAt
        self.unreadCount = unreadCount
        self.unheardVoiceCount = unheardVoiceCount
        self.hasUrgent = hasUrgent
    }

    enum CodingKeys: String, CodingKey {
        case id
        case kind
        case title
        case members
        case createdAt = "created_at"
        case lastMessageAt = "last_message_at"
        case unreadCount = "unread_count"
        case unheardVoiceCount = "unheard_voice_count"
        case hasUrgent = "has_urgent"
    }
}

/// `GET /conversations` answer, most recently active first.
public struct ConversationsResponse: Codable, Sendable, Equatable {
    public var conversations: [ConversationDTO]

    public init(conversations: [ConversationDTO]) {
        self.conversations = conversations
    }

    enum CodingKeys: String, CodingKey {
        case conversations
    }
}

/// `POST /conversations/{id}/members` body.
public struct AddMembersRequest: Codable, Sendable, Equatable {
    public var memberEmails: [String]

    public init(memberEmails: [String]) {
        self.memberEmails = memberEmails
    }

    enum CodingKeys: String, CodingKey {
        case memberEmails = "member_emails"
    }
}

/// An invitation to a conversation waiting for the signed-in user's answer (`GET /invitations`): until they accept it
/// they receive none of its messages and nobody there sees their presence.
public struct InvitationDTO: Codable, Sendable, Hashable, Identifiable {
    public var id: String
    public var conversationID: String
    /// `direct` or `group`.
    public var kind: ConversationKind
    /// The group's name (`null` for a direct conversation).
    public var title: String?
    public var inviterID: String
    public var inviterName: String
    public var inviterEmail: String
    public var createdAt: Date

    public init(
        id: String, conversationID: String, kind: ConversationKind, title: String?, inviterID: String, inviterName: String, inviterEmail: String,
        createdAt: Date
    ) {
        self.id = id
        self.conversationID = conversationID
        self.kind = kind
        self.title = title
        self.inviterID = inviterID
        self.inviterName = inviterName
        self.inviterEmail = inviterEmail
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case id
        case conversationID = "conversation_id"
        case kind
        case title
        case inviterID = "inviter_id"
        case inviterName = "inviter_name"
        case inviterEmail = "inviter_email"
        case createdAt = "created_at"
    }
}

/// `GET /invitations` answer, newest first.
public struct InvitationsResponse: Codable, Sendable, Equatable {
    public var invitations: [InvitationDTO]

    public init(invitations: [InvitationDTO]) {
        self.invitations = invitations
    }

    enum CodingKeys: String, CodingKey {
        case invitations
    }
}

/// `POST /conversations/{id}/messages` body.
///
/// `send_mode` says what the recipients get: `text` (content only), `audio` (the recording only), `both` (the
/// recording and its reviewed transcript). A voice message names a recording uploaded with `POST /audio`.
public struct SendMessageRequest: Codable, Sendable, Equatable {
    /// A client-generated id (UUID recommended, ≤ 64 characters): sending again with the same id returns the
    /// message already created instead of a duplicate (the app's offline queue retries safely).
    public var clientMessageID: String
    public var sendMode: MessageSendMode
    /// The text (text messages), or the transcript as the sender reviewed and corrected it (voice messages).
    public var content: String?
    /// The recording, for `audio` and `both`.
    public var audioID: String?
    /// Flag the message urgent; when absent the server decides (summary model or keyword policy).
    public var urgent: Bool?

    public init(clientMessageID: String, sendMode: MessageSendMode, content: String? = nil, audioID: String? = nil, urgent: Bool? = nil) {
        self.clientMessageID = clientMessageID
        self.sendMode = sendMode
        self.content = content
        self.audioID = audioID
        self.urgent = urgent
    }

    enum CodingKeys: String, CodingKey {
        case clientMessageID = "client_message_id"
        case sendMode = "send_mode"
        case content
        case audioID = "audio_id"
        case urgent
    }
}

/// `PATCH /messages/{id}` body (the sender only).
public struct EditMessageRequest: Codable, Sendable, Equatable {
    public var content: String

    public init(content: String) {
        self.content = content
    }

    enum CodingKeys: String, CodingKey {
        case content
    }
}

/// A message.
public struct MessageDTO: Codable, Sendable, Equatable {
    public var id: String
    public var conversationID: String
    public var senderID: String
    public var senderName: String
    public var clientMessageID: String?
    public var sendMode: MessageSendMode
    /// The text, or the voice message's reviewed transcript when sent as `both`; `null` once deleted.
    public var content: String?
    /// A short-lived signed URL of the recording (fetch it without the bearer token; supports `Range`).
    public var audioURL: String?
    public var audioDuration: Double?
    /// The machine transcript of the recording.
    public var transcript: String?
    /// 0–1, when the speech model reports its certainty.
    public var transcriptionConfidence: Double?
    /// `good`, `fair` or `poor`.
    public var transcriptionConfidenceLabel: ConfidenceLabel?
    public var urgent: Bool
    /// Why it is urgent: `medical`, `schedule`, `safety`, `sender` (flagged by the sender).
    public var urgentReasons: [UrgentReason]
    public var starred: Bool
    public var createdAt: Date
    public var editedAt: Date?
    public var deletedAt: Date?

    public init(
        id: String, conversationID: String, senderID: String, senderName: String, clientMessageID: String?, sendMode: MessageSendMode,
        content: String?, audioURL: String?, audioDuration: Double?, transcript: String?, transcriptionConfidence: Double?,
        transcriptionConfidenceLabel: ConfidenceLabel?, urgent: Bool, urgentReasons: [UrgentReason], starred: Bool, createdAt: Date,
        editedAt: Date?, deletedAt: Date?
    ) {
        self.id = id
        self.conversationID = conversationID
        self.senderID = senderID
        self.senderName = senderName
        self.clientMessageID = clientMessageID
        self.sendMode = sendMode
        self.content = content
        self.audioURL = audioURL
        self.audioDuration = audioDuration
        self.transcript = transcript
        self.transcriptionConfidence = transcriptionConfidence
        self.transcriptionConfidenceLabel = transcriptionConfidenceLabel
        self.urgent = urgent
        self.urgentReasons = urgentReasons
        self.starred = starred
        self.createdAt = createdAt
        self.editedAt = editedAt
        self.deletedAt = deletedAt
    }

    enum CodingKeys: String, CodingKey {
        case id
        case conversationID = "conversation_id"
        case senderID = "sender_id"
        case senderName = "sender_name"
        case clientMessageID = "client_message_id"
        case sendMode = "send_mode"
        case content
        case audioURL = "audio_url"
        case audioDuration = "audio_duration"
        case transcript
        case transcriptionConfidence = "transcription_confidence"
        case transcriptionConfidenceLabel = "transcription_confidence_label"
        case urgent
        case urgentReasons = "urgent_reasons"
        case starred
        case createdAt = "created_at"
        case editedAt = "edited_at"
        case deletedAt = "deleted_at"
    }
}

/// A page of messages, newest first; pass `next_cursor` as `before` for older ones.
public struct MessagesPage: Codable, Sendable, Equatable {
    public var messages: [MessageDTO]
    /// `null` when there are no older messages.
    public var nextCursor: String?

    public init(messages: [MessageDTO], nextCursor: String?) {
        self.messages = messages
        self.nextCursor = nextCursor
    }

    enum CodingKeys: String, CodingKey {
        case messages
        case nextCursor = "next_cursor"
    }
}

/// `POST /conversations/{id}/read` body: everything up to and including the message is read (default: all).
public struct MarkReadRequest: Codable, Sendable, Equatable {
    public var upToMessageID: String?

    public init(upToMessageID: String? = nil) {
        self.upToMessageID = upToMessageID
    }

    enum CodingKeys: String, CodingKey {
        case upToMessageID = "up_to_message_id"
    }
}

/// `GET /messages/search` answer: matches in the caller's conversations, newest first.
public struct MessageSearchResponse: Codable, Sendable, Equatable {
    public var messages: [MessageDTO]

    public init(messages: [MessageDTO]) {
        self.messages = messages
    }

    enum CodingKeys: String, CodingKey {
        case messages
    }
}

/// An audio container the server accepts for recordings (`POST /audio`'s `format`). Open: a value this version does
/// not know decodes as itself (``isKnown`` is then `false`).
public struct RecordingFormat: OpenEnum, CaseIterable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// AAC in an MPEG-4 container, served as `audio/mp4`.
    public static let m4a: RecordingFormat = "m4a"
    /// MP3, served as `audio/mpeg`.
    public static let mp3: RecordingFormat = "mp3"
    /// PCM WAV, served as `audio/wav`.
    public static let wav: RecordingFormat = "wav"

    /// The known formats.
    public static let allCases: [RecordingFormat] = [.m4a, .mp3, .wav]
}

/// `POST /audio` answer: the stored recording.
public struct AudioUploadResponse: Codable, Sendable, Equatable {
    public var audioID: String
    public var format: RecordingFormat
    public var contentType: String
    public var sizeBytes: Int
    /// Read from the container, not trusted from the client.
    public var durationSeconds: Double
    /// When the recording is deleted unless the message is starred.
    public var expiresAt: Date?

    public init(audioID: String, format: RecordingFormat, contentType: String, sizeBytes: Int, durationSeconds: Double, expiresAt: Date?) {
        self.audioID = audioID
        self.format = format
        self.contentType = contentType
        self.sizeBytes = sizeBytes
        self.durationSeconds = durationSeconds
        self.expiresAt = expiresAt
    }

    enum CodingKeys: String, CodingKey {
        case audioID = "audio_id"
        case format
        case contentType = "content_type"
        case sizeBytes = "size_bytes"
        case durationSeconds = "duration_seconds"
        case expiresAt = "expires_at"
    }
}

/// `POST /transcriptions` body.
public struct TranscriptionRequestDTO: Codable, Sendable, Equatable {
    public var audioID: String
    /// ISO-639-1 hint, e.g. `en`.
    public var language: String?

    public init(audioID: String, language: String? = nil) {
        self.audioID = audioID
        self.language = language
    }

    enum CodingKeys: String, CodingKey {
        case audioID = "audio_id"
        case language
    }
}

/// `POST /transcriptions` answer. An empty transcript with `poor` confidence means no speech was heard.
public struct TranscriptionResponse: Codable, Sendable, Equatable {
    public var transcript: String
    /// 0–1: the model's certainty, or for `gpt-transcribe` Chorus's judgement of the transcript (docs/voice-messages.md);
    /// `null` when the configured model reports neither certainty nor languages.
    public var confidence: Double?
    /// `good`, `fair`, `poor`, or `null` with `confidence`.
    public var confidenceLabel: ConfidenceLabel?
    public var language: String?
    public var durationSeconds: Double

    public init(transcript: String, confidence: Double?, confidenceLabel: ConfidenceLabel?, language: String?, durationSeconds: Double) {
        self.transcript = transcript
        self.confidence = confidence
        self.confidenceLabel = confidenceLabel
        self.language = language
        self.durationSeconds = durationSeconds
    }

    enum CodingKeys: String, CodingKey {
        case transcript
        case confidence
        case confidenceLabel = "confidence_label"
        case language
        case durationSeconds = "duration_seconds"
    }
}

/// One event of the realtime WebSocket (`GET /ws`): `{"type": ..., "conversation_id": ..., ...}`.
///
/// Types: `message.created`, `message.updated`, `message.deleted`, `transcript.ready` (carry `message`),
/// `summary.ready` and `digest.ready` (carry `summary_id`, readable at `GET /conversations/{id}/summaries/{summary_id}`), `typing` and `presence` (carry `user_id`; presence also `online`),
/// `conversation.updated`, `invitation.created` (an invitation for the user, see `GET /invitations`; carries
/// `conversation_id`), `pong`, `error` (carries `detail`).
public struct RealtimeEventDTO: Codable, Sendable, Equatable {
    public var type: String
    public var conversationID: String?
    public var message: MessageDTO?
    public var userID: String?
    public var online: Bool?
    public var summaryID: String?
    public var detail: String?
    /// `story.progress` events: what changed in one of the user's stories.
    public var story: StoryProgressDTO?
    /// `call.progress` events: what changed in one of the user's calls.
    public var call: CallProgressDTO?
    /// `playback.progress` events: a playback of the user's as its clips are made.
    public var playback: PlaybackResponse?

    public init(
        type: String, conversationID: String? = nil, message: MessageDTO? = nil, userID: String? = nil, online: Bool? = nil,
        summaryID: String? = nil, detail: String? = nil, story: StoryProgressDTO? = nil, call: CallProgressDTO? = nil,
        playback: PlaybackResponse? = nil
    ) {
        self.playback = playback
        self.story = story
        self.call = call
        self.type = type
        self.conversationID = conversationID
        self.message = message
        self.userID = userID
        self.online = online
        self.summaryID = summaryID
        self.detail = detail
    }

    enum CodingKeys: String, CodingKey {
        case type
        case conversationID = "conversation_id"
        case message
        case userID = "user_id"
        case online
        case summaryID = "summary_id"
        case detail
        case story
        case call
        case playback
    }
}

/// What a client sends on the realtime WebSocket: `{"type": "typing", "conversation_id": ...}` or `{"type": "ping"}`.
public struct RealtimeClientEventDTO: Codable, Sendable, Equatable {
    public var type: String
    public var conversationID: String?

    public init(type: String, conversationID: String? = nil) {
        self.type = type
        self.conversationID = conversationID
    }

    enum CodingKeys: String, CodingKey {
        case type
        case conversationID = "conversation_id"
    }
}

/// `GET /me/profile` answer and `PUT /me/profile` body (every member optional when updating): what voice messages
/// need to know about the account.
public struct MessagingProfileDTO: Codable, Sendable, Hashable {
    /// The name other members see (default: the part of the email before `@`), 1–60 characters.
    public var displayName: String?
    /// Needed for voice cloning (18+) and to store any voice data (13+).
    public var birthYear: Int?
    /// Days recordings are kept (1–365, default 30); starred messages are kept.
    public var retentionDays: Int?
    /// `false` opts out of every voice feature: no recordings, transcripts, cloning or generated speech.
    public var voiceFeaturesEnabled: Bool?
    /// The default voice (`GET /voices/defaults`) used when no cloned voice exists.
    public var defaultVoice: String?

    public init(
        displayName: String? = nil, birthYear: Int? = nil, retentionDays: Int? = nil, voiceFeaturesEnabled: Bool? = nil,
        defaultVoice: String? = nil
    ) {
        self.displayName = displayName
        self.birthYear = birthYear
        self.retentionDays = retentionDays
        self.voiceFeaturesEnabled = voiceFeaturesEnabled
        self.defaultVoice = defaultVoice
    }

    enum CodingKeys: String, CodingKey {
        case displayName = "display_name"
        case birthYear = "birth_year"
        case retentionDays = "retention_days"
        case voiceFeaturesEnabled = "voice_features_enabled"
        case defaultVoice = "default_voice"
    }
}

/// `POST /voice-profile` body: clone the caller's voice from a recording uploaded with `POST /audio` (30 s – 3 min;
/// upload with `long_form=true` beyond 2 minutes).
public struct CreateVoiceProfileRequest: Codable, Sendable, Equatable {
    public var audioID: String
    /// The script the user read (shown by the app; Appendix A of the PRD by default).
    public var script: String
    /// The user confirms the recording is their own voice and agrees to its use for their messages.
    public var consent: Bool

    public init(audioID: String, script: String, consent: Bool) {
        self.audioID = audioID
        self.script = script
        self.consent = consent
    }

    enum CodingKeys: String, CodingKey {
        case audioID = "audio_id"
        case script
        case consent
    }
}

/// `GET /voice-profile` (and `POST`, `POST /voice-profile/confirm`) answer.
public struct VoiceProfileResponse: Codable, Sendable, Equatable {
    /// `ready` (messages can be played in the cloned voice), `pending_confirmation` (cloned: listen to the preview,
    /// then confirm or re-record), `requires_verification` (ElevenLabs holds the voice for verification: unusable) or
    /// `none` (the default voice is used).
    public var status: VoiceProfileStatus
    public var createdAt: Date?
    public var consentedAt: Date?
    /// The consent statement the user agreed to.
    public var consentStatement: String?
    public var script: String?
    /// A short sample of the cloned voice (signed URL); absent while verification is required.
    public var previewURL: String?
    /// The voice used when there is no cloned voice.
    public var defaultVoice: String
    /// When the owner confirmed the voice (`ready` only).
    public var confirmedAt: Date?
    /// When an unconfirmed voice will be deleted (`pending_confirmation`, `requires_verification`).
    public var expiresAt: Date?
    /// What to do next, for a state other than `ready` and `none`.
    public var message: String?

    public init(
        status: VoiceProfileStatus, createdAt: Date?, consentedAt: Date?, consentStatement: String?, script: String?, previewURL: String?,
        defaultVoice: String, confirmedAt: Date? = nil, expiresAt: Date? = nil, message: String? = nil
    ) {
        self.status = status
        self.createdAt = createdAt
        self.consentedAt = consentedAt
        self.consentStatement = consentStatement
        self.script = script
        self.previewURL = previewURL
        self.defaultVoice = defaultVoice
        self.confirmedAt = confirmedAt
        self.expiresAt = expiresAt
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case status
        case createdAt = "created_at"
        case consentedAt = "consented_at"
        case consentStatement = "consent_statement"
        case script
        case previewURL = "preview_url"
        case defaultVoice = "default_voice"
        case confirmedAt = "confirmed_at"
        case expiresAt = "expires_at"
        case message
    }
}

/// `POST /messages/{id}/speech` answer: the message spoken in its sender's voice.
public struct SpeechResponse: Codable, Sendable, Equatable {
    /// A short-lived signed URL of the audio (supports `Range`).
    public var audioURL: String
    public var contentType: String
    /// `cloned` (the sender's own voice) or `default` (their chosen default voice).
    public var voice: SpeechVoiceKind
    /// Served from the cache (no new generation).
    public var cached: Bool

    public init(audioURL: String, contentType: String, voice: SpeechVoiceKind, cached: Bool) {
        self.audioURL = audioURL
        self.contentType = contentType
        self.voice = voice
        self.cached = cached
    }

    enum CodingKeys: String, CodingKey {
        case audioURL = "audio_url"
        case contentType = "content_type"
        case voice
        case cached
    }
}

/// `POST /conversations/{id}/summary` body: summarise the messages since a time, or the last N (20–200; default 50).
public struct SummaryRequest: Codable, Sendable, Equatable {
    public var since: Date?
    public var last: Int?

    public init(since: Date? = nil, last: Int? = nil) {
        self.since = since
        self.last = last
    }

    enum CodingKeys: String, CodingKey {
        case since
        case last
    }
}

/// One action item of a summary: who does what, by when.
public struct SummaryActionItemDTO: Codable, Sendable, Hashable {
    public var owner: String
    public var task: String
    public var due: String?

    public init(owner: String, task: String, due: String?) {
        self.owner = owner
        self.task = task
        self.due = due
    }

    enum CodingKeys: String, CodingKey {
        case owner
        case task
        case due
    }
}

/// One date a summary mentions.
public struct SummaryDateDTO: Codable, Sendable, Hashable {
    public var date: String
    public var what: String

    public init(date: String, what: String) {
        self.date = date
        self.what = what
    }

    enum CodingKeys: String, CodingKey {
        case date
        case what
    }
}

/// A narrated summary of a conversation (PRD Phase 3, option B).
public struct SummaryResponse: Codable, Sendable, Equatable {
    public var summaryID: String
    public var conversationID: String
    /// How many messages it covers.
    public var messageCount: Int
    public var overview: String
    public var decisions: [String]
    public var actionItems: [SummaryActionItemDTO]
    public var dates: [SummaryDateDTO]
    public var urgentItems: [String]
    /// The text read aloud (≤ 300 words, written for listening).
    public var narration: String
    /// The narration spoken by the narrator voice (signed URL), when speech could be generated.
    public var audioURL: String?
    public var generatedAt: Date
    /// Served from the cache (no new messages since, and less than 7 days old).
    public var cached: Bool

    public init(
        summaryID: String, conversationID: String, messageCount: Int, overview: String, decisions: [String],
        actionItems: [SummaryActionItemDTO], dates: [SummaryDateDTO], urgentItems: [String], narration: String, audioURL: String?,
        generatedAt: Date, cached: Bool
    ) {
        self.summaryID = summaryID
        self.conversationID = conversationID
        self.messageCount = messageCount
        self.overview = overview
        self.decisions = decisions
        self.actionItems = actionItems
        self.dates = dates
        self.urgentItems = urgentItems
        self.narration = narration
        self.audioURL = audioURL
        self.generatedAt = generatedAt
        self.cached = cached
    }

    enum CodingKeys: String, CodingKey {
        case summaryID = "summary_id"
        case conversationID = "conversation_id"
        case messageCount = "message_count"
        case overview
        case decisions
        case actionItems = "action_items"
        case dates
        case urgentItems = "urgent_items"
        case narration
        case audioURL = "audio_url"
        case generatedAt = "generated_at"
        case cached
    }
}

/// `POST /conversations/{id}/playback` body: the last N messages (1–30, default 10) in their senders' voices.
public struct PlaybackRequest: Codable, Sendable, Equatable {
    public var last: Int?
    /// `true`: answer at once with the clips pending and fill them in while the app plays the first ones
    /// (`playback.progress` events, `GET /conversations/{id}/playbacks/{playback_id}`); absent or `false`: answer when
    /// every clip is made.
    public var stream: Bool?

    public init(last: Int? = nil, stream: Bool? = nil) {
        self.last = last
        self.stream = stream
    }

    enum CodingKeys: String, CodingKey {
        case last
        case stream
    }
}

/// One message's clip in a playback, in playing order: `pending` while it is made, then `ready` (with its audio and
/// length) or `failed` (with why).
public struct PlaybackClipDTO: Codable, Sendable, Equatable {
    /// 1 for the oldest message played.
    public var position: Int
    public var messageID: String
    public var sender: String
    /// `pending`, `ready` or `failed`.
    public var state: String
    public var durationMs: Int?
    /// The clip alone (16-bit PCM WAV), a short-lived signed URL, when ready.
    public var audioURL: String?
    /// Ready from the speech cache (nothing generated for this playback).
    public var cached: Bool?
    /// Why the clip could not be made, when failed.
    public var error: String?

    public init(
        position: Int, messageID: String, sender: String, state: String, durationMs: Int? = nil, audioURL: String? = nil,
        cached: Bool? = nil, error: String? = nil
    ) {
        self.position = position
        self.messageID = messageID
        self.sender = sender
        self.state = state
        self.durationMs = durationMs
        self.audioURL = audioURL
        self.cached = cached
        self.error = error
    }

    enum CodingKeys: String, CodingKey {
        case position
        case messageID = "message_id"
        case sender
        case state
        case durationMs = "duration_ms"
        case audioURL = "audio_url"
        case cached
        case error
    }
}

/// What a playback that could not be produced offers instead: the conversation's summary.
public struct PlaybackFallbackDTO: Codable, Sendable, Equatable {
    public var message: String
    /// `POST` here for the summary (`/conversations/{id}/summary`).
    public var summaryPath: String

    public init(message: String, summaryPath: String) {
        self.message = message
        self.summaryPath = summaryPath
    }

    enum CodingKeys: String, CodingKey {
        case message
        case summaryPath = "summary_path"
    }
}

/// One speaker turn of a multi-voice playback.
public struct PlaybackEntryDTO: Codable, Sendable, Equatable {
    public var messageID: String
    public var sender: String
    public var startMs: Int
    public var endMs: Int

    public init(messageID: String, sender: String, startMs: Int, endMs: Int) {
        self.messageID = messageID
        self.sender = sender
        self.startMs = startMs
        self.endMs = endMs
    }

    enum CodingKeys: String, CodingKey {
        case messageID = "message_id"
        case sender
        case startMs = "start_ms"
        case endMs = "end_ms"
    }
}

/// `POST /conversations/{id}/playback` and `GET /conversations/{id}/playbacks/{playback_id}` answer, and the
/// `playback` of `playback.progress` events: the clips in playing order as they are made and, once every clip is made
/// (`status` `ready` or `partial`), one WAV file of the ready clips with each participant in their own voice, 300 ms
/// between speakers, and the speaker timeline; `failed` (no clip could be made) offers the summary instead.
public struct PlaybackResponse: Codable, Sendable, Equatable {
    public var playbackID: String
    public var conversationID: String
    /// `generating`, `ready` (every clip), `partial` (some clips failed; the file has the others) or `failed`.
    public var status: String
    /// The joined WAV file, once `ready` or `partial`.
    public var audioURL: String?
    public var durationMs: Int?
    /// Who speaks when in the joined file (ready clips only); empty until then.
    public var timeline: [PlaybackEntryDTO]
    public var clips: [PlaybackClipDTO]
    /// When `failed`: the summary to listen to instead.
    public var fallback: PlaybackFallbackDTO?

    public init(
        playbackID: String, conversationID: String, status: String, audioURL: String? = nil, durationMs: Int? = nil,
        timeline: [PlaybackEntryDTO] = [], clips: [PlaybackClipDTO] = [], fallback: PlaybackFallbackDTO? = nil
    ) {
        self.playbackID = playbackID
        self.conversationID = conversationID
        self.status = status
        self.audioURL = audioURL
        self.durationMs = durationMs
        self.timeline = timeline
        self.clips = clips
        self.fallback = fallback
    }

    enum CodingKeys: String, CodingKey {
        case playbackID = "playback_id"
        case conversationID = "conversation_id"
        case status
        case audioURL = "audio_url"
        case durationMs = "duration_ms"
        case timeline
        case clips
        case fallback
    }
}

/// `PUT /conversations/{id}/digest` body and answer: the member's daily digest of the conversation (US-10), a narrated
/// summary of the day's messages delivered in the morning (07:00) or evening (19:00) of their time zone.
public struct DigestSubscriptionDTO: Codable, Sendable, Equatable {
    /// `morning`, `evening` or `off`.
    public var schedule: DigestSchedule
    /// An IANA time zone such as `America/New_York` (default `UTC`).
    public var timeZone: String?
    /// When the next digest is due (absent when off).
    public var nextDigestAt: Date?

    public init(schedule: DigestSchedule, timeZone: String? = nil, nextDigestAt: Date? = nil) {
        self.schedule = schedule
        self.timeZone = timeZone
        self.nextDigestAt = nextDigestAt
    }

    enum CodingKeys: String, CodingKey {
        case schedule
        case timeZone = "time_zone"
        case nextDigestAt = "next_digest_at"
    }
}
