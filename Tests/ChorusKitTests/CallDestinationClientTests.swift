import ChorusKit
import Foundation
import Testing

/// Issue 17 through the SDK: a refused destination or a number's limit is ``ChorusError/refused(_:)`` with its code,
/// message and, when calling becomes possible again, `retryAt`.
@Suite("ChorusKit call destinations (live server)")
struct CallDestinationClientTests {
    @Test("a premium-rate number and a number past its daily calls are refused with their code, message and retryAt")
    func refusals() async throws {
        try await LiveServer.run(environment: ["CHORUS_CALLS_PER_NUMBER_PER_DAY": "1"]) { server in
            let chorus = server.client()
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            let premium = await #expect(throws: ChorusError.self) { try await chorus.calls.makeCall(to: "+19005550123") }
            guard case .refused(let refusal) = premium else {
                Issue.record("expected refused, got \(String(describing: premium))")
                return
            }
            #expect(refusal.code == "premium_rate_number" && refusal.retryAt == nil)
            #expect(premium?.errorDescription == refusal.message && refusal.message.contains("900 numbers are premium-rate"))

            _ = try await chorus.calls.makeCall(to: "+14155550131")
            let again = await #expect(throws: ChorusError.self) { try await chorus.calls.makeCall(to: "+14155550131") }
            guard case .refused(let limit) = again else {
                Issue.record("expected refused, got \(String(describing: again))")
                return
            }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let midnight = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: Date()))!
            #expect(limit.code == "number_daily_limit")
            #expect(limit.retryAt == midnight || limit.retryAt == calendar.date(byAdding: .day, value: 1, to: midnight))
            // Nothing was charged for the refusals.
            #expect(try await chorus.calls.usageStats().trialCallsUsed == 1)
        }
    }
}
