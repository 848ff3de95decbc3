import ChorusAPI
import Foundation
import Testing

@testable import ChorusCore

// Every date here is fixed: the domain never reads the clock, so neither do its tests.

private let day: TimeInterval = 86_400
private let week: TimeInterval = 7 * day
private let month: TimeInterval = 30 * day
/// 2024-01-15T10:30:00Z, the instant the seed's examples use.
private let registered = Date(timeIntervalSince1970: 1_705_314_600)
/// 2024-01-15T00:00:00Z.
private let registeredDayStart = Date(timeIntervalSince1970: 1_705_276_800)

private let catalog = PlanCatalog.standard
private let policy = CallPermissionPolicy(catalog: .standard)

private func account(
    trialUsed: Int = 0, plan: ActivePlan? = nil, buckets: [QuotaBucket] = [], registeredAt: Date = registered
) -> UsageAccount {
    UsageAccount(registeredAt: registeredAt, appType: "mobile_consumer", trialUsed: trialUsed, plan: plan, buckets: buckets)
}

/// A plan bucket for the cycle of `plan` starting at `cycleStart`, with `used` calls charged.
private func planBucket(_ tier: PlanTier, cycleStart: Date, used: Int) -> QuotaBucket {
    let terms = catalog.plan(tier)
    return QuotaBucket(
        key: QuotaBucket.planKey(tier: tier, cycleStart: cycleStart), kind: .plan, periodStart: cycleStart,
        periodEnd: cycleStart.addingTimeInterval(terms.cycleLength), capacity: terms.callsPerCycle, used: used
    )
}

private func pack(_ transactionID: String, boughtAt: Date, used: Int = 0) -> QuotaBucket {
    var bucket = QuotaBucket.addonPack(transactionID: transactionID, purchasedAt: boughtAt, terms: catalog.addon)
    bucket.used = used
    return bucket
}

private let basicOption = UpgradeOption(
    plan: "basic", price: "$4.99", calls: "5/week", productID: "speech_assistant_basic_weekly"
)
private let premiumOption = UpgradeOption(
    plan: "premium", price: "$25.00", calls: "30/month", productID: "speech_assistant_premium_monthly"
)

// MARK: - Cycle math

@Suite("Billing cycles")
struct BillingCycleTests {
    @Test("cycle n covers [anchor + n·P, anchor + (n+1)·P)")
    func cycleIndex() {
        for n in [0, 1, 2, 3, 10, 52] {
            let start = registered.addingTimeInterval(Double(n) * week)
            for offset in [0, 1, 3_600, week / 2, week - 1] as [TimeInterval] {
                let interval = BillingCycle.interval(containing: start.addingTimeInterval(offset), anchor: registered, length: week)
                #expect(interval.start == start)
                #expect(interval.end == start.addingTimeInterval(week))
                #expect(interval.duration == week)
            }
        }
    }

    @Test("the first instant of a cycle belongs to it, the last second to the previous one")
    func exactBoundaries() {
        let boundary = registered.addingTimeInterval(week)
        #expect(BillingCycle.interval(containing: boundary, anchor: registered, length: week).start == boundary)
        #expect(BillingCycle.interval(containing: boundary.addingTimeInterval(-1), anchor: registered, length: week).start == registered)
        #expect(
            BillingCycle.interval(containing: boundary.addingTimeInterval(-0.001), anchor: registered, length: week).start
                == registered
        )
        let monthBoundary = registered.addingTimeInterval(month)
        #expect(BillingCycle.interval(containing: monthBoundary, anchor: registered, length: month).start == monthBoundary)
        #expect(
            BillingCycle.interval(containing: monthBoundary.addingTimeInterval(-1), anchor: registered, length: month).start
                == registered
        )
    }

    @Test("before the anchor, the first cycle")
    func beforeAnchor() {
        for offset in [-1, -3_600, -week, -10 * week] as [TimeInterval] {
            let interval = BillingCycle.interval(containing: registered.addingTimeInterval(offset), anchor: registered, length: week)
            #expect(interval.start == registered)
            #expect(interval.end == registered.addingTimeInterval(week))
        }
    }

    @Test("far-future cycles start exactly on anchor + n·P: nothing drifts")
    func farFutureNoDrift() {
        for n in [100, 520, 5_200, 52_000] {
            let start = registered.addingTimeInterval(Double(n) * week)
            #expect(BillingCycle.interval(containing: start, anchor: registered, length: week).start == start)
            #expect(
                BillingCycle.interval(containing: start.addingTimeInterval(-1), anchor: registered, length: week).start
                    == registered.addingTimeInterval(Double(n - 1) * week))
            #expect(
                BillingCycle.interval(containing: start.addingTimeInterval(week - 1), anchor: registered, length: week).start
                    == start)
        }
        let monthStart = registered.addingTimeInterval(1_200 * month)
        #expect(
            BillingCycle.interval(containing: monthStart.addingTimeInterval(5), anchor: registered, length: month).start
                == monthStart)
        // The start is always a whole number of periods after the anchor.
        let start = BillingCycle.interval(
            containing: registered.addingTimeInterval(123_456_789), anchor: registered, length: week
        ).start
        let periods = start.timeIntervalSince(registered) / week
        #expect(periods == periods.rounded(.down))
        #expect(periods == 204)
    }

    @Test("UTC day start")
    func utcDayStart() {
        #expect(BillingCycle.utcDayStart(of: registered) == registeredDayStart)
        #expect(BillingCycle.utcDayStart(of: registeredDayStart) == registeredDayStart)
        #expect(BillingCycle.utcDayStart(of: registeredDayStart.addingTimeInterval(day - 1)) == registeredDayStart)
        #expect(BillingCycle.utcDayStart(of: registeredDayStart.addingTimeInterval(day)) == registeredDayStart.addingTimeInterval(day))
        #expect(BillingCycle.utcDayStart(of: Date(timeIntervalSince1970: -1)) == Date(timeIntervalSince1970: -86_400))
        #expect(BillingCycle.utcDayStart(of: Date(timeIntervalSince1970: 0)) == Date(timeIntervalSince1970: 0))
    }
}

