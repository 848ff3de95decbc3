import ChorusAPI
import Foundation
import Testing

@testable import ChorusServer

/// Every permission status reached through real state: registrations, calls, purchases and time.
@Suite("Permissions")
struct PermissionTests {
    @Test("trial: available, exhausted within 7 days, expired by date", arguments: TestDatabase.all)
    func trial(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, options: .testing(clock: clock.closure)) { server in
            let token = try await server.register().accessToken
            let first = try await server.permission(token)
            #expect(first.canMakeCall && first.status == "trial_call_available")
            #expect(first.details.durationLimit == 60 && first.details.appType == "mobile_consumer" && first.details.trialEnds != nil)
            for index in 0..<3 {
                #expect(try await server.makeCall(token, to: "+1415555010\(index)").status == 200)
            }
            let exhausted = try await server.permission(token)
            #expect(!exhausted.canMakeCall && exhausted.status == "trial_exhausted")
            #expect(exhausted.details.message == "Trial calls exhausted. Upgrade to Basic ($4.99/week) for 5 calls per week!")
            #expect(exhausted.details.upgradeOptions?.map(\.plan) == ["basic", "premium"])
            let refused = try await server.makeCall(token)
            #expect(refused.status == 402)
            let payment = try refused.decode(PaymentRequiredResponse.self)
            #expect(payment.detail.error == "trial_exhausted")
            #expect(payment.detail.upgradeOptions.map(\.productID) == ["speech_assistant_basic_weekly", "speech_assistant_premium_monthly"])
            #expect(try await server.usage(token).upgradeRecommended)

            // A second user's trial runs out by date with calls left.
            let late = try await server.register().accessToken
            clock.advance(days: 7.01)
            let expired = try await server.permission(late)
            #expect(expired.status == "upgrade_required" && !expired.canMakeCall)
            let stats = try await server.usage(late)
            #expect(!stats.isTrialActive && stats.trialCallsRemaining == 0 && stats.upgradeRecommended)
            #expect(try await server.makeCall(late).status == 402)
        }
    }

    @Test("basic: 5 per 7-day cycle, then weekly_limit_reached, add-on, next cycle", arguments: TestDatabase.all)
    func basicAndAddon(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, options: .testing(clock: clock.closure)) { server in
            let token = try await server.register().accessToken
            clock.advance(days: 8)  // trial over
            #expect(try await server.permission(token).status == "upgrade_required")
            let purchase = try await server.buy(token, productID: "speech_assistant_basic_weekly", periodSeconds: 14 * 86_400)
            #expect(purchase.success && purchase.message == "Purchase processed successfully!")
            #expect(purchase.usageStats.subscriptionTier == "mobile_basic" && purchase.usageStats.isSubscribed)
            #expect(purchase.usageStats.callsRemainingThisWeek == 5 && purchase.usageStats.callsRemainingThisMonth == 5)
            #expect(purchase.usageStats.addonCallsRemaining == 0)
            // Issue 21: the purchase's usage_stats carry everything GET /mobile/usage-stats answers.
            #expect(purchase.usageStats.usage == (try await server.request(.GET, "/mobile/usage-stats", token: token).decode(UsageStatsResponse.self)))
            let basic = try await server.permission(token)
            #expect(basic.status == "basic_call_available" && basic.details.message == "You have 5 calls remaining this week")
            for index in 0..<5 {
                #expect(try await server.makeCall(token, to: "+1415555020\(index)").status == 200)
            }
            let limit = try await server.permission(token)
            #expect(limit.status == "weekly_limit_reached")
            #expect(limit.details.upgradeOptions?.map(\.plan) == ["premium", "addon"])
            #expect(try await server.makeCall(token).decode(PaymentRequiredResponse.self).detail.error == "weekly_limit_reached")

            try await server.buy(token, productID: "speech_assistant_addon_calls", consumable: true)
            let addon = try await server.permission(token)
            #expect(addon.status == "addon_call_available" && addon.details.addonCallsRemaining == 5 && addon.details.durationLimit == 60)
            let call = try await server.makeCall(token).decode(MakeCallResponse.self)
            #expect(call.usageStats.addonCallsRemaining == 4)
            let stats = try await server.usage(token)
            #expect(stats.subscriptionTier == "mobile_basic" && stats.isSubscribed && stats.addonCallsRemaining == 4)
            #expect(stats.addonCallsExpiry != nil)

            // The next 7-day cycle opens by itself, anchored at the purchase; add-ons are used after the plan.
            clock.advance(days: 7)
            let renewed = try await server.permission(token)
            #expect(renewed.status == "basic_call_available" && renewed.details.message == "You have 5 calls remaining this week")
            #expect(renewed.details.addonCallsRemaining == 4)
        }
    }

    @Test("premium: 120 s calls, 30 per cycle, monthly_limit_reached, add-ons after", arguments: TestDatabase.all)
    func premium(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, options: .testing(clock: clock.closure)) { server in
            let token = try await server.register().accessToken
            clock.advance(days: 8)
            try await server.buy(token, productID: "speech_assistant_premium_monthly", periodSeconds: 30 * 86_400)
            let premium = try await server.permission(token)
            #expect(premium.status == "premium_call_available" && premium.details.durationLimit == 120)
            #expect(premium.details.message == "You have 30 calls remaining this month")
            for index in 0..<30 {
                let reply = try await server.makeCall(token, to: "+141555503\(String(format: "%02d", index))")
                #expect(reply.status == 200)
                if index == 0 { #expect(try reply.decode(MakeCallResponse.self).durationLimit == 120) }
            }
            let limit = try await server.permission(token)
            #expect(limit.status == "monthly_limit_reached")
            #expect(limit.details.message == "Monthly limit reached. Buy 5 more calls for $4.99!")
            #expect(limit.details.upgradeOptions?.map(\.plan) == ["addon"])
            try await server.buy(token, productID: "speech_assistant_addon_calls", consumable: true)
            let addon = try await server.permission(token)
            #expect(addon.status == "addon_call_available" && addon.details.durationLimit == 120)
            let stats = try await server.usage(token)
            #expect(stats.subscriptionTier == "mobile_premium" && stats.callsMadeThisMonth == 30)
        }
    }

    @Test("an add-on pack works without any plan", arguments: TestDatabase.all)
    func addonWithoutPlan(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, options: .testing(clock: clock.closure)) { server in
            let token = try await server.register().accessToken
            clock.advance(days: 10)
            try await server.buy(token, productID: "speech_assistant_addon_calls", consumable: true)
            let addon = try await server.permission(token)
            #expect(addon.status == "addon_call_available" && addon.details.durationLimit == 60)
            #expect(try await server.makeCall(token).status == 200)
            clock.advance(days: 31)  // packs expire 30 days after purchase
            #expect(try await server.permission(token).status == "upgrade_required")
        }
    }
}
