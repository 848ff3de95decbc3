import ChorusKit
import Foundation
import Testing

/// The messaging models built from the wire format: unknown values survive, realtime events map to cases.
@Suite("ChorusKit messaging models")
struct MessagingModelTests {
    static func dto(
        sendMode: MessageSendMode = "both", label: ConfidenceLabel? = "fair", reasons: [UrgentReason] = ["medical", "weather"]
    ) -> MessageDTO {
        MessageDTO(
            id: "m1", conversationID: "c1", senderID: "u1", senderName: "Alice", clientMessageID: "k1", sendMode: sendMode,
            content: "Take the pills", audioURL: "http://127.0.0.1:8080/audio/a1b2?expires=1700000000&signature=ab", audioDuration: 3.5,
            transcript: "Take the pills", transcriptionConfidence: 0.7, transcriptionConfidenceLabel: label, urgent: true,
            urgentReasons: reasons, starred: false, createdAt: Date(timeIntervalSince1970: 1_700_000_000), editedAt: nil, deletedAt: nil)
    }

    @Test("a message: modes, labels and reasons, unknown values kept, the recording's id from its signed URL")
    func message() {
        let message = Message(Self.dto())
        #expect(message.sendMode == .both && message.confidenceLabel == .fair)
        #expect(message.urgentReasons == [.medical, "weather"] && message.isUrgent)
        #expect(message.audioID == "a1b2" && message.hasAudio && !message.isDeleted)
        #expect(message.audioDuration == 3.5)

        let future = Message(Self.dto(sendMode: "video", label: "excellent"))
        #expect(future.sendMode == "video" && future.sendMode.rawValue == "video" && !future.sendMode.isKnown)
        #expect(future.confidenceLabel == "excellent" && future.confidenceLabel?.isKnown == false)

        var textOnly = Self.dto(sendMode: "text", label: nil, reasons: [])
        textOnly.audioURL = nil
        #expect(Message(textOnly).audioID == nil && Message(textOnly).confidenceLabel == nil)
    }

    @Test("a page of messages: the SDK's MessagesPage shadows the wire type of the same name")
    func page() {
        let page: MessagesPage = MessagesPage(ChorusAPI.MessagesPage(messages: [Self.dto()], nextCursor: "7"))
        #expect(page.messages.map(\.id) == ["m1"] && page.nextCursor == "7" && page.hasMore)
    }

    @Test("recording formats: media types, file extensions, unknown formats")
    func formats() {
        #expect(RecordingFormat.m4a.mimeType == "audio/mp4" && RecordingFormat.mp3.mimeType == "audio/mpeg")
        #expect(RecordingFormat.wav.mimeType == "audio/wav")
        #expect(RecordingFormat(fileExtension: "M4A") == .m4a && RecordingFormat(fileExtension: "aac") == .m4a)
        #expect(RecordingFormat(fileExtension: "wave") == .wav && RecordingFormat(fileExtension: "ogg") == nil)
        #expect(RecordingFormat(rawValue: "flac") == "flac" && !RecordingFormat(rawValue: "flac").isKnown)
        #expect(RecordingFormat(rawValue: "flac").mimeType == "audio/flac")
    }

