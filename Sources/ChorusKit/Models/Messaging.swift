import ChorusAPI
import Foundation

/// A conversation as the signed-in member sees it (`GET /conversations`), from ``ConversationsClient``: the wire
/// format itself. Its ``ConversationDTO/kind`` is direct or group; ``ConversationDTO/members`` include the signed-in
/// user; ``ConversationDTO/unreadCount`` and ``ConversationDTO/unheardVoiceCount`` count what others sent that the user
/// has not read (see ``ConversationsClient/markRead(_:upTo:)``) or played (see ``MessagesClient/markHeard(_:)``).
public typealias Conversation = ConversationDTO

/// A member of a ``Conversation``: their account id (``AuthClient/accountID`` of that user, lowercased), the name to
/// show, their role (owner or member) and when they joined.
public typealias ConversationMember = ConversationMemberDTO

/// An invitation to a conversation waiting for the signed-in user's answer, from ``ConversationsClient/invitations()``:
/// answer it with ``ConversationsClient/accept(_:)``, ``ConversationsClient/decline(_:)`` or
/// ``ConversationsClient/blockInviter(of:)``. The inviter's display name is chosen by them: show their email too.
///
/// Until the user accepts it they are not a member: they receive none of the conversation's messages and nobody there
/// sees their presence or typing.
public typealias ConversationInvitation = InvitationDTO

extension ConversationDTO {
    /// Direct or group.
    public typealias Kind = ConversationKind
}

extension ConversationMemberDTO {
    /// Owner or member.
    public typealias Role = ConversationRole
}

/// A message of a conversation: text, a voice message, or both, from ``MessagesClient``.
public struct Message: Sendable, Hashable, Identifiable {
    /// What the recipients get: text, audio, or both.
    public typealias SendMode = MessageSendMode
    /// How sure the speech model was of a transcript, in words fit for the UI: good, fair or poor.
    public typealias ConfidenceLabel = ChorusAPI.ConfidenceLabel
    /// Why a message is urgent: medical, schedule, safety, or flagged by the sender.
    public typealias UrgentReason = ChorusAPI.UrgentReason

    /// The message's id.
    public var id: String
    /// The conversation it belongs to.
    public var conversationID: String
    /// The sender's account id.
    public var senderID: String
    /// The sender's display name.
    public var senderName: String
    /// The id the sending app gave it (sending again with the same id returns this message instead of a copy).
    public var clientMessageID: String?
    /// Text, audio, or both.
    public var sendMode: SendMode
    /// The text, or the transcript of a voice message as its sender reviewed it (``SendMode-swift.enum/both``);
    /// `nil` for audio-only messages and once deleted.
    public var content: String?
    /// A short-lived signed URL of the recording: play or download it without the access token (it supports
    /// `Range`, so players can seek). Fetch the message again for a fresh one once it has expired (403), or play it
    /// through ``AudioCache/playableURL(for:)``, which keeps a copy on disk.
    public var audioURL: URL?
    /// The recording's length.
    public var audioDuration: TimeInterval?
    /// The machine transcript of the recording; `nil` until the server has transcribed it (a
    /// ``MessagingEvent/transcriptReady(_:)`` event announces it).
    public var transcript: String?
    /// How sure the speech model was of ``transcript``, 0–1, when the model reports it.
    public var transcriptionConfidence: Double?
    /// The same in words: good, fair or poor.
    public var confidenceLabel: ConfidenceLabel?
    /// Whether the message is urgent (flagged by the sender, or found urgent by the server).
    public var isUrgent: Bool
    /// Why it is urgent; empty when it is not.
    public var urgentReasons: [UrgentReason]
    /// Whether the signed-in user starred it (starred recordings are kept past the retention period).
    public var isStarred: Bool
    /// When it was sent.
    public var createdAt: Date
    /// When its sender last edited it.
    public var editedAt: Date?
    /// When its sender deleted it; the message stays in the conversation without content or recording.
    public var deletedAt: Date?

    /// The recording's id (the last path component of ``audioURL``): the key ``AudioCache`` stores it under.
    public var audioID: String? {
        guard let audioURL, audioURL.pathComponents.count >= 2 else { return nil }
        return audioURL.lastPathComponent
    }

