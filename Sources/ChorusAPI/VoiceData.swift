import Foundation

// Voice data (privacy): the export and the erasure of everything the server holds of a user's voice.

/// `GET /me/voice-data` answer: everything the server holds of the user's voice, the portable copy of GDPR Article 20.
/// It encodes back to the same JSON, so an app can save it as a file.
public struct VoiceDataExport: Codable, Sendable, Equatable {
    /// One stored recording.
    public struct Recording: Codable, Sendable, Hashable {
        /// The recording's id.
        public var audioID: String
        /// When it was uploaded.
        public var createdAt: Date
        /// Its format: `m4a`, `mp3` or `wav`.
        public var format: String
        /// Its length, in seconds.
        public var durationSeconds: Double
        /// Its size, in bytes.
        public var sizeBytes: Int
        /// When the retention period deletes it, unless a message keeps it (starred).
        public var expiresAt: Date?
        /// Its machine transcript, if transcribed.
        public var transcript: String?
        /// How sure the speech model was of the transcript, 0–1.
        public var transcriptConfidence: Double?
        /// The transcript's language (ISO-639-1).
        public var transcriptLanguage: String?
        /// A short-lived signed URL to download it.
        public var audioURL: String

        public init(
            audioID: String, createdAt: Date, format: String, durationSeconds: Double, sizeBytes: Int, expiresAt: Date?,
            transcript: String?, transcriptConfidence: Double?, transcriptLanguage: String?, audioURL: String
        ) {
            self.audioID = audioID
            self.createdAt = createdAt
            self.format = format
            self.durationSeconds = durationSeconds
            self.sizeBytes = sizeBytes
            self.expiresAt = expiresAt
            self.transcript = transcript
            self.transcriptConfidence = transcriptConfidence
            self.transcriptLanguage = transcriptLanguage
            self.audioURL = audioURL
        }

        enum CodingKeys: String, CodingKey {
            case audioID = "audio_id"
            case createdAt = "created_at"
            case format
            case durationSeconds = "duration_seconds"
            case sizeBytes = "size_bytes"
            case expiresAt = "expires_at"
            case transcript
            case transcriptConfidence = "transcript_confidence"
            case transcriptLanguage = "transcript_language"
            case audioURL = "audio_url"
        }
    }

    /// One voice message the user sent.
    public struct VoiceMessage: Codable, Sendable, Hashable {
        /// The message's id.
        public var messageID: String
        /// Its conversation.
        public var conversationID: String
        /// When it was sent.
        public var createdAt: Date
        /// `audio` or `both`.
        public var sendMode: MessageSendMode
        /// The reviewed transcript sent with it.
        public var content: String?
        /// The machine transcript.
        public var transcript: String?
        /// Its recording, unless erased or expired.
        public var audioID: String?

        public init(
            messageID: String, conversationID: String, createdAt: Date, sendMode: MessageSendMode, content: String?, transcript: String?,
            audioID: String?
        ) {
            self.messageID = messageID
            self.conversationID = conversationID
            self.createdAt = createdAt
            self.sendMode = sendMode
            self.content = content
            self.transcript = transcript
            self.audioID = audioID
        }

        enum CodingKeys: String, CodingKey {
            case messageID = "message_id"
            case conversationID = "conversation_id"
            case createdAt = "created_at"
            case sendMode = "send_mode"
            case content
            case transcript
            case audioID = "audio_id"
        }
    }

    /// The user's cloned voice and their consent.
    public struct ClonedVoice: Codable, Sendable, Hashable {
        /// The voice-cloning provider holding it, e.g. `elevenlabs`.
        public var provider: String
        /// When it was cloned.
        public var createdAt: Date
        /// When the user consented.
        public var consentedAt: Date
        /// The statement they agreed to.
        public var consentStatement: String
        /// The script they read.
        public var script: String
        /// The recording it was cloned from, unless erased.
        public var sampleAudioID: String?

        public init(
            provider: String, createdAt: Date, consentedAt: Date, consentStatement: String, script: String, sampleAudioID: String?
        ) {
            self.provider = provider
            self.createdAt = createdAt
            self.consentedAt = consentedAt
            self.consentStatement = consentStatement
            self.script = script
            self.sampleAudioID = sampleAudioID
        }

        enum CodingKeys: String, CodingKey {
            case provider
            case createdAt = "created_at"
            case consentedAt = "consented_at"
            case consentStatement = "consent_statement"
            case script
            case sampleAudioID = "sample_audio_id"
        }
    }

    /// When the export was made.
    public var exportedAt: Date
    /// The messaging profile (every field is present).
    public var profile: MessagingProfileDTO
    /// The stored recordings.
    public var recordings: [Recording]
    /// The voice messages sent.
    public var voiceMessages: [VoiceMessage]
    /// The cloned voice, if any.
    public var clonedVoice: ClonedVoice?
    /// How many generated speeches use the user's cloned voice.
    public var generatedSpeechInYourVoice: Int

    public init(
        exportedAt: Date, profile: MessagingProfileDTO, recordings: [Recording], voiceMessages: [VoiceMessage], clonedVoice: ClonedVoice?,
        generatedSpeechInYourVoice: Int
    ) {
        self.exportedAt = exportedAt
        self.profile = profile
        self.recordings = recordings
        self.voiceMessages = voiceMessages
        self.clonedVoice = clonedVoice
        self.generatedSpeechInYourVoice = generatedSpeechInYourVoice
    }

    enum CodingKeys: String, CodingKey {
        case exportedAt = "exported_at"
        case profile
        case recordings
        case voiceMessages = "voice_messages"
        case clonedVoice = "cloned_voice"
        case generatedSpeechInYourVoice = "generated_speech_in_your_voice"
    }
}

/// `DELETE /me/voice-data` answer: what was erased. Text messages stay.
public struct VoiceDataErasure: Codable, Sendable, Hashable {
    /// Recordings deleted, with their stored audio.
    public var recordings: Int
    /// Transcripts removed from the user's messages.
    public var transcripts: Int
    /// Whether a cloned voice was deleted (at the provider too).
    public var clonedVoice: Bool
    /// Generated speeches in the user's voice deleted.
    public var generatedSpeech: Int

    public init(recordings: Int, transcripts: Int, clonedVoice: Bool, generatedSpeech: Int) {
        self.recordings = recordings
        self.transcripts = transcripts
        self.clonedVoice = clonedVoice
        self.generatedSpeech = generatedSpeech
    }

    enum CodingKeys: String, CodingKey {
        case recordings
        case transcripts
        case clonedVoice = "cloned_voice"
        case generatedSpeech = "generated_speech"
    }
}