// MARK: - Permission decisions

@Suite("Call permission policy")
struct CallPermissionPolicyTests {
    @Test("trial: 3 then 2 then 1 call available, charged to the trial, 60 s")
    func trialAvailable() {
        let now = registered.addingTimeInterval(3_600)
        let expected = [
            (0, 3, "You have 3 trial calls remaining"), (1, 2, "You have 2 trial calls remaining"),
            (2, 1, "You have 1 trial call remaining"),
        ]
        for (used, remaining, message) in expected {
            let decision = policy.evaluate(account(trialUsed: used), at: now)
            #expect(decision.status == .trialCallAvailable)
            #expect(decision.allowed)
            #expect(decision.position.trialRemaining == remaining)
            #expect(decision.position.isTrialActive)
            #expect(decision.charge?.bucket.key == QuotaBucket.trialKey)
            #expect(decision.charge?.bucket.kind == .trial)
            #expect(decision.charge?.bucket.used == used)
            #expect(decision.charge?.bucket.capacity == 3)
            #expect(decision.charge?.durationLimitSeconds == 60)
            #expect(decision.message == message)
            #expect(decision.upgradeOptions.isEmpty)
        }
    }

    @Test("trial calls used up within 7 days: trial_exhausted")
    func trialExhausted() {
        for now in [registered, registered.addingTimeInterval(6 * day), registered.addingTimeInterval(week - 1)] {
            let decision = policy.evaluate(account(trialUsed: 3), at: now)
            #expect(decision.status == .trialExhausted)
            #expect(decision.status.rawValue == "trial_exhausted")
            #expect(!decision.allowed)
            #expect(decision.charge == nil)
            #expect(decision.message == "Trial calls exhausted. Upgrade to Basic ($4.99/week) for 5 calls per week!")
            #expect(decision.upgradeOptions == [basicOption, premiumOption])
        }
    }

    @Test("trial over by date with calls left: upgrade_required, trial inactive, 0 trial calls")
    func trialExpiredByDate() {
        for now in [registered.addingTimeInterval(week), registered.addingTimeInterval(8 * day)] {
            let user = account(trialUsed: 1)
            let decision = policy.evaluate(user, at: now)
            #expect(decision.status == .upgradeRequired)
            #expect(decision.status.rawValue == "upgrade_required")
            #expect(!decision.allowed)
            #expect(decision.message == "Please upgrade to continue making calls")
            #expect(decision.upgradeOptions == [basicOption, premiumOption])
            let position = decision.position
            let stats = UsageReport.usageStats(
                position, account: user, windows: .of(position, registeredAt: registered), tally: CallTally()
            )
            #expect(stats.isTrialActive == false)
            #expect(stats.trialCallsRemaining == 0)
            #expect(stats.trialCallsUsed == 1)
            #expect(stats.upgradeRecommended)
        }
    }

