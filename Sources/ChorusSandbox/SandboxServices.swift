import Vapor

/// The sandbox emulators, ready to mount on a Vapor route group.
///
/// ``register(on:)`` mounts, relative to the given routes:
/// - Twilio: `POST /2010-04-01/Accounts/:sid/Calls.json`, `POST|GET /2010-04-01/Accounts/:sid/Calls/:sid.json`;
///   control: `PUT|DELETE /callees/:number`, `GET /calls`, `GET /calls/:call_sid/recording.wav`.
/// - App Store: `POST /app-store/verifyReceipt/production`, `POST /app-store/verifyReceipt/sandbox` (Apple's
///   verifyReceipt); control: `POST /app-store/purchases`, `POST /app-store/notifications`, `POST /app-store/receipts`,
///   `POST /app-store/receipts/transactions`, `POST /app-store/receipts/refunds`, `GET|DELETE /app-store/receipts/verifications`.
/// - OpenAI Realtime (GA WebSocket): `GET /openai/v1/realtime?model=…` (upgrade, `Authorization: Bearer <key>` when
///   the emulator has a key); control: `GET|PUT|DELETE /openai/realtime/behavior` (JSON, snake_case:
///   `first_audio_delay_ms`, `speed`, `chunk_ms`, `reply_lines`, `caller_transcripts`, `fail_after_ms`, `failure`
///   `error|close`, `reject_connections`; absent members take their defaults), `GET|DELETE /openai/realtime/sessions`
///   (sessions with the events they received, their turns, responses and truncations).
/// - OpenAI HTTP API (see ``SandboxOpenAI``): `POST /openai/v1/audio/transcriptions` (multipart),
///   `POST /openai/v1/audio/speech`, `POST /openai/v1/chat/completions`, `GET /openai/v1/models`,
///   `GET /openai/v1/models/:model` (`Authorization: Bearer <key>` when the emulator has a key); control:
///   `GET|PUT|DELETE /openai/behavior` (JSON, snake_case: `fail_next`, `status`, `code`, `retry_after_seconds`,
///   `delay_ms`, `endpoint`, `shutdown_dates`), `GET|DELETE /openai/request-counts`.
/// - ElevenLabs (see ``SandboxElevenLabs``): `POST /elevenlabs/v1/voices/add`, `GET|DELETE /elevenlabs/v1/voices/:id`,
///   `POST /elevenlabs/v1/text-to-speech/:voice_id(/stream)`, `GET /elevenlabs/v1/user/subscription` (`xi-api-key`
///   when the emulator has a key); control: `GET|PUT|DELETE /elevenlabs/behavior`, `GET|DELETE /elevenlabs/voices`.
/// - Recorder: `GET|DELETE /requests`.
///
/// Every emulator request passes through the recorder; the recorder's own listing does not. Every message a Realtime
/// session receives is recorded too (as `WS /openai/v1/realtime`), unless the emulator was created with
/// `recordsMessages: false`.
///
/// Everything kept for inspection is bounded, so a long-running sandbox holds its memory flat: the request log
/// (``SandboxRecorder/capacity``, ``SandboxRecorder/maximumBytes``), the ended calls with their recordings
/// (``SandboxTwilio/Retention``) and the records of closed Realtime sessions (``SandboxRealtime/keptSessions``).
public struct SandboxServices: Sendable {
    /// The Twilio Calls API emulator.
    public let twilio: SandboxTwilio
    /// The App Store emulator (signing, and verifyReceipt through its ``SandboxAppStore/receipts``).
    public let appStore: SandboxAppStore
    /// The OpenAI Realtime API emulator.
    public let realtime: SandboxRealtime
    /// The OpenAI HTTP API emulator (transcriptions, speech, chat completions, models).
    public let openAI: SandboxOpenAI
    /// The ElevenLabs emulator (instant voice cloning, text-to-speech).
    public let elevenLabs: SandboxElevenLabs
    /// The log of received requests.
    public let recorder: SandboxRecorder

    /// Creates the services; by default the recorder redacts the Twilio auth token, the Realtime and OpenAI API keys
    /// and the App Store shared secrets, keeps at most `requestLogEntries` requests and `requestLogBytes` bytes of them,
    /// and the OpenAI emulators accept any key. The recorder is attached to the Realtime emulator unless it has its own.
    public init(
        twilio: SandboxTwilio, appStore: SandboxAppStore, realtime: SandboxRealtime = SandboxRealtime(),
        openAI: SandboxOpenAI = SandboxOpenAI(), elevenLabs: SandboxElevenLabs = SandboxElevenLabs(), recorder: SandboxRecorder? = nil,
        requestLogEntries: Int = SandboxRecorder.defaultCapacity, requestLogBytes: Int = SandboxRecorder.defaultMaximumBytes
    ) {
        self.twilio = twilio
        self.appStore = appStore
        self.realtime = realtime
        self.openAI = openAI
        self.elevenLabs = elevenLabs
        let keys = [realtime.apiKey, openAI.apiKey, elevenLabs.apiKey].compactMap { $0 }
        let recorder =
            recorder
            ?? SandboxRecorder(
                redacting: [twilio.authToken] + keys + appStore.receipts.redactedSecrets, capacity: requestLogEntries,
                maximumBytes: requestLogBytes)
        realtime.attach(recorder: recorder)
        twilio.attach(recorder: recorder)
        // The Realtime emulator hears what the Twilio emulator's callees say, and transcribes it as their lines.
        let calleeLines = SandboxCalleeLines()
        twilio.attach(calleeLines: calleeLines)
        realtime.attach(calleeLines: calleeLines)
        self.recorder = recorder
    }

    /// Mounts every emulator and the request log on `routes` (e.g. `app.grouped("sandbox")`).
    public func register(on routes: any RoutesBuilder) {
        let recorded = routes.grouped(recorder)
        twilio.register(on: recorded)
        appStore.register(on: recorded)
        appStore.receipts.register(on: recorded)
        realtime.register(on: recorded.grouped("openai", "v1"))
        realtime.registerControl(on: routes)
        openAI.register(on: recorded.grouped("openai", "v1"))
        openAI.registerControl(on: routes)
        elevenLabs.register(on: recorded.grouped("elevenlabs"))
        elevenLabs.registerControl(on: routes)
        recorder.register(on: routes)
    }

    /// Stops simulated calls still in progress and closes every Realtime session.
    public func shutdown() {
        twilio.cancelPendingCalls()
        realtime.shutdown()
    }
}
