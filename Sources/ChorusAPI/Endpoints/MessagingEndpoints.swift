extension API.Messaging {
    // MARK: Profile and voice data

    /// `GET /me/profile`: what voice messages need to know about the account.
    public static let profile = Endpoint<NoContent, MessagingProfileDTO>(.get, "/me/profile")
    /// `PUT /me/profile`: changes the display name, birth year, retention, voice features or default voice.
    public static let updateProfile = Endpoint<MessagingProfileDTO, MessagingProfileDTO>(.put, "/me/profile")
    /// `GET /me/voice-data`: everything the server holds of the user's voice, as a download.
    public static let exportVoiceData = Endpoint<NoContent, VoiceDataExport>(.get, "/me/voice-data")
    /// `DELETE /me/voice-data`: erases the user's recordings, transcripts, cloned voice and generated speech.
    public static let eraseVoiceData = Endpoint<NoContent, VoiceDataErasure>(.delete, "/me/voice-data")

    // MARK: Conversations

    /// `POST /conversations`: starts a conversation (201), or answers the existing direct one (200).
    public static let createConversation = Endpoint<CreateConversationRequest, ConversationDTO>(.post, "/conversations", status: 201)
    /// `GET /conversations`: the caller's conversations, most recently active first.
    public static let conversations = Endpoint<NoContent, ConversationsResponse>(.get, "/conversations")
    /// `GET /conversations/{conversation_id}`: one conversation as the caller sees it.
    public static let conversation = Endpoint<NoContent, ConversationDTO>(.get, "/conversations/{conversation_id}")
    /// `POST /conversations/{conversation_id}/members`: invites people to a group by email.
    public static let addMembers = Endpoint<AddMembersRequest, ConversationDTO>(.post, "/conversations/{conversation_id}/members")
    /// `DELETE /conversations/{conversation_id}/members/{user_id}`: a member leaves, or the owner removes one.
    public static let removeMember = Endpoint<NoContent, NoContent>(.delete, "/conversations/{conversation_id}/members/{user_id}")
    /// `POST /conversations/{conversation_id}/read`: marks messages read, up to one or all.
    public static let markRead = Endpoint<MarkReadRequest, ConversationDTO>(.post, "/conversations/{conversation_id}/read")

    // MARK: Invitations

    /// `GET /invitations`: the invitations waiting for the caller's answer.
    public static let invitations = Endpoint<NoContent, InvitationsResponse>(.get, "/invitations")
    /// `POST /invitations/{invitation_id}/accept`: joins the conversation.
    public static let acceptInvitation = Endpoint<NoContent, ConversationDTO>(.post, "/invitations/{invitation_id}/accept")
    /// `POST /invitations/{invitation_id}/decline`: declines the invitation.
    public static let declineInvitation = Endpoint<NoContent, NoContent>(.post, "/invitations/{invitation_id}/decline")
    /// `POST /invitations/{invitation_id}/block`: declines it and blocks the inviter's further invitations.
    public static let blockInviter = Endpoint<NoContent, NoContent>(.post, "/invitations/{invitation_id}/block")

    // MARK: Messages

    /// `GET /conversations/{conversation_id}/messages`: a page of messages, newest first.
    public static let messages = Endpoint<NoContent, MessagesPage>(.get, "/conversations/{conversation_id}/messages")
    /// `POST /conversations/{conversation_id}/messages`: sends a message (201), or answers the one already sent with
    /// the same `client_message_id` (200).
    public static let sendMessage = Endpoint<SendMessageRequest, MessageDTO>(.post, "/conversations/{conversation_id}/messages", status: 201)
    /// `GET /messages/search`: messages of the caller's conversations matching `q`.
    public static let searchMessages = Endpoint<NoContent, MessageSearchResponse>(.get, "/messages/search")
    /// `PATCH /messages/{message_id}`: the sender edits the text.
    public static let editMessage = Endpoint<EditMessageRequest, MessageDTO>(.patch, "/messages/{message_id}")
    /// `DELETE /messages/{message_id}`: the sender deletes the message and its recording.
    public static let deleteMessage = Endpoint<NoContent, NoContent>(.delete, "/messages/{message_id}")
    /// `POST /messages/{message_id}/heard`: the caller played the voice message.
    public static let markHeard = Endpoint<NoContent, NoContent>(.post, "/messages/{message_id}/heard")
    /// `PUT /messages/{message_id}/star`: stars the message (its recording outlives the retention period).
    public static let star = Endpoint<NoContent, MessageDTO>(.put, "/messages/{message_id}/star")
    /// `DELETE /messages/{message_id}/star`: removes the star.
    public static let unstar = Endpoint<NoContent, MessageDTO>(.delete, "/messages/{message_id}/star")
    /// `POST /messages/{message_id}/speech`: the message spoken in its sender's voice.
    public static let speech = Endpoint<NoContent, SpeechResponse>(.post, "/messages/{message_id}/speech")

    // MARK: Recordings, transcripts, voices

    /// `POST /audio[?long_form=true]`: stores a recording sent as the raw body (`audio/mp4`, `audio/mpeg`, `audio/wav`).
    public static let uploadAudio = Endpoint<RawContent, AudioUploadResponse>(.post, "/audio", status: 201)
    /// `GET /audio/{audio_id}`: the recording's bytes (`Range` supported), by bearer token or signed URL.
    public static let audio = Endpoint<NoContent, RawContent>(.get, "/audio/{audio_id}")
    /// `GET /audio/stream`: transcription while recording, a WebSocket (``AudioStreamClientMessage`` and PCM16 frames
    /// up, ``AudioStreamEvent`` down); 101 on upgrade.
    public static let audioStream = Endpoint<NoContent, RawContent>(.get, "/audio/stream", status: 101)
    /// `POST /transcriptions`: the transcript of one of the caller's recordings.
    public static let transcribe = Endpoint<TranscriptionRequestDTO, TranscriptionResponse>(.post, "/transcriptions")
    /// `GET /speech/{speech_key}`: generated speech's bytes, by signed URL only (`Range` supported).
    public static let speechAudio = Endpoint<NoContent, RawContent>(.get, "/speech/{speech_key}")
    /// `POST /voice-profile`: clones the caller's voice from a recording, with their consent (`pending_confirmation`).
    public static let createVoiceProfile = Endpoint<CreateVoiceProfileRequest, VoiceProfileResponse>(.post, "/voice-profile", status: 201)
    /// `POST /voice-profile/confirm`: keeps the cloned voice after hearing its preview; only then does it speak.
    public static let confirmVoiceProfile = Endpoint<NoContent, VoiceProfileResponse>(.post, "/voice-profile/confirm")
    /// `GET /voice-profile`: whether the caller has a cloned voice, and their default voice.
    public static let voiceProfile = Endpoint<NoContent, VoiceProfileResponse>(.get, "/voice-profile")
    /// `DELETE /voice-profile`: deletes the cloned voice (at the provider too).
    public static let deleteVoiceProfile = Endpoint<NoContent, NoContent>(.delete, "/voice-profile")
    /// `GET /voices/defaults`: the voices to choose a default from.
    public static let defaultVoices = Endpoint<NoContent, VoicesResponse>(.get, "/voices/defaults")

    // MARK: Conversation audio

    /// `POST /conversations/{conversation_id}/summary`: a structured, narrated summary of recent messages.
    public static let summary = Endpoint<SummaryRequest, SummaryResponse>(.post, "/conversations/{conversation_id}/summary")
    /// `GET /conversations/{conversation_id}/summaries/{summary_id}`: a stored summary (daily digests too).
    public static let storedSummary = Endpoint<NoContent, SummaryResponse>(.get, "/conversations/{conversation_id}/summaries/{summary_id}")
    /// `POST /conversations/{conversation_id}/playback`: the last messages in their senders' voices, as one WAV file.
    public static let playback = Endpoint<PlaybackRequest, PlaybackResponse>(.post, "/conversations/{conversation_id}/playback")
    /// `GET /conversations/{conversation_id}/playbacks/{playback_id}`: a playback's clips as they are made (`stream`).
    public static let playbackState = Endpoint<NoContent, PlaybackResponse>(.get, "/conversations/{conversation_id}/playbacks/{playback_id}")
    /// `GET /conversations/{conversation_id}/digest`: the caller's daily digest schedule for the conversation.
    public static let digest = Endpoint<NoContent, DigestSubscriptionDTO>(.get, "/conversations/{conversation_id}/digest")
    /// `PUT /conversations/{conversation_id}/digest`: sets it (morning, evening or off, in a time zone).
    public static let setDigest = Endpoint<DigestSubscriptionDTO, DigestSubscriptionDTO>(.put, "/conversations/{conversation_id}/digest")

    // MARK: Realtime

    /// `GET /ws`: the realtime WebSocket (``RealtimeEventDTO`` down, ``RealtimeClientEventDTO`` up); 101 on upgrade.
    public static let realtime = Endpoint<NoContent, RawContent>(.get, "/ws", status: 101)

    /// Every endpoint of this area, for the table API/all.
    public static let endpoints: [AnyEndpoint] = [
        profile.erased, updateProfile.erased, exportVoiceData.erased, eraseVoiceData.erased,
        createConversation.erased, conversations.erased, conversation.erased, addMembers.erased, removeMember.erased, markRead.erased,
        invitations.erased, acceptInvitation.erased, declineInvitation.erased, blockInviter.erased,
        messages.erased, sendMessage.erased, searchMessages.erased, editMessage.erased, deleteMessage.erased, markHeard.erased,
        star.erased, unstar.erased, speech.erased,
        uploadAudio.erased, audioStream.erased, audio.erased, transcribe.erased, speechAudio.erased, createVoiceProfile.erased, confirmVoiceProfile.erased,
        voiceProfile.erased, deleteVoiceProfile.erased, defaultVoices.erased,
        summary.erased, storedSummary.erased, playback.erased, playbackState.erased, digest.erased, setDigest.erased,
        realtime.erased,
    ]
}