    /// Whether the message carries a recording.
    public var hasAudio: Bool { audioURL != nil }

    /// Whether its sender deleted it.
    public var isDeleted: Bool { deletedAt != nil }

    /// Converts the wire format.
    public init(_ dto: MessageDTO) {
        id = dto.id
        conversationID = dto.conversationID
        senderID = dto.senderID
        senderName = dto.senderName
        clientMessageID = dto.clientMessageID
        sendMode = dto.sendMode
        content = dto.content
        audioURL = dto.audioURL.flatMap(URL.init(string:))
        audioDuration = dto.audioDuration
        transcript = dto.transcript
        transcriptionConfidence = dto.transcriptionConfidence
        confidenceLabel = dto.transcriptionConfidenceLabel
        isUrgent = dto.urgent
        urgentReasons = dto.urgentReasons
        isStarred = dto.starred
        createdAt = dto.createdAt
        editedAt = dto.editedAt
        deletedAt = dto.deletedAt
    }
}

/// One page of a conversation's messages, newest first, from ``MessagesClient/page(conversation:before:limit:)``.
public struct MessagesPage: Sendable, Hashable {
    /// The messages, newest first.
    public var messages: [Message]
    /// Pass it as `before` for the next (older) page; `nil` on the last page.
    public var nextCursor: String?

    /// Whether older messages exist.
    public var hasMore: Bool { nextCursor != nil }

    /// Converts the wire format.
    public init(_ dto: ChorusAPI.MessagesPage) {
        messages = dto.messages.map(Message.init)
        nextCursor = dto.nextCursor
    }
}

/// The SDK's side of ChorusAPI's open `RecordingFormat`: the format of a file and what an upload is sent as.
extension RecordingFormat {
    /// The format of a file, from its extension (`m4a`, `mp4`, `aac`, `mp3`, `wav`, `wave`); `nil` for others.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "m4a", "mp4", "aac": self = .m4a
        case "mp3": self = .mp3
        case "wav", "wave": self = .wav
        default: return nil
        }
    }

    /// The media type an upload is sent with: `audio/mp4` for `m4a` (what `AVAudioRecorder` writes with
    /// `kAudioFormatMPEG4AAC`), `audio/mpeg`, `audio/wav`, or `audio/<value>` for a format this SDK version does not know.
    public var mimeType: String {
        switch self {
        case .m4a: "audio/mp4"
        case .mp3: "audio/mpeg"
        case .wav: "audio/wav"
        default: "audio/\(rawValue)"
        }
    }

    /// The usual file extension.
    public var fileExtension: String { rawValue }
}

/// A recording stored by the server (`POST /audio`), from ``VoiceClient/upload(file:format:longForm:)``: attach it to
/// a message with ``MessagesClient/sendVoice(audioID:transcript:mode:to:urgent:clientMessageID:)``.
public struct Recording: Sendable, Hashable, Identifiable {
    /// The recording's id: pass it to ``VoiceClient/transcribe(audioID:language:)`` and to
    /// ``MessagesClient/sendVoice(audioID:transcript:mode:to:urgent:clientMessageID:)``.
    public var audioID: String
    /// The container, as the server read it from the bytes.
    public var format: RecordingFormat
    /// The media type it is served with.
    public var contentType: String
    /// Its size in bytes.
    public var size: Int
    /// Its length, read from the container by the server.
    public var duration: TimeInterval
    /// When the server deletes it, unless a message holding it is starred (see ``MessagingProfile/retentionDays``).
    public var expiresAt: Date?

    /// The recording's id, ``audioID``.
    public var id: String { audioID }

    /// Converts the wire format.
    public init(_ dto: AudioUploadResponse) {
        audioID = dto.audioID
        format = dto.format
        contentType = dto.contentType
        size = dto.sizeBytes
        duration = dto.durationSeconds
        expiresAt = dto.expiresAt
    }
}