    @Test("basic: available with the seed's message, weekly_limit_reached, the next cycle re-opens")
    func basicPlan() {
        let anchor = registered.addingTimeInterval(10 * day)
        let plan = ActivePlan(tier: .basic, anchor: anchor, expiresAt: anchor.addingTimeInterval(52 * week))
        let now = anchor.addingTimeInterval(day)

        let fresh = policy.evaluate(account(trialUsed: 3, plan: plan), at: now)
        #expect(fresh.status == .basicCallAvailable)
        #expect(fresh.charge?.bucket.key == QuotaBucket.planKey(tier: .basic, cycleStart: anchor))
        #expect(fresh.charge?.bucket.capacity == 5)
        #expect(fresh.charge?.bucket.used == 0)
        #expect(fresh.charge?.bucket.periodStart == anchor)
        #expect(fresh.charge?.bucket.periodEnd == anchor.addingTimeInterval(week))
        #expect(fresh.charge?.durationLimitSeconds == 60)
        #expect(fresh.message == "You have 5 calls remaining this week")

        let oneUsed = policy.evaluate(account(trialUsed: 3, plan: plan, buckets: [planBucket(.basic, cycleStart: anchor, used: 1)]), at: now)
        #expect(oneUsed.status == .basicCallAvailable)
        #expect(oneUsed.message == "You have 4 calls remaining this week")
        #expect(oneUsed.position.planRemaining == 4)

        let full = account(trialUsed: 3, plan: plan, buckets: [planBucket(.basic, cycleStart: anchor, used: 5)])
        let refused = policy.evaluate(full, at: anchor.addingTimeInterval(week - 1))
        #expect(refused.status == .weeklyLimitReached)
        #expect(refused.status.rawValue == "weekly_limit_reached")
        #expect(!refused.allowed)
        #expect(refused.message == "Weekly limit reached. Upgrade to Premium or buy 5 more calls for $4.99!")

        let nextCycle = anchor.addingTimeInterval(week)
        let reopened = policy.evaluate(full, at: nextCycle)
        #expect(reopened.status == .basicCallAvailable)
        #expect(reopened.charge?.bucket.key == QuotaBucket.planKey(tier: .basic, cycleStart: nextCycle))
        #expect(reopened.charge?.bucket.used == 0)
        #expect(reopened.position.planRemaining == 5)
    }

    @Test("premium: available with 120 s, monthly_limit_reached, the next cycle re-opens")
    func premiumPlan() {
        let anchor = registered.addingTimeInterval(10 * day)
        let plan = ActivePlan(tier: .premium, anchor: anchor, expiresAt: anchor.addingTimeInterval(12 * month))
        let now = anchor.addingTimeInterval(20 * day)

        let fresh = policy.evaluate(account(trialUsed: 3, plan: plan), at: now)
        #expect(fresh.status == .premiumCallAvailable)
        #expect(fresh.status.rawValue == "premium_call_available")
        #expect(fresh.charge?.durationLimitSeconds == 120)
        #expect(fresh.charge?.bucket.capacity == 30)
        #expect(fresh.message == "You have 30 calls remaining this month")

        let full = account(trialUsed: 3, plan: plan, buckets: [planBucket(.premium, cycleStart: anchor, used: 30)])
        let refused = policy.evaluate(full, at: now)
        #expect(refused.status == .monthlyLimitReached)
        #expect(refused.status.rawValue == "monthly_limit_reached")
        #expect(refused.message == "Monthly limit reached. Buy 5 more calls for $4.99!")
        #expect(refused.upgradeOptions.map(\.plan) == ["addon"])

        let reopened = policy.evaluate(full, at: anchor.addingTimeInterval(month))
        #expect(reopened.status == .premiumCallAvailable)
        #expect(reopened.charge?.bucket.key == QuotaBucket.planKey(tier: .premium, cycleStart: anchor.addingTimeInterval(month)))
    }

