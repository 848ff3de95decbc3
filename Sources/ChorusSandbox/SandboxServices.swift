import Vapor

/// The sandbox emulators, ready to mount on a Vapor route group.
///
/// ``register(on:)`` mounts, relative to the given routes:
/// - Twilio: `POST /2010-04-01/Accounts/:sid/Calls.json`, `POST|GET /2010-04-01/Accounts/:sid/Calls/:sid.json`;
///   control: `PUT|DELETE /callees/:number`, `GET /calls`.
/// - App Store control: `POST /app-store/purchases`, `POST /app-store/notifications`.
/// - Recorder: `GET|DELETE /requests`.
///
/// Every emulator request passes through the recorder; the recorder's own listing does not.
public struct SandboxServices: Sendable {
    /// The Twilio Calls API emulator.
    public let twilio: SandboxTwilio
    /// The App Store signing emulator.
    public let appStore: SandboxAppStore
    /// The log of received requests.
    public let recorder: SandboxRecorder

    /// Creates the services; by default the recorder redacts the Twilio auth token.
    public init(twilio: SandboxTwilio, appStore: SandboxAppStore, recorder: SandboxRecorder? = nil) {
        self.twilio = twilio
        self.appStore = appStore
        self.recorder = recorder ?? SandboxRecorder(redacting: [twilio.authToken])
    }

    /// Mounts every emulator and the request log on `routes` (e.g. `app.grouped("sandbox")`).
    public func register(on routes: any RoutesBuilder) {
        let recorded = routes.grouped(recorder)
        twilio.register(on: recorded)
        appStore.register(on: recorded)
        recorder.register(on: routes)
    }

    /// Stops simulated calls still in progress.
    public func shutdown() {
        twilio.cancelPendingCalls()
    }
}