/// The transcript of a recording (`POST /transcriptions`), from ``VoiceClient/transcribe(audioID:language:)``: show
/// it for review before sending.
public struct Transcript: Sendable, Hashable {
    /// What was said; empty when no speech was heard.
    public var text: String
    /// How far the transcript can be trusted, 0–1: the speech model's certainty, or the server's judgement when the
    /// model reports none (`gpt-transcribe`); `nil` when neither is available.
    public var confidence: Double?
    /// The same in words: good, fair or poor (`nil` with ``confidence``).
    public var confidenceLabel: Message.ConfidenceLabel?
    /// The language spoken (ISO-639-1), when known.
    public var language: String?
    /// The recording's length.
    public var duration: TimeInterval

    /// Whether speech was heard: `false` for silence or noise, where sending audio only is the better choice.
    public var heardSpeech: Bool { !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }

    /// Converts the wire format.
    public init(_ dto: TranscriptionResponse) {
        text = dto.transcript
        confidence = dto.confidence
        confidenceLabel = dto.confidenceLabel
        language = dto.language
        duration = dto.durationSeconds
    }
}

/// What voice messages need to know about the account (`GET /me/profile`), from ``VoiceClient/profile()``: the wire
/// format itself, every member optional (the display name other members see, the birth year — voice data is stored
/// only for users of 13 and older, voice cloning needs 18 —, how many days recordings are kept, whether voice features
/// are on, the default voice for generated speech).
public typealias MessagingProfile = MessagingProfileDTO

/// Something that happened in the user's conversations or calls, pushed over the realtime connection (`GET /ws`),
/// from ``VoiceClient/events()`` or ``MessagingConnection/events``.
public enum MessagingEvent: Sendable, Hashable {
    /// A message was sent to one of the user's conversations (the user's own included).
    case messageCreated(Message)
    /// A message was edited.
    case messageUpdated(Message)
    /// A message was deleted by its sender; the message carries no content or recording any more.
    case messageDeleted(Message)
    /// The server finished transcribing a voice message: ``Message/transcript`` is filled in.
    case transcriptReady(Message)
    /// A narrated summary of a conversation is ready.
    case summaryReady(conversationID: String, summaryID: String)
    /// The user's daily digest of a conversation is ready: read it with ``ConversationsClient/storedSummary(id:in:)``.
    case digestReady(conversationID: String, summaryID: String)
    /// A member is typing in a conversation.
    case typing(conversationID: String, userID: String)
    /// A member of one of the user's conversations came online or went offline.
    case presence(userID: String, online: Bool)
    /// A conversation changed (created, a member joined, left or was removed): fetch it again with
    /// ``ConversationsClient/conversation(id:)`` — unless the user was removed, then it answers 404.
    case conversationUpdated(conversationID: String)
    /// Someone invited the user to a conversation (`invitation.created`): answer it with
    /// ``ConversationsClient/invitations()`` and ``ConversationsClient/accept(_:)``.
    case invitationReceived(conversationID: String)
    /// One of the user's calls changed: its status, ended reason or duration (`call.progress`). When the call is
    /// over, ``CallsClient/call(sid:)`` has its saved transcript and latency figures.
    case callUpdated(Call)
    /// A line of one of the user's calls was just spoken (`call.progress`), while the call goes on: show the
    /// conversation live. Lines can arrive out of order; sort by ``CallDetail/TranscriptLine/offset``.
    case callTranscript(callSID: String, line: CallDetail.TranscriptLine)
    /// A playback started with ``ConversationsClient/playbackUpdates(of:last:)`` changed: a clip became ready or
    /// failed, or every clip is made (`playback.progress`).
    case playbackUpdated(ConversationPlayback)
    /// The server refused something this connection sent, e.g. typing in a conversation the user is not a member
    /// of; `detail` says what.
    case error(detail: String)
    /// An event this version of the SDK does not know (its `type`), or a known one missing what it needs.
    case unknown(String)

