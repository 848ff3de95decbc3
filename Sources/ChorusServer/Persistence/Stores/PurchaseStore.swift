import ChorusCore
import ChorusProviders
import Foundation
import SQLKit

/// One App Store subscription as stored: its lifecycle state and who owns it.
struct SubscriptionRecord: Sendable, Equatable {
    var userID: String
    var environment: String
    var snapshot: SubscriptionSnapshot
    /// Bumped by every change; updates compare-and-set on it.
    var version: Int
}

/// The outcome of recording a verified purchase.
enum PurchaseOutcome: Sendable, Equatable {
    case applied
    /// The transaction was already claimed (by this or another user).
    case duplicate
    /// The transaction renews a subscription another account owns.
    case ownedByAnotherAccount
}

/// What applying App Store data to a stored subscription did.
enum SubscriptionUpdate: Sendable, Equatable {
    case updated
    case unchanged
    /// Older than data already applied (Apple retries out of order).
    case stale
    /// No subscription with that original transaction id is stored.
    case unknown
}

/// A stored App Store Server Notification awaiting (or done with) application.
struct StoredNotification: Sendable, Equatable {
    var uuid: String
    var signedPayload: String
    var outcome: String
}

private struct RollBack: Error {
    let outcome: PurchaseOutcome
}

/// App Store purchases: transactions (`app_store_transactions`), subscriptions (`app_store_subscriptions`) and
/// notifications (`app_store_notifications`).
///
/// Reached as `store.purchases`, or `tx.purchases` inside ``ChorusStore/writeTransaction(_:)``.
struct PurchaseStore: StoreArea {
    let base: ChorusStore

    /// Claims the transaction for the user and grants what it bought, atomically. A transaction id is claimed once;
    /// a subscription belongs to the account that first claimed one of its transactions.
    ///
    /// - Parameter byApp: `true` when the app posted the purchase (it claims the transaction); `false` when a
    ///   notification brought it (it is recorded for the owner, and the app's own post of it later still succeeds).
    func recordPurchase(
        _ purchase: VerifiedPurchase, product: CatalogProduct, userID: String, byApp: Bool = true,
        tierOf: @escaping @Sendable (String) -> PlanTier?, now: Date
    )
        async throws -> PurchaseOutcome
    {
        do {
            return try await writeTransaction { tx in
                let recorded =
                    byApp
                    ? try await tx.purchases.claimTransaction(purchase, userID: userID, now: now)
                    : try await tx.purchases.recordTransaction(purchase, userID: userID, now: now)
                guard recorded else { return .duplicate }
                switch product {
                case .addon(let terms):
                    try await tx.usage.insertBucket(
                        QuotaBucket.addonPack(transactionID: purchase.transactionID, purchasedAt: purchase.purchaseDate, terms: terms),
                        userID: userID
                    )
                case .plan(let terms):
                    let transaction = SubscriptionTransaction(
                        transactionID: purchase.transactionID, originalTransactionID: purchase.originalTransactionID,
                        productID: purchase.productID, purchaseDate: purchase.purchaseDate,
                        expiresDate: purchase.expiresDate ?? purchase.purchaseDate.addingTimeInterval(terms.cycleLength),
                        revocationDate: purchase.revocationDate
                    )
                    // When the App Store said this; a legacy receipt has no signing date, so its purchase date stands in
                    // (never the server's clock, which would make Apple's own later-delivered notifications look stale).
                    let signedAt = purchase.signedDate ?? purchase.purchaseDate
                    if let owner = try await tx.purchases.subscription(originalTransactionID: purchase.originalTransactionID)?.userID, owner != userID {
                        throw RollBack(outcome: .ownedByAnotherAccount)
                    }
                    // Insert, or apply to the stored subscription (another instance may insert it in between: then apply).
                    while try await tx.purchases.applySubscriptionEvent(
                        originalTransactionID: purchase.originalTransactionID, event: .paid(transaction), signedAt: signedAt,
                        tierOf: tierOf, now: now) == .unknown
                    {
                        let inserted = try await tx.purchases.insertSubscription(
                            SubscriptionLifecycle.start(transaction, signedAt: signedAt), userID: userID,
                            environment: purchase.environment.rawValue, now: now)
                        if inserted { break }
                    }
                }
                return .applied
            }
        } catch let rollBack as RollBack {
            return rollBack.outcome
        }
    }