    @Test("add-on without a plan: 60 s; with premium: 120 s; with basic: 60 s")
    func addonDurations() {
        let bought = registered.addingTimeInterval(8 * day)
        let now = registered.addingTimeInterval(9 * day)

        let alone = policy.evaluate(account(trialUsed: 3, buckets: [pack("T1", boughtAt: bought)]), at: now)
        #expect(alone.status == .addonCallAvailable)
        #expect(alone.status.rawValue == "addon_call_available")
        #expect(alone.charge?.durationLimitSeconds == 60)
        #expect(alone.charge?.bucket.key == "addon:T1")
        #expect(alone.message == "You have 5 add-on calls remaining")

        let premiumAnchor = registered.addingTimeInterval(8 * day)
        let premium = ActivePlan(tier: .premium, anchor: premiumAnchor, expiresAt: premiumAnchor.addingTimeInterval(month))
        let withPremium = policy.evaluate(
            account(trialUsed: 3, plan: premium, buckets: [planBucket(.premium, cycleStart: premiumAnchor, used: 30), pack("T1", boughtAt: bought)]),
            at: now
        )
        #expect(withPremium.status == .addonCallAvailable)
        #expect(withPremium.charge?.durationLimitSeconds == 120)
        #expect(withPremium.charge?.bucket.key == "addon:T1")

        let basic = ActivePlan(tier: .basic, anchor: premiumAnchor, expiresAt: premiumAnchor.addingTimeInterval(month))
        let withBasic = policy.evaluate(
            account(trialUsed: 3, plan: basic, buckets: [planBucket(.basic, cycleStart: premiumAnchor, used: 5), pack("T1", boughtAt: bought)]),
            at: now
        )
        #expect(withBasic.status == .addonCallAvailable)
        #expect(withBasic.charge?.durationLimitSeconds == 60)
    }

    @Test("the soonest-expiring pack with calls left is charged first")
    func soonestPackFirst() {
        let early = pack("EARLY", boughtAt: registered.addingTimeInterval(8 * day))
        let late = pack("LATE", boughtAt: registered.addingTimeInterval(9 * day))
        let now = registered.addingTimeInterval(10 * day)

        let decision = policy.evaluate(account(trialUsed: 3, buckets: [late, early]), at: now)
        #expect(decision.charge?.bucket.key == "addon:EARLY")
        #expect(decision.position.addonRemaining == 10)
        #expect(decision.position.addonExpiry == early.periodEnd)
        #expect(decision.position.addonPacks.map(\.key) == ["addon:EARLY", "addon:LATE"])

        var usedUp = early
        usedUp.used = 5
        let next = policy.evaluate(account(trialUsed: 3, buckets: [late, usedUp]), at: now)
        #expect(next.charge?.bucket.key == "addon:LATE")
        #expect(next.position.addonRemaining == 5)
        #expect(next.position.addonExpiry == late.periodEnd)
    }

    @Test("expired packs are ignored")
    func expiredPacksIgnored() {
        let old = pack("OLD", boughtAt: registered.addingTimeInterval(day))
        #expect(old.periodEnd == registered.addingTimeInterval(31 * day))
        let atExpiry = policy.evaluate(account(trialUsed: 3, buckets: [old]), at: old.periodEnd)
        #expect(atExpiry.status == .upgradeRequired)
        #expect(atExpiry.position.addonRemaining == 0)
        #expect(atExpiry.position.addonExpiry == nil)

        let justBefore = policy.evaluate(account(trialUsed: 3, buckets: [old]), at: old.periodEnd.addingTimeInterval(-1))
        #expect(justBefore.status == .addonCallAvailable)

        let fresh = pack("NEW", boughtAt: registered.addingTimeInterval(30 * day))
        let mixed = policy.evaluate(account(trialUsed: 3, buckets: [old, fresh]), at: old.periodEnd)
        #expect(mixed.charge?.bucket.key == "addon:NEW")
        #expect(mixed.position.addonRemaining == 5)
    }

    @Test("order trial → plan → add-on; only the authorising bucket is charged")
    func chargeOrder() {
        let anchor = registered.addingTimeInterval(day)
        let basic = ActivePlan(tier: .basic, anchor: anchor, expiresAt: anchor.addingTimeInterval(month))
        let addon = pack("T1", boughtAt: anchor)
        let now = anchor.addingTimeInterval(day)

        let withTrial = policy.evaluate(account(trialUsed: 1, plan: basic, buckets: [addon]), at: now)
        #expect(withTrial.status == .trialCallAvailable)
        #expect(withTrial.charge?.bucket.key == QuotaBucket.trialKey)
        #expect(withTrial.charge?.durationLimitSeconds == 60)

        let planNext = policy.evaluate(account(trialUsed: 3, plan: basic, buckets: [addon]), at: now)
        #expect(planNext.status == .basicCallAvailable)
        #expect(planNext.charge?.bucket.kind == .plan)

        let addonLast = policy.evaluate(
            account(trialUsed: 3, plan: basic, buckets: [addon, planBucket(.basic, cycleStart: anchor, used: 5)]), at: now
        )
        #expect(addonLast.status == .addonCallAvailable)
        #expect(addonLast.charge?.bucket.key == "addon:T1")
    }