    /// Converts the wire format; `nil` for the keep-alive answer (`pong`), which is not an event.
    public init?(_ dto: RealtimeEventDTO) {
        switch (dto.type, dto.message, dto.conversationID, dto.userID) {
        case ("pong", _, _, _): return nil
        case ("message.created", let message?, _, _): self = .messageCreated(Message(message))
        case ("message.updated", let message?, _, _): self = .messageUpdated(Message(message))
        case ("message.deleted", let message?, _, _): self = .messageDeleted(Message(message))
        case ("transcript.ready", let message?, _, _): self = .transcriptReady(Message(message))
        case ("summary.ready", _, let conversationID?, _), ("digest.ready", _, let conversationID?, _):
            guard let summaryID = dto.summaryID else {
                self = .unknown(dto.type)
                return
            }
            self =
                dto.type == "summary.ready"
                ? .summaryReady(conversationID: conversationID, summaryID: summaryID)
                : .digestReady(conversationID: conversationID, summaryID: summaryID)
        case ("typing", _, let conversationID?, let userID?): self = .typing(conversationID: conversationID, userID: userID)
        case ("presence", _, _, let userID?): self = .presence(userID: userID, online: dto.online ?? false)
        case ("conversation.updated", _, let conversationID?, _): self = .conversationUpdated(conversationID: conversationID)
        case ("invitation.created", _, let conversationID?, _): self = .invitationReceived(conversationID: conversationID)
        case ("call.progress", _, _, _):
            switch (dto.call?.call, dto.call?.line, dto.call?.detail?.call) {
            case (let call?, _, _), (_, _, let call?): self = .callUpdated(Call(call))
            case (nil, let line?, nil): self = .callTranscript(callSID: dto.call?.callSid ?? "", line: CallDetail.TranscriptLine(line))
            default: self = .unknown(dto.type)
            }
        case ("playback.progress", _, _, _):
            guard let playback = dto.playback.flatMap({ try? ConversationPlayback($0) }) else {
                self = .unknown(dto.type)
                return
            }
            self = .playbackUpdated(playback)
        case ("error", _, _, _): self = .error(detail: dto.detail ?? "")
        default: self = .unknown(dto.type)
        }
    }
}

// MARK: - Voice profile and speech

/// The user's cloned voice (`GET /voice-profile`), from ``VoiceClient/voiceProfile()``: whether their messages are
/// spoken in their own voice, and the voice used otherwise.
public struct VoiceProfile: Sendable, Hashable {
    /// Where the cloned voice stands: `ready`, `pending_confirmation` (hear ``previewURL``, then
    /// ``VoiceClient/confirmVoiceProfile()`` or re-record), `requires_verification` (unusable: re-record) or `none`.
    public typealias Status = VoiceProfileStatus

    /// Where the cloned voice stands.
    public var status: Status
    /// When the voice was cloned.
    public var createdAt: Date?
    /// When the user gave their consent.
    public var consentedAt: Date?
    /// The consent statement the user agreed to, to show on the voice settings screen.
    public var consentStatement: String?
    /// The script the user read for the sample.
    public var script: String?
    /// A short sample of the cloned voice (a short-lived signed URL); `nil` without a cloned voice, or when the
    /// preview could not be generated.
    public var previewURL: URL?
    /// The voice used for the user's messages when there is no cloned voice (see ``VoiceClient/defaultVoices()``).
    public var defaultVoice: String
    /// When the user confirmed the voice (`ready` only).
    public var confirmedAt: Date?
    /// When the server deletes a voice that was never confirmed.
    public var expiresAt: Date?
    /// What to tell the user about a voice that is not ready yet.
    public var message: String?

    /// Whether the user's messages are spoken in their cloned voice.
    public var hasClonedVoice: Bool { status == .ready }
    /// Whether the voice waits for the user to hear ``previewURL`` and confirm it.
    public var needsConfirmation: Bool { status == .pendingConfirmation }

    /// Converts the wire format.
    public init(_ dto: VoiceProfileResponse) {
        status = dto.status
        createdAt = dto.createdAt
        consentedAt = dto.consentedAt
        consentStatement = dto.consentStatement
        script = dto.script
        previewURL = dto.previewURL.flatMap(URL.init(string:))
        defaultVoice = dto.defaultVoice
        confirmedAt = dto.confirmedAt
        expiresAt = dto.expiresAt
        message = dto.message
    }
}

/// A message spoken in its sender's voice (`POST /messages/{id}/speech`), from ``MessagesClient/speech(for:)``.
public struct Speech: Sendable, Hashable {
    /// Whose voice speaks: the sender's cloned voice or their default voice.
    public typealias VoiceKind = SpeechVoiceKind

