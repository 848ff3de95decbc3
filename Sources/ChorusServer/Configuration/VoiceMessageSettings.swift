import ChorusCore
import Foundation

extension ChorusConfiguration {
    /// Voice messages: recordings, transcription.
    public struct VoiceMessageSettings: Sendable, Equatable {
        /// The speech-to-text model (`CHORUS_VOICE_TRANSCRIPTION_MODEL`, default `gpt-transcribe`): `whisper-1` reports
        /// confidence and silence, `gpt-4o(-mini)-transcribe` token confidence (all three shut down on 2027-02-26),
        /// `gpt-transcribe` only the detected languages, judged with the recording (``TranscriptQuality``).
        public var transcriptionModel: String
        /// The model of transcription while recording (`GET /audio/stream`), in an OpenAI Realtime transcription
        /// session (`CHORUS_VOICE_LIVE_TRANSCRIPTION_MODEL`, default `gpt-live-transcribe`, OpenAI's model for live audio).
        public var liveTranscriptionModel: String
        /// Seconds a recording stream may stay silent (no message from the app) before it is closed
        /// (`CHORUS_VOICE_STREAM_IDLE_SECONDS`, default 15).
        public var streamIdleSeconds: Double
        /// The largest recording accepted, bytes.
        public var maxUploadBytes: Int
        /// The longest recording, seconds; and with `long_form` (bedtime stories).
        public var maxSeconds: Double
        public var longFormMaxSeconds: Double
        /// How long a signed audio URL stays valid, seconds.
        public var audioURLLifetime: TimeInterval
        /// The chat model writing conversation summaries (`CHORUS_VOICE_SUMMARY_MODEL`).
        public var summaryModel: String
        /// OpenAI text-to-speech model for default voices and narration (`CHORUS_VOICE_TTS_MODEL`, default
        /// `gpt-realtime-2.1-mini` on the Realtime API; `/v1/audio/speech` models are still accepted until 2027-01-06).
        public var speechModel: String
        /// The default voice of accounts that chose none, and the narrator of summaries (OpenAI voices).
        public var defaultVoice: String
        public var narratorVoice: String
        /// ElevenLabs model for cloned voices (`CHORUS_ELEVENLABS_MODEL`).
        public var cloneSpeechModel: String
        /// Speech generations per user per day (cache hits are free).
        public var dailyGenerationsPerUser: Int
        /// Voice messages per month on the free tier (paid plans: unlimited).
        public var freeMonthlyVoiceMessages: Int
        /// Spend budgets across all users, micro-dollars per UTC day and month; every voice provider call
        /// (transcription, summaries, urgency, speech, cloning) is refused when it would pass them.
        public var dailyBudgetMicrodollars: Int64
        public var monthlyBudgetMicrodollars: Int64
        /// Voice provider operations one user may start per UTC day (`CHORUS_VOICE_USER_DAILY_OPERATIONS`; `nil`: no
        /// limit).
        public var dailyOperationsPerUser: Int?
        /// Summaries one user may have generated per UTC day (stored summaries are free) (`CHORUS_VOICE_DAILY_SUMMARIES`).
        public var dailySummariesPerUser: Int
        /// Seconds between sweeps deleting expired recordings.
        public var retentionSweepInterval: TimeInterval
        /// Generated speech and playbacks not requested for this long are deleted (`CHORUS_VOICE_SPEECH_CACHE_DAYS`).
        public var speechCacheLifetime: TimeInterval
        /// Messages are classified for urgency by the summary model (`model`) as well as the keyword policy, or by the
        /// keyword policy only (`keywords`) (`CHORUS_VOICE_URGENCY`).
        public var urgencyByModel: Bool
        /// Clips of one conversation playback generated at the same time (`CHORUS_VOICE_PLAYBACK_CONCURRENCY`).
        public var playbackConcurrency: Int

