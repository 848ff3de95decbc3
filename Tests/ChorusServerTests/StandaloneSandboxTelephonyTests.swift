import ChorusCore
import ChorusServer
import Foundation
import Testing

/// A `chorus serve` pointed at a standalone `chorus sandbox` calls what the embedded sandbox calls (issue 20): the
/// README's 555 numbers were refused there as `fictional_number`.
@Suite("standalone sandbox telephony")
struct StandaloneSandboxTelephonyTests {
    static func twilio(_ base: String) -> [String: String] {
        [
            "CHORUS_TWILIO_ACCOUNT_SID": "AC00000000000000000000000000000000", "CHORUS_TWILIO_AUTH_TOKEN": "sandbox-token",
            "CHORUS_TWILIO_FROM_NUMBER": "+15005550006", "CHORUS_TWILIO_API_BASE_URL": base,
        ]
    }

    @Test("fictional numbers: embedded sandbox and a Twilio API on loopback outside production, never live Twilio or production")
    func fictionalNumbers() throws {
        let fictional = "+14155550123"
        func allowed(_ configuration: ChorusConfiguration) -> Bool {
            if case .failure(let refusal) = configuration.destinationPolicy.destination(of: fictional) {
                return refusal.code != "fictional_number"
            }
            return true
        }
        let embedded = try ChorusConfiguration.load(from: [:])
        #expect(embedded.usesSandboxTelephony && embedded.callsFictionalNumbers && allowed(embedded))

        for base in ["http://127.0.0.1:5060", "http://localhost:5060", "http://[::1]:5060", "http://127.0.0.2:5060"] {
            var standalone = try ChorusConfiguration.load(from: Self.twilio(base))
            #expect(!standalone.usesSandboxTelephony, "\(base)")
            #expect(standalone.callsFictionalNumbers && allowed(standalone), "\(base)")
            standalone.environment = .production
            #expect(!standalone.callsFictionalNumbers && !allowed(standalone), "\(base) in production")
        }
        for base in ["https://api.twilio.com", "http://10.0.0.5:5060", "http://127.0.0.1.example.com"] {
            let live = try ChorusConfiguration.load(from: Self.twilio(base))
            #expect(!live.callsFictionalNumbers && !allowed(live), "\(base)")
        }
    }
}