    /// Claims a transaction id for `userID` (the app posted it): one compare-and-set. `false` when the app posted it
    /// before (for anyone) or it belongs to another account. A transaction only recorded from a notification for the
    /// same account is claimed now.
    func claimTransaction(_ purchase: VerifiedPurchase, userID: String, now: Date) async throws -> Bool {
        try await insertTransaction(
            purchase, userID: userID, claimedAt: now, now: now,
            onConflict: """
                ON CONFLICT (transaction_id) DO UPDATE SET claimed_at = excluded.claimed_at
                WHERE app_store_transactions.claimed_at IS NULL AND app_store_transactions.user_id = excluded.user_id
                """)
    }

    /// Records a transaction a notification brought, for the subscription's owner, unclaimed; `false` when it is
    /// already stored.
    func recordTransaction(_ purchase: VerifiedPurchase, userID: String, now: Date) async throws -> Bool {
        try await insertTransaction(purchase, userID: userID, claimedAt: nil, now: now, onConflict: "ON CONFLICT (transaction_id) DO NOTHING")
    }

    private func insertTransaction(
        _ purchase: VerifiedPurchase, userID: String, claimedAt: Date?, now: Date, onConflict: SQLQueryString
    )
        async throws -> Bool
    {
        try await sql.raw(
            """
            INSERT INTO app_store_transactions (transaction_id, user_id, product_id, original_transaction_id, purchase_date,
              expires_date, environment, revoked_at, revocation_reason, claimed_at, created_at)
            VALUES (\(bind: purchase.transactionID), \(bind: userID), \(bind: purchase.productID), \(bind: purchase.originalTransactionID),
              \(bind: purchase.purchaseDate.epochMillis), \(bind: purchase.expiresDate?.epochMillis), \(bind: purchase.environment.rawValue),
              \(bind: purchase.revocationDate?.epochMillis), \(bind: purchase.revocationReason.map(Int64.init)),
              \(bind: claimedAt?.epochMillis), \(bind: now.epochMillis))
            \(onConflict) RETURNING transaction_id
            """
        ).first() != nil
    }

    /// The account that claimed `transactionID`, if any.
    /// See ``PurchaseRecords/purchase(transactionID:)``.
    func storedPurchase(id: String) async throws -> StoredPurchase? {
        let row = try await sql.raw("SELECT * FROM app_store_transactions WHERE transaction_id = \(bind: id)").first()
        let original = try row?.string("original_transaction_id") ?? id
        let firstRow = try await sql.raw("SELECT * FROM app_store_transactions WHERE transaction_id = \(bind: original)").first()
        let originalPurchaseDate = try firstRow?.date("purchase_date")
        if let subscription = try await self.subscription(originalTransactionID: original) {
            let snapshot = subscription.snapshot
            return StoredPurchase(
                userID: subscription.userID, transactionID: snapshot.latestTransactionID, originalTransactionID: original,
                productID: snapshot.productID, purchaseDate: snapshot.purchaseDate, originalPurchaseDate: originalPurchaseDate,
                expiresDate: snapshot.expiresAt, willRenew: snapshot.willRenew, autoRenewProductID: snapshot.autoRenewProductID)
        }
        guard let row else { return nil }
        return StoredPurchase(
            userID: try row.string("user_id"), transactionID: try row.string("transaction_id"), originalTransactionID: original,
            productID: try row.string("product_id"), purchaseDate: try row.date("purchase_date"), originalPurchaseDate: originalPurchaseDate,
            expiresDate: try row.optionalDate("expires_date"), willRenew: true, autoRenewProductID: nil)
    }

    func transactionOwner(transactionID: String) async throws -> String? {
        try await sql.raw("SELECT user_id FROM app_store_transactions WHERE transaction_id = \(bind: transactionID)")
            .first().map { try $0.string("user_id") }
    }