    @Test("a premium subscriber still in the trial is charged to the trial with the plan's longer duration")
    func trialWithPremium() {
        // CallPermissionPolicy lets a trial call last as long as the user's plan allows (max of the two).
        let premium = ActivePlan(tier: .premium, anchor: registered.addingTimeInterval(day), expiresAt: registered.addingTimeInterval(31 * day))
        let decision = policy.evaluate(account(trialUsed: 0, plan: premium), at: registered.addingTimeInterval(2 * day))
        #expect(decision.status == .trialCallAvailable)
        #expect(decision.charge?.bucket.key == QuotaBucket.trialKey)
        #expect(decision.charge?.durationLimitSeconds == 120)
    }

    @Test("an expired plan, or one not started yet, is ignored")
    func inactivePlanIgnored() {
        let anchor = registered.addingTimeInterval(8 * day)
        let lapsed = ActivePlan(tier: .basic, anchor: anchor, expiresAt: anchor.addingTimeInterval(week))
        let user = account(trialUsed: 3, plan: lapsed)
        let atExpiry = policy.evaluate(user, at: lapsed.expiresAt)
        #expect(atExpiry.status == .upgradeRequired)
        #expect(atExpiry.position.plan == nil)
        #expect(!atExpiry.position.isSubscribed)
        let stats = UsageReport.usageStats(
            atExpiry.position, account: user, windows: .of(atExpiry.position, registeredAt: registered), tally: CallTally()
        )
        #expect(stats.subscriptionTier == nil)
        #expect(stats.isSubscribed == false)

        #expect(policy.evaluate(user, at: lapsed.expiresAt.addingTimeInterval(-1)).status == .basicCallAvailable)

        let future = ActivePlan(tier: .premium, anchor: registered.addingTimeInterval(20 * day), expiresAt: registered.addingTimeInterval(50 * day))
        #expect(policy.evaluate(account(trialUsed: 3, plan: future), at: registered.addingTimeInterval(10 * day)).status == .upgradeRequired)
    }

    @Test("every permission status is reachable")
    func everyStatusReached() {
        let anchor = registered.addingTimeInterval(10 * day)
        let now = anchor.addingTimeInterval(day)
        let basic = ActivePlan(tier: .basic, anchor: anchor, expiresAt: anchor.addingTimeInterval(month))
        let premium = ActivePlan(tier: .premium, anchor: anchor, expiresAt: anchor.addingTimeInterval(month))
        let cases: [(UsageAccount, Date)] = [
            (account(), registered),
            (account(trialUsed: 3), registered.addingTimeInterval(day)),
            (account(trialUsed: 0), registered.addingTimeInterval(week)),
            (account(trialUsed: 3, plan: basic), now),
            (account(trialUsed: 3, plan: basic, buckets: [planBucket(.basic, cycleStart: anchor, used: 5)]), now),
            (account(trialUsed: 3, plan: premium), now),
            (account(trialUsed: 3, plan: premium, buckets: [planBucket(.premium, cycleStart: anchor, used: 30)]), now),
            (account(trialUsed: 3, buckets: [pack("T", boughtAt: anchor)]), now),
        ]
        let reached = Set(cases.map { policy.evaluate($0.0, at: $0.1).status })
        #expect(reached == Set(PermissionStatus.allCases))
        for status in PermissionStatus.allCases {
            #expect(status.allowsCall == status.rawValue.hasSuffix("_available"))
        }
    }

    @Test("upgrade options per refusal status")
    func upgradeOptions() {
        let addon = UpgradeOption(plan: "addon", price: "$4.99", calls: "5 additional", productID: "speech_assistant_addon_calls")
        #expect(policy.upgradeOptions(for: .trialExhausted) == [basicOption, premiumOption])
        #expect(policy.upgradeOptions(for: .upgradeRequired) == [basicOption, premiumOption])
        #expect(policy.upgradeOptions(for: .weeklyLimitReached) == [premiumOption, addon])
        #expect(policy.upgradeOptions(for: .monthlyLimitReached) == [addon])
        for status in PermissionStatus.allCases where status.allowsCall {
            #expect(policy.upgradeOptions(for: status).isEmpty)
            #expect(policy.refusalMessage(status).isEmpty)
        }
    }

    @Test("refusal messages are the seed's texts")
    func refusalMessages() {
        #expect(policy.refusalMessage(.trialExhausted) == "Trial calls exhausted. Upgrade to Basic ($4.99/week) for 5 calls per week!")
        #expect(policy.refusalMessage(.weeklyLimitReached) == "Weekly limit reached. Upgrade to Premium or buy 5 more calls for $4.99!")
        #expect(policy.refusalMessage(.monthlyLimitReached) == "Monthly limit reached. Buy 5 more calls for $4.99!")
        #expect(policy.refusalMessage(.upgradeRequired) == "Please upgrade to continue making calls")
    }

