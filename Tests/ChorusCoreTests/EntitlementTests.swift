import ChorusCore
import Foundation
import Testing

@Suite("Subscription lifecycle and entitlements")
struct EntitlementTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let week: TimeInterval = 7 * 86_400
    static let month: TimeInterval = 30 * 86_400
    let evaluator = EntitlementEvaluator(catalog: .standard)
    let basic = "speech_assistant_basic_weekly"
    let premium = "speech_assistant_premium_monthly"

    func tierOf(_ product: String) -> PlanTier? { evaluator.tier(of: product) }

    func transaction(_ id: String, product: String, at start: Date, length: TimeInterval, original: String = "1000") -> SubscriptionTransaction {
        SubscriptionTransaction(
            transactionID: id, originalTransactionID: original, productID: product, purchaseDate: start,
            expiresDate: start.addingTimeInterval(length))
    }

    func applied(
        _ event: SubscriptionEvent, at signedAt: Date, renewal: RenewalPreferences = .init(), to snapshot: SubscriptionSnapshot
    )
        -> SubscriptionSnapshot
    {
        guard case .updated(let next) = SubscriptionLifecycle.apply(event, signedAt: signedAt, renewal: renewal, to: snapshot, tierOf: tierOf)
        else {
            Issue.record("\(event) did not update the subscription")
            return snapshot
        }
        return next
    }

    @Test("a purchase is active until Apple's expiresDate, then expired")
    func activeUntilExpiry() throws {
        let start = SubscriptionLifecycle.start(transaction("1000", product: basic, at: Self.t0, length: Self.week), signedAt: Self.t0)
        let during = try #require(evaluator.entitlement(start, at: Self.t0.addingTimeInterval(3600)))
        #expect(during.isActive && during.status == .active && during.tier == .basic)
        #expect(during.activePlan == ActivePlan(tier: .basic, anchor: Self.t0, expiresAt: Self.t0.addingTimeInterval(Self.week)))
        let after = try #require(evaluator.entitlement(start, at: Self.t0.addingTimeInterval(Self.week)))
        #expect(!after.isActive && after.status == .expired && after.activePlan == nil)
    }

    @Test("renewals keep the cycle anchor; auto-renew off is cancelled with access until expiry")
    func renewalAndCancellation() throws {
        var sub = SubscriptionLifecycle.start(transaction("1000", product: basic, at: Self.t0, length: Self.week), signedAt: Self.t0)
        let renewedAt = Self.t0.addingTimeInterval(Self.week)
        sub = applied(.paid(transaction("1001", product: basic, at: renewedAt, length: Self.week)), at: renewedAt, to: sub)
        #expect(sub.anchor == Self.t0 && sub.latestTransactionID == "1001" && sub.expiresAt == renewedAt.addingTimeInterval(Self.week))
        sub = applied(.renewalChanged, at: renewedAt.addingTimeInterval(60), renewal: RenewalPreferences(willRenew: false), to: sub)
        let cancelled = try #require(evaluator.entitlement(sub, at: renewedAt.addingTimeInterval(3600)))
        #expect(cancelled.status == .cancelled && cancelled.isActive)
    }

    @Test("billing failure: grace period keeps access until it ends, then billing retry without access; a renewal recovers")
    func gracePeriod() throws {
        var sub = SubscriptionLifecycle.start(transaction("1000", product: basic, at: Self.t0, length: Self.week), signedAt: Self.t0)
        let expiry = Self.t0.addingTimeInterval(Self.week)
        let graceEnd = expiry.addingTimeInterval(6 * 86_400)
        sub = applied(.billingFailed(graceUntil: graceEnd), at: expiry, to: sub)
        let inGrace = try #require(evaluator.entitlement(sub, at: expiry.addingTimeInterval(86_400)))
        #expect(inGrace.status == .gracePeriod && inGrace.isActive && inGrace.accessUntil == graceEnd)
        // Without the GRACE_PERIOD_EXPIRED notification, access still ends with the grace period.
        let lapsed = try #require(evaluator.entitlement(sub, at: graceEnd))
        #expect(lapsed.status == .billingRetry && !lapsed.isActive)
        sub = applied(.gracePeriodExpired, at: graceEnd, to: sub)
        #expect(evaluator.entitlement(sub, at: graceEnd)?.status == .billingRetry)
        // A late successful charge continues the subscription.
        let recovered = graceEnd.addingTimeInterval(3600)
        sub = applied(.paid(transaction("1001", product: basic, at: recovered, length: Self.week)), at: recovered, to: sub)
        #expect(evaluator.entitlement(sub, at: recovered)?.status == .active)
        #expect(sub.billing == .current)
    }

    @Test("billing failure without grace: no access at once")
    func billingRetry() throws {
        var sub = SubscriptionLifecycle.start(transaction("1000", product: basic, at: Self.t0, length: Self.week), signedAt: Self.t0)
        let expiry = Self.t0.addingTimeInterval(Self.week)
        sub = applied(.billingFailed(graceUntil: nil), at: expiry, to: sub)
        let entitlement = try #require(evaluator.entitlement(sub, at: expiry))
        #expect(entitlement.status == .billingRetry && !entitlement.isActive)
    }

    @Test("out-of-order delivery: a renewal signed before the expiry does not resurrect the subscription")
    func monotonic() throws {
        var sub = SubscriptionLifecycle.start(transaction("1000", product: basic, at: Self.t0, length: Self.week), signedAt: Self.t0)
        let expiredAt = Self.t0.addingTimeInterval(Self.week + 3600)
        sub = applied(.expired, at: expiredAt, to: sub)
        let lateRenewal = SubscriptionLifecycle.apply(
            .paid(transaction("1001", product: basic, at: Self.t0.addingTimeInterval(Self.week), length: Self.week)),
            signedAt: expiredAt.addingTimeInterval(-60), to: sub, tierOf: tierOf)
        #expect(lateRenewal == .stale)
        #expect(evaluator.entitlement(sub, at: expiredAt)?.status == .expired)
        // The same notification applied twice changes nothing the second time.
        #expect(SubscriptionLifecycle.apply(.expired, signedAt: expiredAt, to: sub, tierOf: tierOf) == .unchanged)
    }

    @Test("an older transaction sent again never rolls the subscription back")
    func olderTransaction() {
        var sub = SubscriptionLifecycle.start(transaction("1000", product: basic, at: Self.t0, length: Self.week), signedAt: Self.t0)
        let renewedAt = Self.t0.addingTimeInterval(Self.week)
        sub = applied(.paid(transaction("1001", product: basic, at: renewedAt, length: Self.week)), at: renewedAt, to: sub)
        let resent = SubscriptionLifecycle.apply(
            .paid(transaction("1000", product: basic, at: Self.t0, length: Self.week)), signedAt: renewedAt.addingTimeInterval(60), to: sub,
            tierOf: tierOf)
        if case .updated(let next) = resent {
            #expect(next.expiresAt == sub.expiresAt && next.latestTransactionID == "1001")
        } else {
            #expect(resent == .unchanged)
        }
    }

    @Test("upgrade basic → premium takes effect at once with fresh cycles; a downgrade waits for the renewal")
    func upgradeAndDowngrade() throws {
        var sub = SubscriptionLifecycle.start(transaction("1000", product: basic, at: Self.t0, length: Self.week), signedAt: Self.t0)
        let upgradeAt = Self.t0.addingTimeInterval(3 * 86_400)
        sub = applied(.paid(transaction("1001", product: premium, at: upgradeAt, length: Self.month)), at: upgradeAt, to: sub)
        let upgraded = try #require(evaluator.entitlement(sub, at: upgradeAt))
        #expect(upgraded.tier == .premium && upgraded.isActive && sub.anchor == upgradeAt)

        let downgradeAt = upgradeAt.addingTimeInterval(86_400)
        sub = applied(.renewalChanged, at: downgradeAt, renewal: RenewalPreferences(autoRenewProductID: basic), to: sub)
        #expect(sub.autoRenewProductID == basic)
        #expect(evaluator.entitlement(sub, at: downgradeAt)?.tier == .premium)
        let renewal = upgradeAt.addingTimeInterval(Self.month)
        sub = applied(.paid(transaction("1002", product: basic, at: renewal, length: Self.week)), at: renewal, to: sub)
        let downgraded = try #require(evaluator.entitlement(sub, at: renewal))
        #expect(downgraded.tier == .basic && sub.anchor == renewal && sub.autoRenewProductID == nil)
    }

    @Test("refund revokes access; a reversed refund restores it")
    func refund() throws {
        var sub = SubscriptionLifecycle.start(transaction("1000", product: basic, at: Self.t0, length: Self.week), signedAt: Self.t0)
        let refundAt = Self.t0.addingTimeInterval(86_400)
        sub = applied(.revoked(at: refundAt), at: refundAt, to: sub)
        let revoked = try #require(evaluator.entitlement(sub, at: refundAt))
        #expect(revoked.status == .revoked && !revoked.isActive)
        sub = applied(.paid(transaction("1000", product: basic, at: Self.t0, length: Self.week)), at: refundAt.addingTimeInterval(60), to: sub)
        // Access is back until the period's end; the refund turned auto-renew off and the reversal does not turn it on.
        let restored = try #require(evaluator.entitlement(sub, at: refundAt.addingTimeInterval(60)))
        #expect(restored.isActive && restored.status == .cancelled)
    }

    @Test("resubscribing after a lapse starts new cycles")
    func resubscribe() throws {
        var sub = SubscriptionLifecycle.start(transaction("1000", product: basic, at: Self.t0, length: Self.week), signedAt: Self.t0)
        sub = applied(.expired, at: Self.t0.addingTimeInterval(Self.week), to: sub)
        let later = Self.t0.addingTimeInterval(5 * Self.week)
        sub = applied(.paid(transaction("1001", product: basic, at: later, length: Self.week)), at: later, to: sub)
        let entitlement = try #require(evaluator.entitlement(sub, at: later))
        #expect(entitlement.isActive && sub.anchor == later && sub.expiredAt == nil)
    }

    @Test("the best active entitlement decides the plan; unknown products give none")
    func bestOfSeveral() throws {
        let old = SubscriptionLifecycle.start(
            transaction("1", product: premium, at: Self.t0.addingTimeInterval(-2 * Self.month), length: Self.month, original: "1"),
            signedAt: Self.t0)
        let current = SubscriptionLifecycle.start(
            transaction("2", product: basic, at: Self.t0, length: Self.week, original: "2"), signedAt: Self.t0)
        #expect(evaluator.current([old, current], at: Self.t0)?.tier == .basic)
        #expect(evaluator.current([old], at: Self.t0)?.status == .expired)
        let foreign = SubscriptionLifecycle.start(
            transaction("3", product: "com.other.product", at: Self.t0, length: Self.week, original: "3"), signedAt: Self.t0)
        #expect(evaluator.current([foreign], at: Self.t0) == nil)
        #expect(evaluator.tier(of: "speech_assistant_weekly") == .basic)
    }
}