    /// A short-lived signed URL of the audio: play it without the access token (it supports `Range`). Ask for the
    /// speech again for a fresh URL once it has expired (403); that does not generate it again.
    public var audioURL: URL
    /// The audio's media type, e.g. `audio/mpeg`.
    public var contentType: String
    /// The sender's cloned voice or their default voice.
    public var voice: VoiceKind
    /// Whether the audio was already generated (no new generation counted against the daily limit).
    public var isCached: Bool

    /// Converts the wire format.
    ///
    /// - Throws: ``ChorusError/decoding(_:)`` when `audio_url` is not a URL.
    public init(_ dto: SpeechResponse) throws {
        guard let url = URL(string: dto.audioURL) else { throw ChorusError.decoding("speech: audio_url is not a URL: \(dto.audioURL)") }
        audioURL = url
        contentType = dto.contentType
        voice = dto.voice
        isCached = dto.cached
    }
}

// MARK: - Conversation audio

/// A structured, narrated summary of a conversation's messages, from ``ConversationsClient/summary(of:last:)``,
/// ``ConversationsClient/summary(of:since:)`` and ``ConversationsClient/storedSummary(id:in:)`` (daily digests too).
public struct ConversationSummary: Sendable, Hashable, Identifiable {
    /// Something someone has to do: who, what, and by when if the messages say it (e.g. `Friday`).
    public typealias ActionItem = SummaryActionItemDTO
    /// A date the messages mention (e.g. `2026-03-14` or `next Tuesday`) and what happens then.
    public typealias MentionedDate = SummaryDateDTO

    /// The summary's id, as ``MessagingEvent/summaryReady(conversationID:summaryID:)`` carries it.
    public var id: String
    /// The conversation it summarises.
    public var conversationID: String
    /// How many messages it covers.
    public var messageCount: Int
    /// What the conversation was about, in a few sentences.
    public var overview: String
    /// What was decided.
    public var decisions: [String]
    /// Who has to do what.
    public var actionItems: [ActionItem]
    /// The dates mentioned.
    public var dates: [MentionedDate]
    /// What needs attention soon.
    public var urgentItems: [String]
    /// The text read aloud (at most 300 words, written for listening).
    public var narration: String
    /// The narration spoken by the narrator voice (a short-lived signed URL); `nil` when speech could not be
    /// generated (show ``narration`` instead).
    public var audioURL: URL?
    /// When it was generated.
    public var generatedAt: Date
    /// Whether it was served from storage: no new messages since, and less than 7 days old.
    public var isCached: Bool

    /// Converts the wire format.
    public init(_ dto: SummaryResponse) {
        id = dto.summaryID
        conversationID = dto.conversationID
        messageCount = dto.messageCount
        overview = dto.overview
        decisions = dto.decisions
        actionItems = dto.actionItems
        dates = dto.dates
        urgentItems = dto.urgentItems
        narration = dto.narration
        audioURL = dto.audioURL.flatMap(URL.init(string:))
        generatedAt = dto.generatedAt
        isCached = dto.cached
    }
}

/// The last messages of a conversation read aloud, each in its sender's voice: their clips as they are made, then one
/// WAV file of them, from ``ConversationsClient/playback(of:last:)`` (when every clip is made) or
/// ``ConversationsClient/playbackUpdates(of:last:)`` (as the clips fill in, to start playing the first at once).
public struct ConversationPlayback: Sendable, Hashable {
    /// One message of the playback: who speaks, from when to when.
    public struct Entry: Sendable, Hashable {
        /// The message spoken.
        public var messageID: String
        /// Its sender's display name.
        public var sender: String
        /// When the message starts, in seconds from the start of the file.
        public var start: TimeInterval
        /// When it ends, in seconds from the start of the file.
        public var end: TimeInterval

        /// Converts the wire format (milliseconds).
        public init(_ dto: PlaybackEntryDTO) {
            messageID = dto.messageID
            sender = dto.sender
            start = TimeInterval(dto.startMs) / 1000
            end = TimeInterval(dto.endMs) / 1000
        }
    }