    @Test("upgrade_recommended: no plan and at most one trial call left, or the trial over")
    func upgradeRecommended() {
        let during = registered.addingTimeInterval(day)
        #expect(!policy.position(of: account(trialUsed: 0), at: during).upgradeRecommended)
        #expect(!policy.position(of: account(trialUsed: 1), at: during).upgradeRecommended)
        #expect(policy.position(of: account(trialUsed: 2), at: during).upgradeRecommended)
        #expect(policy.position(of: account(trialUsed: 3), at: during).upgradeRecommended)
        #expect(policy.position(of: account(trialUsed: 0), at: registered.addingTimeInterval(week)).upgradeRecommended)

        let plan = ActivePlan(tier: .basic, anchor: registered, expiresAt: registered.addingTimeInterval(month))
        #expect(!policy.position(of: account(trialUsed: 3, plan: plan), at: during).upgradeRecommended)
        #expect(!policy.position(of: account(trialUsed: 3, plan: plan), at: registered.addingTimeInterval(20 * day)).upgradeRecommended)
    }
}

// MARK: - Charge targets

@Suite("Quota buckets")
struct QuotaBucketTests {
    @Test("bucket keys: trial, plan per cycle start, add-on per transaction")
    func keys() {
        #expect(QuotaBucket.trialKey == "trial")
        let anchor = registered.addingTimeInterval(10 * day)  // 2024-01-25T10:30:00Z
        #expect(QuotaBucket.planKey(tier: .basic, cycleStart: anchor) == "plan:basic:1706178600")
        #expect(QuotaBucket.planKey(tier: .premium, cycleStart: anchor) == "plan:premium:1706178600")
        #expect(QuotaBucket.addonKey(transactionID: "1000000123456789") == "addon:1000000123456789")

        let plan = ActivePlan(tier: .basic, anchor: anchor, expiresAt: anchor.addingTimeInterval(month))
        let second = policy.evaluate(account(trialUsed: 3, plan: plan), at: anchor.addingTimeInterval(week + 5))
        #expect(second.charge?.bucket.key == "plan:basic:1706783400")

        let trial = QuotaBucket.trial(registeredAt: registered, terms: catalog.trial, used: 2)
        #expect(trial.periodEnd == registered.addingTimeInterval(week))
        #expect(trial.remaining == 1)
        #expect(trial.isOpen(at: registered))
        #expect(!trial.isOpen(at: registered.addingTimeInterval(week)))

        let addon = QuotaBucket.addonPack(transactionID: "1000000123456789", purchasedAt: registered, terms: catalog.addon)
        #expect(addon.key == "addon:1000000123456789")
        #expect(addon.kind == .addon)
        #expect(addon.capacity == 5)
        #expect(addon.periodEnd == registered.addingTimeInterval(month))
    }

    @Test("remaining never goes negative")
    func remainingFloor() {
        var bucket = QuotaBucket.trial(registeredAt: registered, terms: catalog.trial)
        bucket.used = 7
        #expect(bucket.remaining == 0)
    }

    @Test("catalog product ids and tier wire names")
    func catalogLookups() {
        #expect(catalog.product(id: "speech_assistant_basic_weekly") == .plan(catalog.basic))
        #expect(catalog.product(id: "speech_assistant_premium_monthly") == .plan(catalog.premium))
        #expect(catalog.product(id: "speech_assistant_addon_calls") == .addon(catalog.addon))
        #expect(catalog.product(id: "speech_assistant_weekly") == .plan(catalog.basic))
        #expect(catalog.product(id: "speech_assistant_monthly") == nil)
        #expect(PlanTier.basic.wireName == "mobile_basic")
        #expect(PlanTier(wireName: "mobile_weekly") == .basic)
        #expect(PlanTier(wireName: "mobile_premium") == .premium)
        #expect(PlanTier(wireName: "gold") == nil)
    }
}

// MARK: - Reports