        static func load(from reader: inout EnvironmentReader) -> VoiceMessageSettings {
            return VoiceMessageSettings(
                transcriptionModel: reader.string("CHORUS_VOICE_TRANSCRIPTION_MODEL") ?? "gpt-transcribe",
                liveTranscriptionModel: reader.string("CHORUS_VOICE_LIVE_TRANSCRIPTION_MODEL") ?? "gpt-live-transcribe",
                streamIdleSeconds: reader.value(
                    "CHORUS_VOICE_STREAM_IDLE_SECONDS", default: 15, parse: EnvironmentReader.number(in: 0.1...300, of: "seconds")),
                maxUploadBytes: reader.value(
                    "CHORUS_VOICE_MAX_UPLOAD_BYTES", default: 10 * 1024 * 1024, parse: EnvironmentReader.integer(in: 1_024...100 * 1024 * 1024)),
                maxSeconds: reader.value("CHORUS_VOICE_MAX_SECONDS", default: 120, parse: EnvironmentReader.number(above: 0, atMost: 3_600, of: "seconds")),
                longFormMaxSeconds: reader.value(
                    "CHORUS_VOICE_LONG_FORM_MAX_SECONDS", default: 300, parse: EnvironmentReader.number(above: 0, atMost: 3_600, of: "seconds")),
                audioURLLifetime: reader.value("CHORUS_VOICE_AUDIO_URL_TTL", default: 900, parse: EnvironmentReader.number(in: 10...86_400, of: "seconds")),
                summaryModel: reader.string("CHORUS_VOICE_SUMMARY_MODEL") ?? "gpt-5.4-mini",
                speechModel: reader.string("CHORUS_VOICE_TTS_MODEL") ?? "gpt-realtime-2.1-mini",
                defaultVoice: reader.string("CHORUS_VOICE_DEFAULT_VOICE") ?? "alloy",
                narratorVoice: reader.string("CHORUS_VOICE_NARRATOR_VOICE") ?? "sage",
                cloneSpeechModel: reader.string("CHORUS_ELEVENLABS_MODEL") ?? "eleven_multilingual_v2",
                dailyGenerationsPerUser: reader.value(
                    "CHORUS_VOICE_DAILY_GENERATIONS", default: 50, parse: EnvironmentReader.integer(in: 0...Int.max)),
                freeMonthlyVoiceMessages: reader.value(
                    "CHORUS_VOICE_FREE_MONTHLY_MESSAGES", default: 100, parse: EnvironmentReader.integer(in: 0...Int.max)),
                dailyBudgetMicrodollars: reader.value(
                    "CHORUS_VOICE_DAILY_BUDGET_USD", default: 50_000_000, accepts: EnvironmentReader.dollarAmount, parse: EnvironmentReader.microdollars),
                monthlyBudgetMicrodollars: reader.value(
                    "CHORUS_VOICE_MONTHLY_BUDGET_USD", default: 1_000_000_000, accepts: EnvironmentReader.dollarAmount, parse: EnvironmentReader.microdollars),
                dailyOperationsPerUser: reader.countOrOff("CHORUS_VOICE_USER_DAILY_OPERATIONS", default: 300, in: 0...10_000_000),
                dailySummariesPerUser: reader.value("CHORUS_VOICE_DAILY_SUMMARIES", default: 20, parse: EnvironmentReader.integer(in: 0...100_000)),
                retentionSweepInterval: reader.value(
                    "CHORUS_VOICE_RETENTION_SWEEP_SECONDS", default: 3_600, parse: EnvironmentReader.number(in: 1...86_400, of: "seconds")),
                speechCacheLifetime: reader.value(
                    "CHORUS_VOICE_SPEECH_CACHE_DAYS", default: 30 * 86_400, accepts: "a whole number of days from 7 to 3650"
                ) {
                    // At least the 7 days a summary (and its narration) is served from the cache.
                    Int($0).flatMap { (7...3_650).contains($0) ? TimeInterval($0 * 86_400) : nil }
                },
                urgencyByModel: reader.value("CHORUS_VOICE_URGENCY", default: true, accepts: "model or keywords") {
                    switch $0 {
                    case "model": true
                    case "keywords": false
                    default: nil
                    }
                },
                playbackConcurrency: reader.value("CHORUS_VOICE_PLAYBACK_CONCURRENCY", default: 4, parse: EnvironmentReader.integer(in: 1...16))
            )
        }

        /// The feature's limits (``ProductLimits``).
        public var limits: ProductLimits {
            ProductLimits(
                budget: FeatureBudget(dailyMicrodollars: dailyBudgetMicrodollars, monthlyMicrodollars: monthlyBudgetMicrodollars),
                userDailyOperations: dailyOperationsPerUser)
        }
    }
}
