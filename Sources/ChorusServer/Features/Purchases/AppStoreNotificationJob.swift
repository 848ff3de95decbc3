import ChorusCore
import ChorusProviders
import Foundation
import Logging

/// Applies a stored App Store Server Notification (queued by the webhook). The stored signed payload is verified again
/// (validation happens at its `signedDate`, so the answer does not change), mapped to a ``SubscriptionEvent`` and applied
/// monotonically by `signedDate`: a notification older than what the subscription already reflects changes nothing.
struct AppStoreNotificationJob {
    let services: ChorusServices

    func run(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        guard let stored = try await store.purchases.storedNotification(uuid: job.payload) else { return }
        let notification = try await services.purchases.verifyNotification(stored.signedPayload)
        let now = services.now()
        let outcome = try await apply(notification, store: store, now: now)
        if try await store.purchases.markNotificationApplied(uuid: stored.uuid, outcome: outcome, now: now) {
            logger.info(
                "App Store notification applied",
                metadata: [
                    "type": .string(notification.notificationType), "subtype": .string(notification.subtype ?? "-"),
                    "notification_uuid": .string(notification.notificationUUID), "outcome": .string(outcome),
                ])
        }
    }

    /// Applies the notification's effect and names it (`updated`, `unchanged`, `stale`, `unknown_subscription`, ...).
    func apply(_ notification: VerifiedNotification, store: ChorusStore, now: Date) async throws -> String {
        guard let transaction = notification.transaction else { return "recorded" }
        let signedAt = notification.signedDate ?? transaction.signedDate ?? now
        switch services.configuration.plans.product(id: transaction.productID) {
        case .none:
            return "unknown_product"
        case .addon(let terms):
            return try await applyToAddonPack(notification, transaction: transaction, terms: terms, store: store, now: now)
        case .plan(let terms):
            guard let event = Self.event(for: notification, transaction: transaction, terms: terms) else { return "recorded" }
            let renewal = Self.renewalPreferences(notification)
            let entitlements = services.entitlements
            let tierOf: @Sendable (String) -> PlanTier? = { entitlements.tier(of: $0) }
            let original = transaction.originalTransactionID
            if case .paid = event {
                // Keep the transaction with the subscription's owner; a subscription not yet known is bound to the user
                // the app named in `appAccountToken`.
                if let owner = try await store.purchases.subscription(originalTransactionID: original)?.userID {
                    _ = try await store.purchases.recordTransaction(transaction, userID: owner, now: now)
                } else if let account = transaction.appAccountToken.map({ $0.uuidString.lowercased() }),
                    try await store.accounts.userExists(id: account)
                {
                    let recorded = try await store.purchases.recordPurchase(
                        transaction, product: .plan(terms), userID: account, byApp: false, tierOf: tierOf, now: now)
                    return recorded == .applied ? "subscribed" : "unchanged"
                }
            }
            let update = try await store.purchases.applySubscriptionEvent(
                originalTransactionID: original, event: event, renewal: renewal, signedAt: signedAt, tierOf: tierOf, now: now)
            return update == .unknown ? "unknown_subscription" : "\(update)"
        }
    }

    private func applyToAddonPack(
        _ notification: VerifiedNotification, transaction: VerifiedPurchase, terms: AddonTerms, store: ChorusStore, now: Date
    ) async throws -> String {
        switch notification.notificationType {
        case "REFUND", "REVOKE":
            return try await store.purchases.setAddonPackRevoked(true, transactionID: transaction.transactionID, terms: terms, now: now)
                ? "addon_revoked" : "unchanged"
        case "REFUND_REVERSED":
            return try await store.purchases.setAddonPackRevoked(false, transactionID: transaction.transactionID, terms: terms, now: now)
                ? "addon_restored" : "unchanged"
        default:
            return "recorded"
        }
    }

    /// What the notification means for a subscription; `nil` for informational ones (TEST, REFUND_DECLINED,
    /// PRICE_INCREASE, CONSUMPTION_REQUEST, and types this server does not act on, which are stored as received).
    static func event(for notification: VerifiedNotification, transaction: VerifiedPurchase, terms: PlanTerms) -> SubscriptionEvent? {
        let paid = SubscriptionEvent.paid(
            SubscriptionTransaction(
                transactionID: transaction.transactionID, originalTransactionID: transaction.originalTransactionID,
                productID: transaction.productID, purchaseDate: transaction.purchaseDate,
                expiresDate: transaction.expiresDate ?? transaction.purchaseDate.addingTimeInterval(terms.cycleLength),
                revocationDate: transaction.revocationDate
            ))
        switch notification.notificationType {
        case "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED", "RENEWAL_EXTENDED", "REFUND_REVERSED":
            return paid
        case "DID_CHANGE_RENEWAL_PREF":
            // An upgrade takes effect at once (Apple sends the new product's transaction); a downgrade at renewal.
            return notification.subtype == "UPGRADE" ? paid : .renewalChanged
        case "DID_CHANGE_RENEWAL_STATUS":
            return .renewalChanged
        case "DID_FAIL_TO_RENEW":
            return .billingFailed(graceUntil: notification.subtype == "GRACE_PERIOD" ? notification.renewalInfo?.gracePeriodExpiresDate : nil)
        case "GRACE_PERIOD_EXPIRED":
            return .gracePeriodExpired
        case "EXPIRED":
            return .expired
        case "REFUND", "REVOKE":
            return .revoked(at: transaction.revocationDate ?? notification.signedDate ?? transaction.purchaseDate)
        default:
            return nil
        }
    }

    /// Renewal preferences from `signedRenewalInfo`, or from the subtype when the notification carries none.
    static func renewalPreferences(_ notification: VerifiedNotification) -> RenewalPreferences {
        var renewal = RenewalPreferences(
            willRenew: notification.renewalInfo?.willAutoRenew, autoRenewProductID: notification.renewalInfo?.autoRenewProductID,
            gracePeriodExpiresDate: notification.renewalInfo?.gracePeriodExpiresDate)
        if renewal.willRenew == nil {
            switch notification.subtype {
            case "AUTO_RENEW_DISABLED": renewal.willRenew = false
            case "AUTO_RENEW_ENABLED": renewal.willRenew = true
            default: break
            }
        }
        return renewal
    }
}