    /// Stores a new subscription; `false` when one with the same original transaction id exists.
    func insertSubscription(_ snapshot: SubscriptionSnapshot, userID: String, environment: String, now: Date) async throws -> Bool {
        let billing = Self.billingColumns(snapshot.billing)
        return try await sql.raw(
            """
            INSERT INTO app_store_subscriptions (original_transaction_id, user_id, product_id, latest_transaction_id, purchase_date,
              expires_at, anchor, will_renew, auto_renew_product_id, billing_state, grace_expires_at, expired_at, revoked_at, environment,
              last_event_at, version, created_at, updated_at)
            VALUES (\(bind: snapshot.originalTransactionID), \(bind: userID), \(bind: snapshot.productID), \(bind: snapshot.latestTransactionID),
              \(bind: snapshot.purchaseDate.epochMillis), \(bind: snapshot.expiresAt.epochMillis), \(bind: snapshot.anchor.epochMillis),
              \(bind: snapshot.willRenew), \(bind: snapshot.autoRenewProductID), \(bind: billing.state), \(bind: billing.graceUntil),
              \(bind: snapshot.expiredAt?.epochMillis), \(bind: snapshot.revokedAt?.epochMillis), \(bind: environment),
              \(bind: snapshot.lastEventAt.epochMillis), 1, \(bind: now.epochMillis), \(bind: now.epochMillis))
            ON CONFLICT (original_transaction_id) DO NOTHING RETURNING original_transaction_id
            """
        ).first() != nil
    }

    /// Applies App Store data to the stored subscription: read, apply the pure lifecycle rules, then write with a
    /// compare-and-set on the version read (retried when another writer got there first).
    func applySubscriptionEvent(
        originalTransactionID: String, event: SubscriptionEvent, renewal: RenewalPreferences = .init(), signedAt: Date,
        tierOf: (String) -> PlanTier?, now: Date
    ) async throws -> SubscriptionUpdate {
        for _ in 0..<8 {
            guard let record = try await subscription(originalTransactionID: originalTransactionID) else { return .unknown }
            let change = SubscriptionLifecycle.apply(event, signedAt: signedAt, renewal: renewal, to: record.snapshot, tierOf: tierOf)
            switch change {
            case .stale: return .stale
            case .unchanged: return .unchanged
            case .updated(let next):
                if try await compareAndSetSubscription(next, expectedVersion: record.version, now: now) { return .updated }
            }
        }
        throw ChorusStoreError.conflict("subscription \(originalTransactionID) kept changing under concurrent updates")
    }

    private func compareAndSetSubscription(_ snapshot: SubscriptionSnapshot, expectedVersion: Int, now: Date) async throws -> Bool {
        let billing = Self.billingColumns(snapshot.billing)
        return try await sql.raw(
            """
            UPDATE app_store_subscriptions SET product_id = \(bind: snapshot.productID),
              latest_transaction_id = \(bind: snapshot.latestTransactionID), purchase_date = \(bind: snapshot.purchaseDate.epochMillis),
              expires_at = \(bind: snapshot.expiresAt.epochMillis), anchor = \(bind: snapshot.anchor.epochMillis),
              will_renew = \(bind: snapshot.willRenew), auto_renew_product_id = \(bind: snapshot.autoRenewProductID),
              billing_state = \(bind: billing.state), grace_expires_at = \(bind: billing.graceUntil),
              expired_at = \(bind: snapshot.expiredAt?.epochMillis), revoked_at = \(bind: snapshot.revokedAt?.epochMillis),
              last_event_at = \(bind: snapshot.lastEventAt.epochMillis), version = version + 1, updated_at = \(bind: now.epochMillis)
            WHERE original_transaction_id = \(bind: snapshot.originalTransactionID) AND version = \(bind: Int64(expectedVersion))
            RETURNING version
            """
        ).first() != nil
    }

    func subscription(originalTransactionID: String) async throws -> SubscriptionRecord? {
        try await sql.raw("SELECT * FROM app_store_subscriptions WHERE original_transaction_id = \(bind: originalTransactionID)")
            .first().map(Self.subscriptionRecord)
    }

    /// Every subscription the user holds or held.
    func subscriptions(userID: String) async throws -> [SubscriptionRecord] {
        try await reader.raw("SELECT * FROM app_store_subscriptions WHERE user_id = \(bind: userID)").all().map(Self.subscriptionRecord)
    }

