import Foundation

// The embedded emulators: the simulated callee's timing, what they keep for inspection and what speaks.
extension ChorusConfiguration {
    /// What speaks in the sandbox emulators (`CHORUS_SANDBOX_SPEECH`): sandbox output never depends on what happens to
    /// be installed, so `espeak-ng` speaks only when asked for (and `chorus serve` then refuses to start without it).
    public enum SandboxSpeechChoice: String, Sendable, Equatable {
        /// The built-in deterministic voice-like signal, the same bytes on every machine (the default).
        case synthetic
        /// The `espeak-ng` program on the `PATH`, each sandbox voice at its own pitch.
        case espeakNG = "espeak-ng"

        static func load(from reader: inout EnvironmentReader) -> SandboxSpeechChoice {
            reader.choice("CHORUS_SANDBOX_SPEECH", default: .synthetic, among: [.synthetic, .espeakNG])
        }
    }

    /// The simulated callee of the sandbox Twilio.
    public struct SandboxTiming: Sendable, Equatable {
        public var ringSeconds: Double
        public var talkSeconds: Double

        static func load(from reader: inout EnvironmentReader) -> SandboxTiming {
            SandboxTiming(
                ringSeconds: reader.value("CHORUS_SANDBOX_RING_SECONDS", default: 1, parse: EnvironmentReader.number(in: 0...3_600, of: "seconds")),
                talkSeconds: reader.value("CHORUS_SANDBOX_TALK_SECONDS", default: 25, parse: EnvironmentReader.number(in: 0...86_400, of: "seconds"))
            )
        }
    }

    /// What the embedded emulators keep for inspection, all bounded (`CHORUS_SANDBOX_REQUEST_LOG_ENTRIES`,
    /// `CHORUS_SANDBOX_REQUEST_LOG_BYTES`, `CHORUS_SANDBOX_KEPT_CALLS`, `CHORUS_SANDBOX_KEPT_AUDIO_BYTES`).
    public struct SandboxRetention: Sendable, Equatable {
        /// Requests and WebSocket messages kept in the request log.
        public var requestLogEntries: Int
        /// Bytes of recorded text kept in the request log.
        public var requestLogBytes: Int
        /// Ended calls (Twilio) and closed sessions (Realtime) kept.
        public var keptCalls: Int
        /// Bytes of audio (recordings, played audio) of ended calls kept.
        public var keptAudioBytes: Int

        static func load(from reader: inout EnvironmentReader) -> SandboxRetention {
            let positive = EnvironmentReader.integer(in: 1...Int.max)
            return SandboxRetention(
                requestLogEntries: reader.value("CHORUS_SANDBOX_REQUEST_LOG_ENTRIES", default: 2_000, parse: positive),
                requestLogBytes: reader.value("CHORUS_SANDBOX_REQUEST_LOG_BYTES", default: 4 << 20, parse: positive),
                keptCalls: reader.value("CHORUS_SANDBOX_KEPT_CALLS", default: 100, parse: positive),
                keptAudioBytes: reader.value("CHORUS_SANDBOX_KEPT_AUDIO_BYTES", default: 32 << 20, parse: positive))
        }
    }
}
