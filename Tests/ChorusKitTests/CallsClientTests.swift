import ChorusKit
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The SDK against a real server over loopback: the product's main path and its refusals.
@Suite("ChorusKit calls (live server)")
struct CallsClientTests {
    @Test("register → usage stats → scenarios → make call → call history")
    func walkthrough() async throws {
        try await LiveServer.run { server in
            let chorus = server.client()
            #expect(await !chorus.auth.isSignedIn)
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            #expect(await chorus.auth.isSignedIn)

            let usage = try await chorus.calls.usageStats()
            #expect(usage.appType == .mobileConsumer, "X-App-Type: mobile was sent at registration")
            #expect(usage.isTrialActive && usage.trialCallsRemaining == 3 && usage.callsMadeTotal == 0)

            let permission = try await chorus.calls.callPermission()
            #expect(permission.canMakeCall && permission.status == .trialCallAvailable && permission.callsRemaining == 3)

            let scenarios = try await chorus.calls.scenarios()
            #expect(scenarios.count == 23)
            #expect(scenarios.first?.id == "default")
            #expect(try await chorus.calls.voices().contains { $0.id == "marin" })
            #expect(try await chorus.calls.pricing().plans.map(\.price) == ["$4.99", "$25.00"])

            let call = try await chorus.calls.makeCall(to: "+14155550100", scenario: scenarios[1].id)
            #expect(call.sid.hasPrefix("CA") && call.status == .initiated && call.durationLimit == 60)
            #expect(call.remaining.thisWeek == 2)

            let history = try await chorus.calls.callHistory(limit: 5)
            #expect(history.totalCalls == 1)
            #expect(history.calls.map(\.sid) == [call.sid])
            #expect(history.calls.first?.scenarioID == scenarios[1].id)
            #expect(history.calls.first?.phoneNumber == "+14155550100")
        }
    }

    @Test("the catalog signed out: built-in scenarios and voices; signed in, custom scenarios follow")
    func publicCatalog() async throws {
        try await LiveServer.run { server in
            let chorus = server.client()
            #expect(await !chorus.auth.isSignedIn)
            let scenarios = try await chorus.calls.scenarios()
            #expect(scenarios.count == 23 && scenarios.first?.id == "default")
            #expect(try await chorus.calls.voices().contains { $0.id == "marin" })
            // Signed-out, everything else still needs a session.
            await #expect(throws: ChorusError.self) { try await chorus.calls.usageStats() }
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            #expect(try await chorus.calls.scenarios().map(\.id) == scenarios.map(\.id))
        }
    }

    @Test("the 4th call of a trial user is refused with paymentRequired(trial_exhausted)")
    func paymentRequired() async throws {
        try await LiveServer.run { server in
            let chorus = server.client()
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            for index in 0..<3 {
                _ = try await chorus.calls.makeCall(to: "+1415555010\(index)")
            }
            let error = await #expect(throws: ChorusError.self) { try await chorus.calls.makeCall(to: "+14155550109") }
            guard case .paymentRequired(let detail) = error else {
                Issue.record("expected paymentRequired, got \(String(describing: error))")
                return
            }
            #expect(detail.reason == .trialExhausted)
            #expect(detail.upgradeOptions.map(\.kind) == [.plan(.basic), .plan(.premium)])
            #expect(error?.errorDescription == detail.message && !detail.message.isEmpty)
            let permission = try await chorus.calls.callPermission()
            #expect(!permission.canMakeCall && permission.status == .trialExhausted && permission.callsRemaining == 0)
            #expect(try await chorus.calls.callHistory().totalCalls == 3)
        }
    }

    @Test("a malformed phone number is a validation error naming the field, and nothing is charged")
    func validation() async throws {
        try await LiveServer.run { server in
            let chorus = server.client()
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            let error = await #expect(throws: ChorusError.self) { try await chorus.calls.makeCall(to: "555-0100") }
            guard case .validation(let fields) = error else {
                Issue.record("expected validation, got \(String(describing: error))")
                return
            }
            #expect(fields.map(\.field) == ["phone_number"])
            #expect(error?.errorDescription?.hasPrefix("Phone number: ") == true)
            #expect(try await chorus.calls.usageStats().trialCallsRemaining == 3)

            let badLimit = await #expect(throws: ChorusError.self) { try await chorus.calls.callHistory(limit: 0) }
            guard case .validation(let limitFields) = badLimit else {
                Issue.record("expected validation, got \(String(describing: badLimit))")
                return
            }
            #expect(limitFields.map(\.field) == ["limit"])
        }
    }

    @Test("retrying makeCall with the same idempotency key places and charges one call")
    func idempotentRetry() async throws {
        try await LiveServer.run { server in
            let chorus = server.client()
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            let key = UUID()
            let first = try await chorus.calls.makeCall(to: "+14155550100", idempotencyKey: key)
            let replay = try await chorus.calls.makeCall(to: "+14155550100", idempotencyKey: key)
            #expect(replay == first)
            let other = try await chorus.calls.makeCall(to: "+14155550100")
            #expect(other.sid != first.sid)
            let usage = try await chorus.calls.usageStats()
            #expect(usage.callsMadeTotal == 2 && usage.trialCallsRemaining == 1)
        }
    }

    @Test("a 429 becomes rateLimited with the server's Retry-After")
    func rateLimited() async throws {
        try await LiveServer.run(environment: ["CHORUS_RATE_LIMITS": "user=2/60,auth=none,calls=none"]) { server in
            let chorus = server.client()
            try await chorus.auth.register(email: LiveServer.newEmail(), password: "correct horse battery")
            _ = try await chorus.calls.pricing()
            _ = try await chorus.calls.pricing()
            let error = await #expect(throws: ChorusError.self) { try await chorus.calls.pricing() }
            guard case .rateLimited(let retryAfter) = error else {
                Issue.record("expected rateLimited, got \(String(describing: error))")
                return
            }
            let seconds = try #require(retryAfter)
            #expect(seconds > 0 && seconds <= 60)
            #expect(error?.errorDescription?.contains("try again in") == true)
        }
    }

    @Test("without a session, calls throw signedOut")
    func noSession() async throws {
        try await LiveServer.run { server in
            let error = await #expect(throws: ChorusError.self) { try await server.client().calls.usageStats() }
            guard case .signedOut = error else {
                Issue.record("expected signedOut, got \(String(describing: error))")
                return
            }
        }
    }
}

/// Requests the SDK builds, seen through the transport seam.
@Suite("ChorusKit calls (requests)")
struct CallsRequestTests {
    /// Fails every request as if the connection dropped, recording what was sent.
}
