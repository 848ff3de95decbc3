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
        let user = routes.grouped(UserAuthenticator(services: services))
        user.on(API.Purchases.purchase, use: purchase)
        user.on(API.Purchases.upgrade, use: upgrade)
        user.on(API.Purchases.subscriptionStatus, use: status)
        routes.on(API.Purchases.appStoreNotification, use: notification)
    }

    @Sendable
    func purchase(_ req: Request) async throws -> PurchaseResponse {
        let user = try req.user
        let body = try req.body(of: API.Purchases.purchase)
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
        return PurchaseResponse(success: true, message: "Purchase processed successfully!", usageStats: try await usageStats(userID: user.id, req))
    }

    /// Legacy: `subscription_tier` `mobile_weekly` (Basic), `mobile_basic` or `mobile_premium` with a receipt.
    @Sendable
    func upgrade(_ req: Request) async throws -> UpgradeSubscriptionResponse {
        let user = try req.user
        let body = try req.body(of: API.Purchases.upgrade)
        guard let tier = PlanTier(wireName: body.subscriptionTier), body.subscriptionTier.hasPrefix("mobile_") else {
            throw APIError.badRequest("Invalid subscription tier for mobile app")
        }
        let terms = services.configuration.plans.plan(tier)
        // `mobile_weekly` is the seed's weekly plan, sold as the legacy product (`speech_assistant_weekly`) = Basic.
        let productID = body.subscriptionTier == "mobile_weekly" ? (terms.legacyProductIDs.first ?? terms.productID) : terms.productID
        let verified = try await verify(receipt: body.receiptData, signedTransaction: nil, productID: productID, req)
        guard verified.productID == productID else { throw APIError.badRequest("Invalid product ID in receipt") }
        try await apply(verified, product: .plan(terms), userID: user.id, req)
        var stats = try await usageStats(userID: user.id, req)
        // The legacy answer names the tier as it was asked for (`mobile_weekly`), in `usage_stats` too.
        stats.usage.subscriptionTier = body.subscriptionTier
        let name = body.subscriptionTier == "mobile_weekly" ? "weekly" : tier.rawValue
        return UpgradeSubscriptionResponse(
            success: true, message: "Successfully upgraded to \(name) subscription!", subscriptionTier: body.subscriptionTier,
            usageStats: stats)
    }

    /// The usage stats after a purchase, as `GET /mobile/usage-stats` answers them, with the calls left in the cycle.
    private func usageStats(userID: String, _ req: Request) async throws -> PurchaseUsageStats {
        let account = try await CallPlacement(services: services, store: req.store, logger: req.logger).account(userID: userID)
        let position = services.policy.position(of: account, at: services.now())
        let windows = UsageWindows.of(position, registeredAt: account.registeredAt)
        let tally = try await req.store.usage.callTally(userID: userID, windows: windows)
        return UsageReport.purchaseSnapshot(position, account: account, windows: windows, tally: tally)
    }

    @Sendable
    func status(_ req: Request) async throws -> SubscriptionStatusResponse {
        let user = try req.user
        let now = services.now()
        let subscriptions = try await req.store.purchases.subscriptions(userID: user.id).map(\.snapshot)
        guard let entitlement = services.entitlements.current(subscriptions, at: now) else {
            return SubscriptionStatusResponse(
                subscriptionTier: nil, subscriptionStatus: "none", isSubscribed: false, subscriptionStartDate: nil, subscriptionEndDate: nil,
                nextPaymentDate: nil, billingCycle: nil, appStoreTransactionID: nil, appStoreProductID: nil)
        }
        let subscription = entitlement.subscription
        let terms = services.configuration.plans.plan(entitlement.tier)
        // A failed renewal with Apple's billing grace period (Apple tries to renew up to a day before the paid period
        // ends, so it can come while the period still runs): the grace end has its own member while access lasts; the
        // end date stays the paid period's end.
        var graceUntil: Date?
        if entitlement.isActive, case .gracePeriod(let until) = subscription.billing { graceUntil = until }
        return SubscriptionStatusResponse(
            subscriptionTier: entitlement.tier.wireName, subscriptionStatus: SubscriptionState(rawValue: entitlement.status.rawValue),
            isSubscribed: entitlement.isActive,
            subscriptionStartDate: subscription.anchor, subscriptionEndDate: subscription.expiresAt,
            nextPaymentDate: entitlement.status == .active ? subscription.expiresAt : nil, billingCycle: BillingPeriod(rawValue: terms.billing),
            appStoreTransactionID: subscription.latestTransactionID, appStoreProductID: subscription.productID,
            willRenew: subscription.willRenew && entitlement.isActive, renewsToProductID: subscription.autoRenewProductID,
            gracePeriodExpiresDate: graceUntil)
    }

    /// App Store Server Notifications V2. The signed payload is verified (chain, signature, bundle, environment), stored
    /// once by `notificationUUID`, and applied from the job queue, so Apple gets its 200 at once and a redelivery or a
    /// concurrent duplicate changes nothing. Anything unverifiable is refused with 400 and nothing is stored.
    @Sendable
    func notification(_ req: Request) async throws -> AppStoreNotificationResponse {
        let body = try req.body(of: API.Purchases.appStoreNotification)
        let notification: VerifiedNotification
        do {
            notification = try await services.purchases.verifyNotification(body.signedPayload)
        } catch let error as PurchaseVerificationError {
            req.logger.warning("rejected App Store notification", metadata: ["reason": .string(error.reason)])
            throw APIError.badRequest("Invalid signedPayload: \(error.reason)")
        }
        let stored = try await req.store.purchases.storeNotification(notification, signedPayload: body.signedPayload, now: services.now())
        req.logger.info(
            "App Store notification received",
            metadata: [
                "type": .string(notification.notificationType), "subtype": .string(notification.subtype ?? "-"),
                "notification_uuid": .string(notification.notificationUUID), "duplicate": .stringConvertible(!stored),
            ])
        return AppStoreNotificationResponse(status: "success", message: stored ? "Notification received" : "Notification already received")
    }

    private func verify(receipt: String?, signedTransaction: String?, productID: String, _ req: Request) async throws -> VerifiedPurchase {
        do {
            if let signedTransaction { return try await services.purchases.verifySignedTransaction(signedTransaction) }
            return try await services.purchases.verifyReceipt(receipt ?? "", productID: productID)
        } catch let error as PurchaseVerificationError {
            req.logger.notice("purchase verification failed", metadata: ["error": .string("\(error)")])
            switch error {
            case .unavailable:
                throw APIError.unavailable(
                    retryAfter: 30, detail: "The App Store could not be reached to verify the purchase; nothing changed. Please retry.")
            case .malformed, .invalidSignature, .wrongBundle, .wrongEnvironment:
                throw APIError.badRequest("Receipt validation failed: \(error.reason)")
            }
        }
    }

    private func apply(_ purchase: VerifiedPurchase, product: CatalogProduct, userID: String, _ req: Request) async throws {
        let now = services.now()
        if let token = purchase.appAccountToken, token.uuidString.lowercased() != userID.lowercased() {
            throw APIError.badRequest("This purchase was made for another account")
        }
        if purchase.revocationDate != nil {
            throw APIError.badRequest("This transaction has been refunded or revoked")
        }
        if case .plan = product, let expires = purchase.expiresDate, expires <= now {
            throw APIError.badRequest("This subscription has already expired")
        }
        let entitlements = services.entitlements
        switch try await req.store.purchases.recordPurchase(purchase, product: product, userID: userID, tierOf: { entitlements.tier(of: $0) }, now: now) {
        case .applied:
            req.logger.info(
                "purchase applied", metadata: ["product_id": .string(purchase.productID), "transaction_id": .string(purchase.transactionID)])
        case .duplicate:
            throw APIError.badRequest("This transaction has already been processed")
        case .ownedByAnotherAccount:
            throw APIError.badRequest("This subscription belongs to another account")
        }
    }
}