    /// A refunded or revoked add-on pack: its unused calls are removed (`revoke`), or given back when Apple reverses
    /// the refund. Returns `false` for an unknown transaction or one already in that state.
    func setAddonPackRevoked(_ revoke: Bool, transactionID: String, terms: AddonTerms, now: Date) async throws -> Bool {
        try await writeTransaction { tx in
            let condition: SQLQueryString = revoke ? "revoked_at IS NULL" : "revoked_at IS NOT NULL"
            let row = try await tx.sql.raw(
                """
                UPDATE app_store_transactions SET revoked_at = \(bind: revoke ? now.epochMillis : nil)
                WHERE transaction_id = \(bind: transactionID) AND \(condition) RETURNING user_id
                """
            ).first()
            guard let row else { return false }
            let capacity: SQLQueryString = revoke ? "used" : "\(bind: Int64(terms.calls))"
            try await tx.sql.raw(
                """
                UPDATE quota_buckets SET capacity = \(capacity)
                WHERE user_id = \(bind: try row.string("user_id")) AND key = \(bind: QuotaBucket.addonKey(transactionID: transactionID))
                """
            ).run()
            return true
        }
    }

    // MARK: Notifications

    /// Stores a verified notification once and queues its application, in one transaction. Returns `false` when its
    /// UUID was seen before (a redelivery).
    func storeNotification(_ notification: VerifiedNotification, signedPayload: String, now: Date) async throws -> Bool {
        try await writeTransaction { tx in
            let inserted =
                try await tx.sql.raw(
                    """
                    INSERT INTO app_store_notifications (notification_uuid, notification_type, subtype, original_transaction_id, outcome,
                      received_at, signed_payload, signed_at, environment)
                    VALUES (\(bind: notification.notificationUUID), \(bind: notification.notificationType), \(bind: notification.subtype),
                      \(bind: notification.transaction?.originalTransactionID ?? notification.renewalInfo?.originalTransactionID), 'pending',
                      \(bind: now.epochMillis), \(bind: signedPayload), \(bind: notification.signedDate?.epochMillis),
                      \(bind: notification.environment?.rawValue))
                    ON CONFLICT (notification_uuid) DO NOTHING RETURNING notification_uuid
                    """
                ).first() != nil
            if inserted {
                try await tx.jobs.enqueueJob(kind: JobKind.applyAppStoreNotification, payload: notification.notificationUUID, runAt: now, now: now)
            }
            return inserted
        }
    }

    func storedNotification(uuid: String) async throws -> StoredNotification? {
        try await sql.raw(
            "SELECT notification_uuid, signed_payload, outcome FROM app_store_notifications WHERE notification_uuid = \(bind: uuid)"
        ).first().map { row in
            StoredNotification(
                uuid: try row.string("notification_uuid"), signedPayload: try row.optionalString("signed_payload") ?? "",
                outcome: try row.string("outcome"))
        }
    }

    /// Records what applying the notification did; only the first application is recorded.
    func markNotificationApplied(uuid: String, outcome: String, now: Date) async throws -> Bool {
        try await sql.raw(
            """
            UPDATE app_store_notifications SET outcome = \(bind: outcome), applied_at = \(bind: now.epochMillis)
            WHERE notification_uuid = \(bind: uuid) AND applied_at IS NULL RETURNING notification_uuid
            """
        ).first() != nil
    }

    // MARK: Rows

    static func subscriptionRecord(_ row: any SQLRow) throws -> SubscriptionRecord {
        SubscriptionRecord(
            userID: try row.string("user_id"), environment: try row.string("environment"), snapshot: try subscriptionSnapshot(row),
            version: try row.int("version"))
    }

    static func subscriptionSnapshot(_ row: any SQLRow) throws -> SubscriptionSnapshot {
        let billing: BillingState
        switch try row.string("billing_state") {
        case "grace": billing = .gracePeriod(until: try row.optionalDate("grace_expires_at") ?? row.date("expires_at"))
        case "retrying": billing = .retrying
        default: billing = .current
        }
        return SubscriptionSnapshot(
            originalTransactionID: try row.string("original_transaction_id"), productID: try row.string("product_id"),
            latestTransactionID: try row.string("latest_transaction_id"), purchaseDate: try row.date("purchase_date"),
            expiresAt: try row.date("expires_at"), anchor: try row.date("anchor"),
            willRenew: try row.decode(column: "will_renew", as: Bool.self), autoRenewProductID: try row.optionalString("auto_renew_product_id"),
            billing: billing, expiredAt: try row.optionalDate("expired_at"), revokedAt: try row.optionalDate("revoked_at"),
            lastEventAt: try row.date("last_event_at")
        )
    }

    private static func billingColumns(_ billing: BillingState) -> (state: String, graceUntil: Int64?) {
        switch billing {
        case .current: ("current", nil)
        case .gracePeriod(let until): ("grace", until.epochMillis)
        case .retrying: ("retrying", nil)
        }
    }
}