@Suite("Usage report")
struct UsageReportTests {
    @Test("usage-stats reproduces the seed's example for a trial user with one call")
    func usageStatsMatchesSeed() throws {
        let user = account(trialUsed: 1)
        let position = policy.position(of: user, at: registered.addingTimeInterval(3_600))
        let windows = UsageWindows.of(position, registeredAt: registered)
        #expect(windows.dayStart == registeredDayStart)
        let tally = CallTally(today: 1, thisWeek: 1, thisMonth: 1, total: 1, durationThisWeek: 45, durationThisMonth: 45)
        let stats = UsageReport.usageStats(position, account: user, windows: windows, tally: tally)

        let seed = #"""
            {
              "app_type": "mobile_consumer",
              "is_trial_active": true,
              "trial_calls_remaining": 2,
              "trial_calls_used": 1,
              "calls_made_today": 1,
              "calls_made_this_week": 1,
              "calls_made_this_month": 1,
              "calls_made_total": 1,
              "is_subscribed": false,
              "subscription_tier": null,
              "upgrade_recommended": false,
              "total_call_duration_this_week": 45,
              "total_call_duration_this_month": 45,
              "addon_calls_remaining": 0,
              "addon_calls_expiry": null,
              "week_start_date": "2024-01-15T10:30:00Z",
              "month_start_date": "2024-01-15T10:30:00Z"
            }
            """#
        let expected = try ChorusJSON.makeDecoder().decode(UsageStatsResponse.self, from: Data(seed.utf8))
        #expect(stats == expected)
    }

    @Test("usage windows: UTC day, and 7/30-day cycles anchored at the plan's start")
    func windows() {
        let trialUser = policy.position(of: account(trialUsed: 3), at: registered.addingTimeInterval(8 * day + 3_600))
        let trialWindows = UsageWindows.of(trialUser, registeredAt: registered)
        #expect(trialWindows.weekStart == registered.addingTimeInterval(week))
        #expect(trialWindows.monthStart == registered)
        #expect(trialWindows.dayStart == registeredDayStart.addingTimeInterval(8 * day))

        let anchor = registered.addingTimeInterval(3 * day + 1_234)
        let plan = ActivePlan(tier: .premium, anchor: anchor, expiresAt: anchor.addingTimeInterval(3 * month))
        let subscriber = policy.position(of: account(trialUsed: 3, plan: plan), at: anchor.addingTimeInterval(month + 8 * day))
        let planWindows = UsageWindows.of(subscriber, registeredAt: registered)
        #expect(planWindows.weekStart == anchor.addingTimeInterval(5 * week))
        #expect(planWindows.monthStart == anchor.addingTimeInterval(month))
    }

    @Test("usage-stats of a premium subscriber with add-on packs")
    func usageStatsSubscriber() {
        let anchor = registered.addingTimeInterval(10 * day)
        let plan = ActivePlan(tier: .premium, anchor: anchor, expiresAt: anchor.addingTimeInterval(month))
        let early = pack("A", boughtAt: anchor, used: 2)
        let late = pack("B", boughtAt: anchor.addingTimeInterval(day))
        let user = account(trialUsed: 3, plan: plan, buckets: [late, early, planBucket(.premium, cycleStart: anchor, used: 4)])
        let position = policy.position(of: user, at: anchor.addingTimeInterval(2 * day))
        let stats = UsageReport.usageStats(position, account: user, windows: .of(position, registeredAt: registered), tally: CallTally())
        #expect(stats.isSubscribed)
        #expect(stats.subscriptionTier == "mobile_premium")
        #expect(!stats.isTrialActive)
        #expect(stats.trialCallsRemaining == 0)
        #expect(stats.trialCallsUsed == 3)
        #expect(!stats.upgradeRecommended)
        #expect(stats.addonCallsRemaining == 8)
        #expect(stats.addonCallsExpiry == early.periodEnd)
        #expect(stats.weekStartDate == anchor)
        #expect(stats.monthStartDate == anchor)

        let snapshot = UsageReport.callSnapshot(position)
        #expect(
            snapshot == CallUsageSnapshot(callsRemainingThisWeek: 26, callsRemainingThisMonth: 26, addonCallsRemaining: 8, upgradeRecommended: false))
        let purchase = UsageReport.purchaseSnapshot(
            position, account: user, windows: .of(position, registeredAt: registered), tally: CallTally())
        #expect(purchase.subscriptionTier == "mobile_premium")
        #expect(purchase.isSubscribed)
        #expect(purchase.addonCallsRemaining == 8)
        // Issue 21: the purchase's usage_stats are the usage stats plus the calls left in the cycle.
        #expect(purchase.usage == stats)
        #expect(purchase.callsRemainingThisWeek == 26 && purchase.callsRemainingThisMonth == 26)
    }

    @Test("check-call-permission answer when allowed matches the seed's example")
    func permissionAllowed() throws {
        let anchor = registered.addingTimeInterval(10 * day)
        let plan = ActivePlan(tier: .basic, anchor: anchor, expiresAt: anchor.addingTimeInterval(month))
        let decision = policy.evaluate(
            account(trialUsed: 3, plan: plan, buckets: [planBucket(.basic, cycleStart: anchor, used: 1)]), at: anchor.addingTimeInterval(day))
        let response = UsageReport.permission(decision, appType: "mobile_consumer")
        #expect(response.canMakeCall)
        #expect(response.status == "basic_call_available")
        #expect(response.details.callsRemainingThisWeek == 4)
        #expect(response.details.durationLimit == 60)
        #expect(response.details.appType == "mobile_consumer")
        #expect(response.details.message == "You have 4 calls remaining this week")
        #expect(response.details.upgradeOptions == nil)
        #expect(response.details.trialEnds == nil)
        #expect(response.details.addonCallsRemaining == 0)

        let object = try JSONSerialization.jsonObject(with: ChorusJSON.makeEncoder().encode(response)) as? [String: Any]
        let details = object?["details"] as? [String: Any]
        #expect(details?["upgrade_options"] == nil)
        #expect(details?["trial_ends"] == nil)
        #expect(details?["calls_remaining_this_week"] as? Int == 4)
    }

    @Test("check-call-permission answer when refused carries upgrade options; trial_ends while the trial lasts")
    func permissionRefused() throws {
        let now = registered.addingTimeInterval(2 * day)
        let decision = policy.evaluate(account(trialUsed: 3), at: now)
        let response = UsageReport.permission(decision, appType: "mobile_consumer")
        #expect(!response.canMakeCall)
        #expect(response.status == "trial_exhausted")
        #expect(response.details.durationLimit == nil)
        #expect(response.details.upgradeOptions == [basicOption, premiumOption])
        #expect(response.details.trialEnds == registered.addingTimeInterval(week))
        #expect(response.details.message == "Trial calls exhausted. Upgrade to Basic ($4.99/week) for 5 calls per week!")
        #expect(response.details.callsRemainingThisWeek == 0)

        let trialing = UsageReport.permission(policy.evaluate(account(trialUsed: 1), at: now), appType: "mobile_consumer")
        #expect(trialing.status == "trial_call_available")
        #expect(trialing.details.durationLimit == 60)
        #expect(trialing.details.callsRemainingThisWeek == 2)
        #expect(trialing.details.trialEnds == registered.addingTimeInterval(week))
    }

    @Test("the 402 body of a refusal")
    func paymentRequired() {
        let now = registered.addingTimeInterval(2 * day)
        let body = UsageReport.paymentRequired(policy.evaluate(account(trialUsed: 3), at: now))
        #expect(body.detail.error == "trial_exhausted")
        #expect(body.detail.message == "Trial calls exhausted. Upgrade to Basic ($4.99/week) for 5 calls per week!")
        #expect(body.detail.upgradeOptions == [basicOption, premiumOption])
        #expect(body.detail.timestamp == now)
    }

    @Test("pricing equals the seed's")
    func pricing() {
        let pricing = UsageReport.pricing(.standard)
        #expect(pricing.plans.count == 2)
        let basic = pricing.plans[0]
        #expect(basic.id == "basic")
        #expect(basic.name == "Basic Plan")
        #expect(basic.price == "$4.99")
        #expect(basic.billing == "weekly")
        #expect(basic.calls == "5 calls per week")
        #expect(basic.durationLimit == "1 minute per call")
        #expect(basic.features == ["Unlimited scenarios", "Call history", "Basic support"])
        #expect(basic.productID == "speech_assistant_basic_weekly")
        let premium = pricing.plans[1]
        #expect(premium.id == "premium")
        #expect(premium.name == "Premium Plan")
        #expect(premium.price == "$25.00")
        #expect(premium.billing == "monthly")
        #expect(premium.calls == "30 calls per month")
        #expect(premium.durationLimit == "2 minutes per call")
        #expect(premium.features == ["All Basic features", "Priority support", "Advanced analytics"])
        #expect(premium.productID == "speech_assistant_premium_monthly")
        let addon = pricing.addon
        #expect(addon.id == "addon")
        #expect(addon.name == "Additional Calls")
        #expect(addon.price == "$4.99")
        #expect(addon.calls == "5 additional calls")
        #expect(addon.expires == "30 days")
        #expect(addon.description == "Perfect when you need a few more calls")
        #expect(addon.productID == "speech_assistant_addon_calls")
    }
}
