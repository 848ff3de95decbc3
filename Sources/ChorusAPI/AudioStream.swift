import Foundation

// Transcription while recording: the WebSocket `GET /audio/stream` (``API/Messaging/audioStream``).
//
// The app sends a ``AudioStreamClientMessage`` `start`, then the recording as binary frames of PCM16 (little-endian,
// 24 kHz, mono) as it records, then `end`. The server answers ``AudioStreamEvent``s: `ready`, `transcript.delta`s,
// then one `transcript.completed` carrying the final transcript and the stored recording (the same `audio_id` as
// `POST /audio` would give), or one `error`; either is followed by the close.

/// A text message of the app on `GET /audio/stream`.
public struct AudioStreamClientMessage: Codable, Sendable, Equatable {
    /// `start` (first, once), `end` (the recording is over: transcribe and store it) or `cancel` (drop everything).
    public var type: String
    /// `start`: the audio format of the binary frames; only `pcm16` (16-bit little-endian PCM, mono).
    public var format: String?
    /// `start`: samples per second; only 24000.
    public var sampleRate: Int?
    /// `start`: the expected language (ISO-639-1), a hint.
    public var language: String?
    /// `start`: allow the long-form limit (bedtime stories), as `POST /audio?long_form=true`.
    public var longForm: Bool?

    public init(type: String, format: String? = nil, sampleRate: Int? = nil, language: String? = nil, longForm: Bool? = nil) {
        self.type = type
        self.format = format
        self.sampleRate = sampleRate
        self.language = language
        self.longForm = longForm
    }

    /// The `start` message for 24 kHz PCM16.
    public static func start(language: String? = nil, longForm: Bool = false) -> AudioStreamClientMessage {
        AudioStreamClientMessage(type: "start", format: "pcm16", sampleRate: 24_000, language: language, longForm: longForm ? true : nil)
    }

    enum CodingKeys: String, CodingKey {
        case type
        case format
        case sampleRate = "sample_rate"
        case language
        case longForm = "long_form"
    }
}

/// Where a streamed recording's final transcript came from.
public enum AudioStreamTranscriptSource: String, Codable, Sendable, Equatable {
    /// The live transcription session that heard the recording as it was made.
    case stream
    /// The file transcription of the stored recording (`POST /transcriptions`' path), after the live session failed.
    case file
}

/// How long the end of a streamed recording took on the server, from the app's `end` to `transcript.completed`.
public struct AudioStreamTiming: Codable, Sendable, Equatable {
    /// The whole time, milliseconds.
    public var totalMs: Double
    /// The speech provider's share: from the commit sent to it to its final transcript (or the file transcription's
    /// provider call), milliseconds.
    public var providerMs: Double

    public init(totalMs: Double, providerMs: Double) {
        self.totalMs = totalMs
        self.providerMs = providerMs
    }

    enum CodingKeys: String, CodingKey {
        case totalMs = "total_ms"
        case providerMs = "provider_ms"
    }
}

/// An event of the server on `GET /audio/stream`.
///
/// Types: `ready` (the `start` was accepted: send audio), `transcript.delta` (`delta`: more of the transcript),
/// `transcript.completed` (`transcript`, `audio`, `source`, `timing`; the socket then closes with 1000) and `error`
/// (`code`, `detail`; the socket then closes). Error codes: `invalid_message`, `not_started`, `already_started`,
/// `unsupported_format`, `invalid_chunk`, `chunk_too_large`, `too_large`, `too_long`, `idle_timeout`,
/// `recording_rejected`, `transcription_failed`, `internal`.
public struct AudioStreamEvent: Codable, Sendable, Equatable {
    public var type: String
    public var delta: String?
    public var transcript: TranscriptionResponse?
    public var audio: AudioUploadResponse?
    public var source: AudioStreamTranscriptSource?
    public var timing: AudioStreamTiming?
    public var code: String?
    public var detail: String?

    public init(
        type: String, delta: String? = nil, transcript: TranscriptionResponse? = nil, audio: AudioUploadResponse? = nil,
        source: AudioStreamTranscriptSource? = nil, timing: AudioStreamTiming? = nil, code: String? = nil, detail: String? = nil
    ) {
        self.type = type
        self.delta = delta
        self.transcript = transcript
        self.audio = audio
        self.source = source
        self.timing = timing
        self.code = code
        self.detail = detail
    }

    enum CodingKeys: String, CodingKey {
        case type
        case delta
        case transcript
        case audio
        case source
        case timing
        case code
        case detail
    }
}
