import ChorusAPI
import ChorusCore
import ChorusProviders
import Foundation
import Vapor

/// Subscriptions and add-on packs bought through the App Store. Every purchase and notification goes through the
/// ``PurchaseVerifier``; nothing the client says about itself (`is_sandbox`, tier) is trusted.
struct PurchasesController: RouteCollection {
    let services: ChorusServices

    func boot(routes: any RoutesBuilder) throws {
        let mobile = routes.grouped("mobile")
        let authed = mobile.grouped(UserAuthenticator(services: services))
        authed.post("purchase-subscription", use: purchase)
        authed.post("upgrade-subscription", use: upgrade)
        authed.get("subscription-status", use: status)
        mobile.post("app-store", "webhook", use: notification)
    }

    @Sendable
    func purchase(_ req: Request) async throws -> Response {
        let user = try req.user
        let body = try req.decodeJSON(PurchaseRequest.self)
        var validator = FieldValidator()
        validator.check(
            (body.receiptData != nil) != (body.signedTransaction != nil), "receipt_data",
            "Send exactly one of receipt_data (legacy receipt) or signed_transaction (StoreKit 2)"
        )
        try validator.throwIfInvalid()
        guard let product = services.configuration.plans.product(id: body.productID) else { throw APIError.badRequest("Invalid product ID") }
        let verified = try await verify(receipt: body.receiptData, signedTransaction: body.signedTransaction, productID: body.productID, req)
        guard verified.productID == body.productID else { throw APIError.badRequest("Product ID mismatch") }
        try await apply(verified, product: product, userID: user.id, req)
        let position = try await CallPlacement(services: services, store: req.store, logger: req.logger).position(userID: user.id)
        return try req.json(
            PurchaseResponse(success: true, message: "Purchase processed successfully!", usageStats: UsageReport.purchaseSnapshot(position)))
    }

    /// Legacy: `subscription_tier` `mobile_weekly` (Basic), `mobile_basic` or `mobile_premium` with a receipt.
    @Sendable
    func upgrade(_ req: Request) async throws -> Response {
        let user = try req.user
        let body = try req.decodeJSON(UpgradeSubscriptionRequest.self)
        guard let tier = PlanTier(wireName: body.subscriptionTier), body.subscriptionTier.hasPrefix("mobile_") else {
            throw APIError.badRequest("Invalid subscription tier for mobile app")
        }
        let terms = services.configuration.plans.plan(tier)
        let verified = try await verify(receipt: body.receiptData, signedTransaction: nil, productID: terms.productID, req)
        guard verified.productID == terms.productID else { throw APIError.badRequest("Invalid product ID in receipt") }
        try await apply(verified, product: .plan(terms), userID: user.id, req)
        let position = try await CallPlacement(services: services, store: req.store, logger: req.logger).position(userID: user.id)
        let name = body.subscriptionTier == "mobile_weekly" ? "weekly" : tier.rawValue
        return try req.json(
            UpgradeSubscriptionResponse(
                success: true, message: "Successfully upgraded to \(name) subscription!", subscriptionTier: body.subscriptionTier,
                usageStats: UpgradeUsageStats(
                    isSubscribed: position.isSubscribed, subscriptionTier: body.subscriptionTier, trialCallsRemaining: position.trialRemaining)
            ))
    }

    @Sendable
    func status(_ req: Request) async throws -> Response {
        let user = try req.user
        let now = services.now()
        guard let subscription = try await req.store.subscription(userID: user.id) else {
            return try req.json(
                SubscriptionStatusResponse(
                    subscriptionTier: nil, subscriptionStatus: "none", isSubscribed: false, subscriptionStartDate: nil, subscriptionEndDate: nil,
                    nextPaymentDate: nil, billingCycle: nil, appStoreTransactionID: nil, appStoreProductID: nil
                ))
        }
        let active = subscription.state != .revoked && subscription.expiresAt > now
        let state = active ? subscription.state.rawValue : (subscription.state == .revoked ? "revoked" : "expired")
        let terms = services.configuration.plans.plan(subscription.tier)
        return try req.json(
            SubscriptionStatusResponse(
                subscriptionTier: subscription.tier.wireName, subscriptionStatus: state, isSubscribed: active,
                subscriptionStartDate: subscription.anchor, subscriptionEndDate: subscription.expiresAt,
                nextPaymentDate: active && subscription.state == .active ? subscription.expiresAt : nil, billingCycle: terms.billing,
                appStoreTransactionID: subscription.latestTransactionID, appStoreProductID: subscription.productID
            ))
    }

