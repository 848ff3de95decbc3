import Foundation

// The embedded emulators: the simulated callee's timing and what they keep for inspection.
extension ChorusConfiguration {
    /// The simulated callee of the sandbox Twilio.
    public struct SandboxTiming: Sendable, Equatable {
        public var ringSeconds: Double
        public var talkSeconds: Double

        static func load(from reader: inout EnvironmentReader) -> SandboxTiming {
            SandboxTiming(
                ringSeconds: reader.value("CHORUS_SANDBOX_RING_SECONDS", default: 1) { Double($0).flatMap { $0 >= 0 && $0 <= 3_600 ? $0 : nil } },
                talkSeconds: reader.value("CHORUS_SANDBOX_TALK_SECONDS", default: 25) { Double($0).flatMap { $0 >= 0 && $0 <= 86_400 ? $0 : nil } }
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
            func positive(_ text: String) -> Int? { Int(text).flatMap { $0 > 0 ? $0 : nil } }
            return SandboxRetention(
                requestLogEntries: reader.value("CHORUS_SANDBOX_REQUEST_LOG_ENTRIES", default: 2_000, parse: positive),
                requestLogBytes: reader.value("CHORUS_SANDBOX_REQUEST_LOG_BYTES", default: 4 << 20, parse: positive),
                keptCalls: reader.value("CHORUS_SANDBOX_KEPT_CALLS", default: 100, parse: positive),
                keptAudioBytes: reader.value("CHORUS_SANDBOX_KEPT_AUDIO_BYTES", default: 32 << 20, parse: positive))
        }
    }
}