    @Test("realtime events: each type to its case; pong is not an event; unknown or incomplete ones are unknown")
    func events() throws {
        let message = Self.dto()
        #expect(
            MessagingEvent(RealtimeEventDTO(type: "message.created", conversationID: "c1", message: message)) == .messageCreated(Message(message)))
        #expect(MessagingEvent(RealtimeEventDTO(type: "transcript.ready", message: message)) == .transcriptReady(Message(message)))
        #expect(MessagingEvent(RealtimeEventDTO(type: "message.deleted", message: message)) == .messageDeleted(Message(message)))
        #expect(
            MessagingEvent(RealtimeEventDTO(type: "summary.ready", conversationID: "c1", summaryID: "s1"))
                == .summaryReady(conversationID: "c1", summaryID: "s1"))
        #expect(
            MessagingEvent(RealtimeEventDTO(type: "digest.ready", conversationID: "c1", summaryID: "s2"))
                == .digestReady(conversationID: "c1", summaryID: "s2"))
        #expect(MessagingEvent(RealtimeEventDTO(type: "digest.ready", conversationID: "c1")) == .unknown("digest.ready"))
        #expect(MessagingEvent(RealtimeEventDTO(type: "typing", conversationID: "c1", userID: "u2")) == .typing(conversationID: "c1", userID: "u2"))
        #expect(MessagingEvent(RealtimeEventDTO(type: "presence", userID: "u2", online: true)) == .presence(userID: "u2", online: true))
        #expect(MessagingEvent(RealtimeEventDTO(type: "conversation.updated", conversationID: "c1")) == .conversationUpdated(conversationID: "c1"))
        #expect(MessagingEvent(RealtimeEventDTO(type: "error", detail: "Conversation not found")) == .error(detail: "Conversation not found"))
        let item = CallHistoryItem(
            id: 7, phoneNumber: "+14155550100", scenario: "default", status: "in-progress", createdAt: Date(timeIntervalSince1970: 0),
            callSid: "CA1", durationSeconds: nil, endedReason: nil, durationLimit: 60)
        #expect(
            MessagingEvent(RealtimeEventDTO(type: "call.progress", call: CallProgressDTO(type: "status", callSid: "CA1", call: item)))
                == .callUpdated(Call(item)))
        let line = CallTranscriptLine(speaker: "callee", text: "Hello?", atMs: 2_140, interrupted: false)
        let spoken = MessagingEvent(RealtimeEventDTO(type: "call.progress", call: CallProgressDTO(type: "transcript", callSid: "CA1", line: line)))
        #expect(spoken == .callTranscript(callSID: "CA1", line: CallDetail.TranscriptLine(line)))
        if case .callTranscript(_, let received) = spoken { #expect(received.speaker == .callee && received.offset == 2.14) }
        #expect(MessagingEvent(RealtimeEventDTO(type: "call.progress")) == .unknown("call.progress"))
        let playback = PlaybackResponse(
            playbackID: "p1", conversationID: "c1", status: "generating",
            clips: [
                PlaybackClipDTO(
                    position: 1, messageID: "m1", sender: "Alice", state: "ready", durationMs: 1_500, audioURL: "https://x.test/a.wav", cached: true),
                PlaybackClipDTO(position: 2, messageID: "m2", sender: "Bob", state: "pending"),
            ])
        let progress = MessagingEvent(RealtimeEventDTO(type: "playback.progress", conversationID: "c1", playback: playback))
        #expect(progress == .playbackUpdated(try ConversationPlayback(playback)))
        if case .playbackUpdated(let received) = progress {
            #expect(received.status == .generating && !received.isFinished && received.audioURL == nil && received.duration == 0)
            #expect(received.clips.map(\.state) == [.ready, .pending] && received.clips[0].duration == 1.5 && received.clips[0].isCached)
        }
        #expect(MessagingEvent(RealtimeEventDTO(type: "playback.progress", conversationID: "c1")) == .unknown("playback.progress"))
        var unknownStatus = playback
        unknownStatus.status = "paused"
        #expect(MessagingEvent(RealtimeEventDTO(type: "playback.progress", playback: unknownStatus)) == .unknown("playback.progress"))
        #expect(MessagingEvent(RealtimeEventDTO(type: "pong")) == nil)
        #expect(MessagingEvent(RealtimeEventDTO(type: "reaction.added", conversationID: "c1")) == .unknown("reaction.added"))
        #expect(MessagingEvent(RealtimeEventDTO(type: "message.created")) == .unknown("message.created"))
        #expect(MessagingEvent(RealtimeEventDTO(type: "summary.ready", conversationID: "c1")) == .unknown("summary.ready"))
    }

    @Test("conversations are the wire format: kinds and roles, unknown values kept")
    func conversation() {
        let joined = Date(timeIntervalSince1970: 1_700_000_000)
        let dto = ConversationDTO(
            id: "c1", kind: "broadcast", title: "News",
            members: [
                ConversationMemberDTO(userID: "u1", displayName: "Alice", role: "owner", joinedAt: joined),
                ConversationMemberDTO(userID: "u2", displayName: "Bob", role: "moderator", joinedAt: joined),
            ], createdAt: joined, lastMessageAt: nil, unreadCount: 2, unheardVoiceCount: 1, hasUrgent: true)
        let conversation: Conversation = dto
        #expect(conversation.kind == "broadcast" && !conversation.kind.isKnown)
        #expect(conversation.members.map(\.role) == [.owner, "moderator"])
        #expect(conversation.members.map(\.id) == ["u1", "u2"])
        #expect(conversation.unreadCount == 2 && conversation.unheardVoiceCount == 1 && conversation.hasUrgent)
    }
}