    /// App Store Server Notifications V2: only the signed payload is trusted; each notification is applied once.
    @Sendable
    func notification(_ req: Request) async throws -> Response {
        let body = try req.decodeJSON(AppStoreNotificationRequest.self)
        let notification: VerifiedNotification
        do {
            notification = try await services.purchases.verifyNotification(body.signedPayload)
        } catch {
            req.logger.warning("rejected App Store notification", metadata: ["error": .string("\(error)")])
            throw APIError.badRequest("Invalid signedPayload: the notification could not be verified")
        }
        let now = services.now()
        let outcome = try await applyNotification(notification, store: req.store, now: now)
        guard try await req.store.recordNotification(notification, outcome: outcome, now: now) else {
            return try req.json(AppStoreNotificationResponse(status: "success", message: "Notification already processed"))
        }
        req.logger.info(
            "App Store notification",
            metadata: [
                "type": .string(notification.notificationType), "subtype": .string(notification.subtype ?? "-"), "outcome": .string(outcome),
            ])
        return try req.json(AppStoreNotificationResponse(status: "success", message: "Notification processed successfully"))
    }

    /// Applies a notification's effect. Every step is idempotent (expiry only moves forward, states are set), so a
    /// notification delivered twice changes nothing the second time.
    private func applyNotification(_ notification: VerifiedNotification, store: ChorusStore, now: Date) async throws -> String {
        guard let transaction = notification.transaction else { return "no_transaction" }
        let original = transaction.originalTransactionID
        switch notification.notificationType {
        case "DID_RENEW", "SUBSCRIBED", "DID_CHANGE_RENEWAL_PREF", "OFFER_REDEEMED":
            guard let expires = transaction.expiresDate else { return "ignored" }
            let extended = try await store.extendSubscription(
                originalTransactionID: original, transactionID: transaction.transactionID, expiresAt: expires, now: now
            )
            return extended ? "extended" : "unchanged"
        case "DID_CHANGE_RENEWAL_STATUS":
            let state: SubscriptionState = notification.subtype == "AUTO_RENEW_DISABLED" ? .cancelled : .active
            return try await store.setSubscriptionState(originalTransactionID: original, state: state, now: now)
                ? state.rawValue : "unknown_subscription"
        case "EXPIRED", "GRACE_PERIOD_EXPIRED":
            return try await store.setSubscriptionState(originalTransactionID: original, state: .expired, now: now)
                ? "expired" : "unknown_subscription"
        case "REFUND", "REVOKE":
            if transaction.expiresDate == nil {
                return try await store.revokeAddonPack(transactionID: transaction.transactionID, now: now) ? "revoked" : "unknown_transaction"
            }
            return try await store.setSubscriptionState(originalTransactionID: original, state: .revoked, now: now)
                ? "revoked" : "unknown_subscription"
        default:
            return "ignored"
        }
    }

    private func verify(receipt: String?, signedTransaction: String?, productID: String, _ req: Request) async throws -> VerifiedPurchase {
        do {
            if let signedTransaction { return try await services.purchases.verifySignedTransaction(signedTransaction) }
            return try await services.purchases.verifyReceipt(receipt ?? "", productID: productID)
        } catch let error as PurchaseVerificationError {
            req.logger.notice("purchase verification failed", metadata: ["error": .string("\(error)")])
            switch error {
            case .unavailable:
                throw APIError.detail(.serviceUnavailable, "The App Store could not be reached; please retry")
            case .malformed(let reason), .invalidSignature(let reason), .wrongBundle(let reason), .wrongEnvironment(let reason):
                throw APIError.badRequest("Receipt validation failed: \(reason)")
            }
        }
    }

    private func apply(_ purchase: VerifiedPurchase, product: CatalogProduct, userID: String, _ req: Request) async throws {
        let now = services.now()
        if case .plan = product, let expires = purchase.expiresDate, expires <= now {
            throw APIError.badRequest("This subscription has already expired")
        }
        switch try await req.store.recordPurchase(purchase, product: product, userID: userID, now: now) {
        case .applied:
            req.logger.info(
                "purchase applied", metadata: ["product_id": .string(purchase.productID), "transaction_id": .string(purchase.transactionID)])
        case .duplicate:
            throw APIError.badRequest("This transaction has already been processed")
        }
    }
}
