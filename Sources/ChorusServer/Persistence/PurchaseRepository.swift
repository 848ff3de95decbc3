import ChorusCore
import ChorusProviders
import Foundation
import SQLKit

/// The state of a subscription.
enum SubscriptionState: String, Sendable {
    /// Renews automatically.
    case active
    /// Will not renew; access continues until `expires_at`.
    case cancelled
    /// Ended.
    case expired
    /// Refunded or revoked by Apple: no access.
    case revoked
}

struct SubscriptionRecord: Sendable, Equatable {
    var userID: String
    var tier: PlanTier
    var productID: String
    var state: SubscriptionState
    var anchor: Date
    var expiresAt: Date
    var originalTransactionID: String
    var latestTransactionID: String
    var environment: String
}

/// The outcome of recording a verified purchase.
enum PurchaseOutcome: Sendable, Equatable {
    case applied
    /// The transaction was already claimed (by this or another user).
    case duplicate
}

extension ChorusStore {
    /// Claims the transaction for the user and grants what it bought, atomically. A transaction id is claimed once.
    func recordPurchase(_ purchase: VerifiedPurchase, product: CatalogProduct, userID: String, now: Date) async throws -> PurchaseOutcome {
        try await writeTransaction { tx in
            let claimed = try await tx.sql.raw(
                """
                INSERT INTO app_store_transactions (transaction_id, user_id, product_id, original_transaction_id, purchase_date,
                  expires_date, environment, created_at)
                VALUES (\(bind: purchase.transactionID), \(bind: userID), \(bind: purchase.productID), \(bind: purchase.originalTransactionID),
                  \(bind: purchase.purchaseDate.epochMillis), \(bind: purchase.expiresDate?.epochMillis), \(bind: purchase.environment.rawValue),
                  \(bind: now.epochMillis))
                ON CONFLICT (transaction_id) DO NOTHING RETURNING transaction_id
                """
            ).first()
            guard claimed != nil else { return .duplicate }
            switch product {
            case .addon(let terms):
                try await tx.insertBucket(
                    QuotaBucket.addonPack(transactionID: purchase.transactionID, purchasedAt: purchase.purchaseDate, terms: terms),
                    userID: userID
                )
            case .plan(let terms):
                let expires = purchase.expiresDate ?? purchase.purchaseDate.addingTimeInterval(terms.cycleLength)
                let existing = try await tx.subscription(userID: userID)
                // A renewal of the same subscription keeps its cycle anchor; a new plan starts its own cycles.
                let keepsAnchor =
                    existing.map {
                        $0.originalTransactionID == purchase.originalTransactionID && $0.tier == terms.tier && $0.expiresAt > purchase.purchaseDate
                    } ?? false
                let anchor = keepsAnchor ? existing!.anchor : purchase.purchaseDate
                try await tx.sql.raw(
                    """
                    INSERT INTO subscriptions (user_id, tier, product_id, status, anchor, expires_at, original_transaction_id,
                      latest_transaction_id, environment, updated_at)
                    VALUES (\(bind: userID), \(bind: terms.tier.rawValue), \(bind: purchase.productID), 'active', \(bind: anchor.epochMillis),
                      \(bind: expires.epochMillis), \(bind: purchase.originalTransactionID), \(bind: purchase.transactionID),
                      \(bind: purchase.environment.rawValue), \(bind: now.epochMillis))
                    ON CONFLICT (user_id) DO UPDATE SET tier = excluded.tier, product_id = excluded.product_id, status = 'active',
                      anchor = excluded.anchor, expires_at = excluded.expires_at, original_transaction_id = excluded.original_transaction_id,
                      latest_transaction_id = excluded.latest_transaction_id, environment = excluded.environment,
                      updated_at = excluded.updated_at
                    """
                ).run()
            }
            return .applied
        }
    }

    func subscription(userID: String) async throws -> SubscriptionRecord? {
        try await reader.raw("SELECT * FROM subscriptions WHERE user_id = \(bind: userID)").first().map(Self.subscriptionRecord)
    }

    /// Records a notification once. Returns `false` when its UUID was seen before.
    func recordNotification(_ notification: VerifiedNotification, outcome: String, now: Date) async throws -> Bool {
        try await sql.raw(
            """
            INSERT INTO app_store_notifications (notification_uuid, notification_type, subtype, original_transaction_id, outcome, received_at)
            VALUES (\(bind: notification.notificationUUID), \(bind: notification.notificationType), \(bind: notification.subtype),
              \(bind: notification.transaction?.originalTransactionID), \(bind: outcome), \(bind: now.epochMillis))
            ON CONFLICT (notification_uuid) DO NOTHING RETURNING notification_uuid
            """
        ).first() != nil
    }

    /// Extends a subscription to `expiresAt` only if that is later than what is stored (notifications arrive out of order).
    func extendSubscription(originalTransactionID: String, transactionID: String, expiresAt: Date, now: Date) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE subscriptions SET expires_at = \(bind: expiresAt.epochMillis), latest_transaction_id = \(bind: transactionID),
              status = 'active', updated_at = \(bind: now.epochMillis)
            WHERE original_transaction_id = \(bind: originalTransactionID) AND expires_at < \(bind: expiresAt.epochMillis)
              AND status <> 'revoked'
            RETURNING user_id
            """
        ).first() != nil
    }

    /// Sets the subscription state (and, for revocations, ends access now).
    func setSubscriptionState(originalTransactionID: String, state: SubscriptionState, now: Date) async throws -> Bool {
        let endsNow: SQLQueryString =
            state == .revoked || state == .expired
            ? "expires_at = CASE WHEN expires_at > \(bind: now.epochMillis) THEN \(bind: now.epochMillis) ELSE expires_at END," : ""
        return try await sql.raw(
            """
            UPDATE subscriptions SET \(endsNow) status = \(bind: state.rawValue), updated_at = \(bind: now.epochMillis)
            WHERE original_transaction_id = \(bind: originalTransactionID) AND status <> 'revoked'
            RETURNING user_id
            """
        ).first() != nil
    }

    /// A refunded add-on pack: its unused calls are removed.
    func revokeAddonPack(transactionID: String, now: Date) async throws -> Bool {
        try await writeTransaction { tx in
            let row = try await tx.sql.raw(
                """
                UPDATE app_store_transactions SET revoked_at = \(bind: now.epochMillis)
                WHERE transaction_id = \(bind: transactionID) AND revoked_at IS NULL RETURNING user_id
                """
            ).first()
            guard let row else { return false }
            try await tx.sql.raw(
                """
                UPDATE quota_buckets SET capacity = used
                WHERE user_id = \(bind: try row.string("user_id")) AND key = \(bind: QuotaBucket.addonKey(transactionID: transactionID))
                """
            ).run()
            return true
        }
    }

    static func subscriptionRecord(_ row: any SQLRow) throws -> SubscriptionRecord {
        SubscriptionRecord(
            userID: try row.string("user_id"), tier: PlanTier(rawValue: try row.string("tier")) ?? .basic,
            productID: try row.string("product_id"), state: SubscriptionState(rawValue: try row.string("status")) ?? .expired,
            anchor: try row.date("anchor"), expiresAt: try row.date("expires_at"),
            originalTransactionID: try row.string("original_transaction_id"), latestTransactionID: try row.string("latest_transaction_id"),
            environment: try row.string("environment")
        )
    }
}
