import Foundation
import Vapor
import X509

/// Provider emulators served by this very server (the sandbox under `/sandbox`, outside production).
///
/// ChorusServer does not know what they are: whoever starts a server (`chorus serve`, the benchmark, the tests'
/// `LoopbackServer`) composes them in — `EmbeddedSandbox` of ChorusEmbeddedSandbox — and passes them to
/// ``ChorusServices/live(_:configuration:embedded:options:)``. The server's clients reach them over loopback at
/// `<loopback>/sandbox/...` for every provider without a configured account.
public protocol EmbeddedProviders: Sendable {
    /// The accounts the emulators accept; the server's clients use them for each provider without a configured account.
    var credentials: EmbeddedProviderCredentials { get }
    /// App Store roots the purchase verifier trusts besides Apple's (the sandbox App Store's own authority).
    var appStoreRootCertificates: [Certificate] { get }
    /// Mounts the emulators' routes; the server passes its `/sandbox` group, where its clients look for them.
    func register(on routes: any RoutesBuilder)
    /// Stops the work the emulators run on their own (simulated calls, Realtime sessions). Idempotent.
    func shutdown()
}

/// The accounts of the embedded emulators: the server's clients and the emulators must agree on them.
public struct EmbeddedProviderCredentials: Sendable, Equatable {
    /// The Twilio account SID (`AC` and 32 hex digits).
    public var twilioAccountSID: String
    /// The Twilio auth token; it also signs the emulator's webhooks.
    public var twilioAuthToken: String
    /// The OpenAI API key (the Realtime and HTTP emulators).
    public var openAIKey: String
    /// The ElevenLabs API key.
    public var elevenLabsKey: String

    /// Creates credentials.
    public init(twilioAccountSID: String, twilioAuthToken: String, openAIKey: String, elevenLabsKey: String) {
        self.twilioAccountSID = twilioAccountSID
        self.twilioAuthToken = twilioAuthToken
        self.openAIKey = openAIKey
        self.elevenLabsKey = elevenLabsKey
    }

    /// Fresh random credentials, as every start of a server makes.
    public static func random() -> EmbeddedProviderCredentials {
        EmbeddedProviderCredentials(
            twilioAccountSID: "AC" + ChorusApp.randomHex(32), twilioAuthToken: ChorusApp.randomHex(32),
            openAIKey: ChorusApp.randomHex(40), elevenLabsKey: ChorusApp.randomHex(40))
    }
}