    /// One message's clip, in playing order.
    public struct Clip: Sendable, Hashable {
        /// Being made, ready to play, or failed (``error`` says why).
        public enum State: String, Sendable, Hashable {
            case pending, ready, failed
        }

        /// 1 for the oldest message played.
        public var position: Int
        public var messageID: String
        public var sender: String
        public var state: State
        /// The clip's length in seconds, once ready.
        public var duration: TimeInterval?
        /// The clip alone (WAV, a short-lived signed URL), once ready.
        public var audioURL: URL?
        /// Served from the speech cache (nothing was generated).
        public var isCached: Bool
        public var error: String?

        /// Converts the wire format; an unknown state counts as pending.
        public init(_ dto: PlaybackClipDTO) {
            position = dto.position
            messageID = dto.messageID
            sender = dto.sender
            state = State(rawValue: dto.state) ?? .pending
            duration = dto.durationMs.map { TimeInterval($0) / 1000 }
            audioURL = dto.audioURL.flatMap(URL.init(string:))
            isCached = dto.cached ?? false
            error = dto.error
        }
    }

    /// Where the playback stands.
    public enum Status: String, Sendable, Hashable {
        /// Clips are still being made.
        case generating
        /// Every clip is ready and joined.
        case ready
        /// Some clips failed (see ``Clip/error``); the file has the others.
        case partial
        /// No clip could be made: offer the summary instead (``fallback``).
        case failed
    }

    /// The playback's id (``ConversationsClient/playbackState(id:in:)``).
    public var id: String
    public var conversationID: String
    public var status: Status
    /// A short-lived signed URL of the joined WAV file (it supports `Range`), once ``Status/ready`` or
    /// ``Status/partial``.
    public var audioURL: URL?
    /// The joined file's length, in seconds (0 until it is made).
    public var duration: TimeInterval
    /// The messages in the joined file in the order they play (oldest first), with 300 ms of silence between them.
    public var timeline: [Entry]
    /// Every message's clip in playing order, as they fill in.
    public var clips: [Clip]
    /// When ``Status/failed``: what to tell the user, and that ``ConversationsClient/summary(of:last:)`` is
    /// the alternative.
    public var fallbackMessage: String?

    /// Whether every clip is made (the status is no longer ``Status/generating``).
    public var isFinished: Bool { status != .generating }

    /// The message playing at `time` seconds from the start, to show who is speaking; `nil` in the pauses between
    /// messages.
    public func entry(at time: TimeInterval) -> Entry? {
        timeline.first { $0.start <= time && time < $0.end }
    }

    /// Converts the wire format.
    ///
    /// - Throws: ``ChorusError/decoding(_:)`` when `audio_url` is not a URL or the status is unknown.
    public init(_ dto: PlaybackResponse) throws {
        guard let status = Status(rawValue: dto.status) else { throw ChorusError.decoding("playback: unknown status \(dto.status)") }
        if let raw = dto.audioURL {
            guard let url = URL(string: raw) else { throw ChorusError.decoding("playback: audio_url is not a URL: \(raw)") }
            audioURL = url
        }
        id = dto.playbackID
        conversationID = dto.conversationID
        self.status = status
        duration = TimeInterval(dto.durationMs ?? 0) / 1000
        timeline = dto.timeline.map(Entry.init)
        clips = dto.clips.map(Clip.init)
        fallbackMessage = dto.fallback?.message
    }
}

/// The user's daily digest of one conversation (`GET`/`PUT /conversations/{id}/digest`), from
/// ``ConversationsClient/digest(of:)``. Each digest is a stored summary: read it with
/// ``ConversationsClient/storedSummary(id:in:)``.
public struct DigestSubscription: Sendable, Hashable {
    /// Morning, evening or off.
    public var schedule: DigestSchedule
    /// The IANA time zone the schedule follows, e.g. `Europe/Paris`.
    public var timeZone: String
    /// When the next digest is due; `nil` when off.
    public var nextDigestAt: Date?

    /// Converts the wire format.
    public init(_ dto: DigestSubscriptionDTO) {
        schedule = dto.schedule
        timeZone = dto.timeZone ?? "UTC"
        nextDigestAt = dto.nextDigestAt
    }
}
