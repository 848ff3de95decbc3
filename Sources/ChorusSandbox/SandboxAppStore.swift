import ChorusCore
import ChorusProviders
import Foundation
import NIOConcurrencyHelpers
import Vapor

/// A local App Store: it signs transactions, renewal information and App Store Server Notifications V2 the way Apple
/// does — compact JWS, ES256, an `x5c` chain of three certificates from ``AppStoreTestAuthority`` carrying Apple's OIDs —
/// and keeps each purchase's legacy receipt in the verifyReceipt emulator (``SandboxReceiptValidator``), so the server
/// verifies sandbox purchases with the same code as Apple's. The server trusts the authority's root only outside
/// production.
///
/// It remembers every subscription it sold: renewals continue the chain (same `originalTransactionId`, the next period),
/// and notifications carry the latest transaction and the subscription's renewal information as Apple's do.
public final class SandboxAppStore: Sendable {
    /// What kind of product a purchase is for.
    public enum PurchaseKind: Sendable, Equatable {
        /// An auto-renewable subscription whose period lasts `period` seconds.
        case autoRenewable(period: TimeInterval)
        /// A consumable (no expiry).
        case consumable
    }

    /// The bundle id transactions are issued for unless another is given.
    public let bundleID: String
    /// The environment written into transactions and notifications.
    public let environment: AppStoreEnvironment
    /// The `appAppleId` written into notifications, if any.
    public let appAppleID: Int64?
    /// The certificate authority that signs everything.
    public let authority: AppStoreTestAuthority
    /// The verifyReceipt emulator holding the purchases' receipts.
    public let receipts: SandboxReceiptValidator
    private let now: @Sendable () -> Date
    private let state: NIOLockedValueBox<State>

    /// Creates an App Store emulator.
    ///
    /// - Parameters:
    ///   - authority: Signs transactions, renewal information and notifications.
    ///   - receipts: Keeps the legacy receipts of the purchases.
    ///   - now: The clock used for purchase and signing dates.
    public init(
        authority: AppStoreTestAuthority,
        receipts: SandboxReceiptValidator,
        bundleID: String,
        environment: AppStoreEnvironment = .sandbox,
        appAppleID: Int64? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.authority = authority
        self.receipts = receipts
        self.bundleID = bundleID
        self.environment = environment
        self.appAppleID = appAppleID
        self.now = now
        // Transaction ids start from the clock, so transactions issued by separate processes for one server (the
        // server's own sandbox, `chorus sandbox appstore purchase`) do not collide in its database.
        let seed = UInt64(max(0, Date().timeIntervalSince1970 * 1_000)) * 1_000 + UInt64.random(in: 0..<1_000)
        self.state = NIOLockedValueBox(State(nextTransactionID: seed))
    }

    /// Issues and signs a transaction: a first purchase, or a renewal when `originalTransactionID` names a subscription
    /// this store sold. A renewal starts when the previous period ends (or now, if that is later) unless
    /// `purchaseDate` says otherwise, and inherits the subscription's `appAccountToken`. Dates are truncated to
    /// milliseconds, as the App Store encodes them.
    public func issueTransaction(
        productID: String,
        kind: PurchaseKind,
        bundleID: String? = nil,
        purchaseDate: Date? = nil,
        originalTransactionID: String? = nil,
        appAccountToken: UUID? = nil
    ) throws -> SandboxTransaction {
        let current = now()
        let previous = originalTransactionID.flatMap { latestRecord(originalTransactionID: $0) }
        let start = purchaseDate ?? previous?.payload.expiresDate.map { max(AppStoreMillis.date($0), current) } ?? current
        let purchaseMillis = AppStoreMillis.from(start)
        let transactionID = state.withLockedValue { state -> String in
            defer { state.nextTransactionID += 1 }
            return String(state.nextTransactionID)
        }
        let original = previous?.payload.originalTransactionId ?? transactionID
        var payload = TransactionPayload(
            transactionId: transactionID, originalTransactionId: original, bundleId: bundleID ?? previous?.payload.bundleId ?? self.bundleID,
            productId: productID, purchaseDate: purchaseMillis, originalPurchaseDate: previous?.payload.originalPurchaseDate ?? purchaseMillis,
            quantity: 1, type: "Consumable", inAppOwnershipType: "PURCHASED", signedDate: AppStoreMillis.from(current),
            environment: environment.rawValue, storefront: "USA", storefrontId: "143441", currency: "USD"
        )
        payload.appAccountToken = appAccountToken?.uuidString.lowercased() ?? previous?.payload.appAccountToken
        if case .autoRenewable(let period) = kind {
            payload.type = "Auto-Renewable Subscription"
            payload.expiresDate = purchaseMillis + Int64((period * 1000).rounded())
            payload.webOrderLineItemId = String(transactionID.dropFirst())
            payload.subscriptionGroupIdentifier = "21000000"
            payload.transactionReason = previous == nil ? "PURCHASE" : "RENEWAL"
        } else {
            payload.transactionReason = "PURCHASE"
        }
        let signed = try sign(payload)
        let receiptTransaction = SandboxReceiptTransaction(
            productID: productID, transactionID: transactionID, originalTransactionID: original, purchaseDate: start,
            expiresDate: payload.expiresDate.map(AppStoreMillis.date), isSubscription: payload.expiresDate != nil)
        let receipt =
            previous.flatMap { receipts.appendTransaction(receiptTransaction, toReceipt: $0.receiptData) }
            ?? receipts.issueReceipt(environment: environment, bundleID: payload.bundleId, transactions: [receiptTransaction])
        let record = TransactionRecord(payload: payload, kind: kind, signed: signed, receiptData: receipt)
        state.withLockedValue { state in
            state.transactions[transactionID] = record
            state.chains[original, default: []].append(transactionID)
            if previous == nil { state.renewals[original] = RenewalState(autoRenewProductID: productID) }
            state.renewals[original]?.billingRetry = false
            state.renewals[original]?.graceExpires = nil
            state.renewals[original]?.expirationIntent = nil
            if state.renewals[original]?.autoRenewProductID == nil || previous?.payload.productId != productID {
                state.renewals[original]?.autoRenewProductID = productID
            }
        }
        return record.transaction
    }

    /// Registers a transaction another process issued (the server's own emulator, an earlier `chorus sandbox appstore`
    /// run) as the latest of its chain, re-signed now, so notifications and renewals issued afterwards continue it.
    /// For a subscription the renewal information starts from `autoRenew` and `autoRenewProductID` (the product
    /// itself when `nil`). Dates are truncated to milliseconds.
    ///
    /// - Parameters:
    ///   - transactionID: The transaction's id (the chain's latest).
    ///   - originalTransactionID: The chain's first transaction (`transactionID` for a first purchase or a consumable).
    ///   - expiresDate: The end of the period; `nil` for a subscription is `purchaseDate` plus its period.
    ///   - originalPurchaseDate: The first transaction's purchase date; `nil` is `purchaseDate`.
    public func adoptTransaction(
        transactionID: String,
        originalTransactionID: String,
        productID: String,
        kind: PurchaseKind,
        purchaseDate: Date,
        originalPurchaseDate: Date? = nil,
        expiresDate: Date? = nil,
        appAccountToken: UUID? = nil,
        bundleID: String? = nil,
        autoRenew: Bool = true,
        autoRenewProductID: String? = nil
    ) throws -> SandboxTransaction {
        let current = now()
        let purchaseMillis = AppStoreMillis.from(purchaseDate)
        var payload = TransactionPayload(
            transactionId: transactionID, originalTransactionId: originalTransactionID, bundleId: bundleID ?? self.bundleID,
            productId: productID, purchaseDate: purchaseMillis, originalPurchaseDate: AppStoreMillis.from(originalPurchaseDate ?? purchaseDate),
            quantity: 1, type: "Consumable", inAppOwnershipType: "PURCHASED", signedDate: AppStoreMillis.from(current),
            environment: environment.rawValue, storefront: "USA", storefrontId: "143441", currency: "USD"
        )
        payload.appAccountToken = appAccountToken?.uuidString.lowercased()
        payload.transactionReason = transactionID == originalTransactionID ? "PURCHASE" : "RENEWAL"
        if case .autoRenewable(let period) = kind {
            payload.type = "Auto-Renewable Subscription"
            payload.expiresDate = AppStoreMillis.from(expiresDate ?? purchaseDate.addingTimeInterval(period))
            payload.webOrderLineItemId = String(transactionID.dropFirst())
            payload.subscriptionGroupIdentifier = "21000000"
        }
        let signed = try sign(payload)
        let receipt = receipts.issueReceipt(
            environment: environment, bundleID: payload.bundleId,
            transactions: [
                SandboxReceiptTransaction(
                    productID: productID, transactionID: transactionID, originalTransactionID: originalTransactionID,
                    purchaseDate: AppStoreMillis.date(purchaseMillis), expiresDate: payload.expiresDate.map(AppStoreMillis.date),
                    isSubscription: payload.expiresDate != nil)
            ])
        let record = TransactionRecord(payload: payload, kind: kind, signed: signed, receiptData: receipt)
        state.withLockedValue { state in
            state.transactions[transactionID] = record
            state.chains[originalTransactionID, default: []].removeAll { $0 == transactionID }
            state.chains[originalTransactionID, default: []].append(transactionID)
            if case .autoRenewable = kind {
                state.renewals[originalTransactionID] = RenewalState(autoRenew: autoRenew, autoRenewProductID: autoRenewProductID ?? productID)
            }
        }
        return record.transaction
    }

    /// The latest transaction of the subscription (or purchase) whose first transaction is `originalTransactionID`.
    public func latestTransaction(originalTransactionID: String) -> SandboxTransaction? {
        latestRecord(originalTransactionID: originalTransactionID)?.transaction
    }

    private func latestRecord(originalTransactionID: String) -> TransactionRecord? {
        state.withLockedValue { state in
            state.chains[originalTransactionID]?.last.flatMap { state.transactions[$0] }
        }
    }

    /// Signs an App Store Server Notification V2 and returns its `signedPayload`. For a subscription, `data` carries the
    /// transaction and the subscription's renewal information (`signedRenewalInfo`), as Apple's notifications do.
    ///
    /// - Parameters:
    ///   - type: The `notificationType`, e.g. `SUBSCRIBED`, `DID_RENEW`, `EXPIRED`, `REFUND`.
    ///   - subtype: The `subtype`, e.g. `INITIAL_BUY`, or `nil`.
    ///   - transaction: The transaction carried as `data.signedTransactionInfo`, if any.
    public func signNotification(
        type: String,
        subtype: String?,
        transaction: SandboxTransaction?,
        notificationUUID: UUID = UUID()
    ) throws -> String {
        let renewalInfo = try transaction.flatMap { transaction -> String? in
            guard case .autoRenewable = transaction.kind else { return nil }
            return try signRenewalInfo(originalTransactionID: transaction.originalTransactionID)
        }
        let payload = NotificationPayload(
            notificationType: type,
            subtype: subtype,
            notificationUUID: notificationUUID.uuidString.lowercased(),
            data: NotificationData(
                appAppleId: appAppleID,
                bundleId: transaction?.bundleID ?? bundleID,
                bundleVersion: "1",
                environment: environment.rawValue,
                signedTransactionInfo: transaction?.signedTransaction,
                signedRenewalInfo: renewalInfo,
                status: transaction.flatMap { Self.subscriptionStatus(type: type, subtype: subtype, transaction: $0) }
            ),
            version: "2.0",
            signedDate: AppStoreMillis.from(now())
        )
        return try sign(payload)
    }

    /// Signs the subscription's current renewal information (`JWSRenewalInfoDecodedPayload`).
    public func signRenewalInfo(originalTransactionID: String) throws -> String? {
        let found = state.withLockedValue { state -> (TransactionRecord, RenewalState, Int64)? in
            guard let chain = state.chains[originalTransactionID], let latestID = chain.last, let latest = state.transactions[latestID],
                let renewal = state.renewals[originalTransactionID]
            else { return nil }
            let firstOfProduct = chain.compactMap { state.transactions[$0] }.last { $0.payload.productId != latest.payload.productId }
            let recentStart = firstOfProduct == nil ? latest.payload.originalPurchaseDate : latest.payload.purchaseDate
            return (latest, renewal, recentStart)
        }
        guard let (latest, renewal, recentStart) = found else { return nil }
        let payload = RenewalInfoPayload(
            originalTransactionId: originalTransactionID, productId: latest.payload.productId,
            autoRenewProductId: renewal.autoRenewProductID ?? latest.payload.productId, autoRenewStatus: renewal.autoRenew ? 1 : 0,
            isInBillingRetryPeriod: renewal.billingRetry ? true : nil, gracePeriodExpiresDate: renewal.graceExpires,
            expirationIntent: renewal.expirationIntent, renewalDate: latest.payload.expiresDate, recentSubscriptionStartDate: recentStart,
            signedDate: AppStoreMillis.from(now()), environment: environment.rawValue
        )
        return try authority.sign(payload: Self.encoder.encode(payload))
    }

    /// Re-signs the latest transaction of a subscription or purchase with `revocationDate` set (after a refund) or
    /// cleared (a reversed refund), and marks it in the receipt.
    func setRevoked(_ revoked: Bool, originalTransactionID: String) throws -> SandboxTransaction? {
        guard var record = latestRecord(originalTransactionID: originalTransactionID) else { return nil }
        let at = now()
        record.payload.revocationDate = revoked ? AppStoreMillis.from(at) : nil
        record.payload.revocationReason = revoked ? 0 : nil
        record.payload.signedDate = AppStoreMillis.from(at)
        record.signed = try sign(record.payload)
        if revoked { receipts.cancel(transactionID: record.payload.transactionId, at: at) }
        let updated = record
        state.withLockedValue { $0.transactions[updated.payload.transactionId] = updated }
        return record.transaction
    }

    /// Re-signs the latest transaction of a subscription with its period extended by `seconds` (`RENEWAL_EXTENDED`).
    func extend(originalTransactionID: String, by seconds: TimeInterval) throws -> SandboxTransaction? {
        guard var record = latestRecord(originalTransactionID: originalTransactionID), let expires = record.payload.expiresDate else {
            return nil
        }
        record.payload.expiresDate = expires + Int64((seconds * 1000).rounded())
        record.payload.signedDate = AppStoreMillis.from(now())
        record.signed = try sign(record.payload)
        let updated = record
        state.withLockedValue { $0.transactions[updated.payload.transactionId] = updated }
        return record.transaction
    }

    private func updateRenewal(_ originalTransactionID: String, _ change: (inout RenewalState) -> Void) {
        state.withLockedValue { state in
            if var renewal = state.renewals[originalTransactionID] {
                change(&renewal)
                state.renewals[originalTransactionID] = renewal
            }
        }
    }

    // MARK: - Control routes

    /// Mounts `POST /app-store/purchases` and `POST /app-store/notifications` on `routes`.
    public func register(on routes: any RoutesBuilder) {
        let appStore = routes.grouped("app-store")
        appStore.post("purchases") { request async -> Response in
            self.handlePurchase(request)
        }
        appStore.post("notifications") { request async -> Response in
            self.handleNotification(request)
        }
    }

    /// The longest subscription period, extension or grace period the emulator accepts: ten years.
    public static let longestPeriodSeconds: Double = 10 * 366 * 86_400

    /// A period from a request body: positive, finite and at most ``longestPeriodSeconds`` (`1e300` would overflow
    /// every date computed from it).
    public static func isValidPeriod(_ seconds: Double) -> Bool { seconds > 0 && seconds <= longestPeriodSeconds }

    private func handlePurchase(_ request: Request) -> Response {
        let body: PurchaseRequestBody
        do {
            body = try SandboxJSON.decode(PurchaseRequestBody.self, from: request)
        } catch {
            return SandboxJSON.detail(
                "Body must be {\"product_id\": ..., \"kind\": \"auto_renewable\"|\"consumable\", \"period_seconds\": n}.",
                status: .badRequest
            )
        }
        let kind: PurchaseKind
        switch (body.kind, body.periodSeconds) {
        case ("consumable", _):
            kind = .consumable
        case ("auto_renewable", let period?) where Self.isValidPeriod(period):
            kind = .autoRenewable(period: period)
        case ("auto_renewable", _):
            return SandboxJSON.detail(
                "period_seconds must be a positive number of at most \(Int(Self.longestPeriodSeconds)) for auto_renewable.",
                status: .badRequest)
        default:
            return SandboxJSON.detail("kind must be auto_renewable or consumable.", status: .badRequest)
        }
        if let original = body.originalTransactionID, latestTransaction(originalTransactionID: original) == nil {
            return SandboxJSON.detail("Unknown original_transaction_id.", status: .notFound)
        }
        do {
            let transaction = try issueTransaction(
                productID: body.productID, kind: kind, bundleID: body.bundleID,
                originalTransactionID: body.originalTransactionID, appAccountToken: body.appAccountToken
            )
            return SandboxJSON.response(PurchaseResponseBody(transaction), status: .created)
        } catch {
            return SandboxJSON.detail("Signing failed: \(error)", status: .internalServerError)
        }
    }

    private func handleNotification(_ request: Request) -> Response {
        let body: SandboxNotificationOrder
        do {
            body = try SandboxJSON.decode(SandboxNotificationOrder.self, from: request)
        } catch {
            return SandboxJSON.detail(
                "Body must be {\"notification_type\": ..., \"subtype\": ..., \"original_transaction_id\": ..., "
                    + "\"product_id\": ..., \"period_seconds\": ..., \"grace_period_seconds\": ...}.",
                status: .badRequest
            )
        }
        do {
            let (signed, uuid, transaction) = try notify(body)
            return SandboxJSON.response(
                NotificationResponseBody(
                    signedPayload: signed, notificationUUID: uuid.uuidString.lowercased(),
                    transactionID: transaction?.transactionID, originalTransactionID: transaction?.originalTransactionID
                ),
                status: .created
            )
        } catch let error as Abort {
            return SandboxJSON.detail(error.reason, status: error.status)
        } catch {
            return SandboxJSON.detail("Signing failed: \(error)", status: .internalServerError)
        }
    }

    /// Does what the App Store does before it sends the notification `order` describes and returns its
    /// `signedPayload`.
    ///
    /// - Throws: `Abort` (404) for an unknown original transaction id, (400) for an upgrade without a product.
    public func signNotification(for order: SandboxNotificationOrder) throws -> String {
        try notify(order).signedPayload
    }

    private func notify(_ body: SandboxNotificationOrder) throws -> (signedPayload: String, uuid: UUID, transaction: SandboxTransaction?) {
        let transaction = try transactionForNotification(body)
        let uuid = UUID()
        let signed = try signNotification(type: body.notificationType, subtype: body.subtype, transaction: transaction, notificationUUID: uuid)
        return (signed, uuid, transaction)
    }

    /// What the App Store does before it notifies: purchases, renewals and upgrades issue a transaction; refunds re-sign
    /// the latest one revoked; billing failures, renewal changes and expiries update the renewal information; the other
    /// types carry the latest transaction as it is.
    func transactionForNotification(_ body: SandboxNotificationOrder) throws -> SandboxTransaction? {
        for (name, value) in [("period_seconds", body.periodSeconds), ("grace_period_seconds", body.gracePeriodSeconds)] {
            if let value, !Self.isValidPeriod(value) {
                throw Abort(.badRequest, reason: "\(name) must be a positive number of at most \(Int(Self.longestPeriodSeconds)).")
            }
        }
        let latest = body.originalTransactionID.flatMap { latestTransaction(originalTransactionID: $0) }
        if latest == nil, body.originalTransactionID != nil { throw Abort(.notFound, reason: "Unknown original_transaction_id.") }
        let type = body.notificationType
        let original = latest?.originalTransactionID
        switch type {
        case "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED", "ONE_TIME_CHARGE":
            break
        case "DID_CHANGE_RENEWAL_PREF" where body.subtype == "UPGRADE":
            guard let latest, let product = body.productID else {
                throw Abort(.badRequest, reason: "An upgrade needs original_transaction_id and product_id.")
            }
            let period = body.periodSeconds ?? latest.kind.period ?? 30 * 86_400
            return try issueTransaction(
                productID: product, kind: .autoRenewable(period: period), purchaseDate: now(), originalTransactionID: latest.originalTransactionID)
        case "DID_CHANGE_RENEWAL_PREF":
            if let original, let product = body.productID { updateRenewal(original) { $0.autoRenewProductID = product } }
            return latest
        case "DID_CHANGE_RENEWAL_STATUS":
            if let original { updateRenewal(original) { $0.autoRenew = body.subtype != "AUTO_RENEW_DISABLED" } }
            return latest
        case "DID_FAIL_TO_RENEW":
            if let original, let expires = latest?.expiresDate {
                let grace = body.subtype == "GRACE_PERIOD" ? expires.addingTimeInterval(body.gracePeriodSeconds ?? 6 * 86_400) : nil
                updateRenewal(original) {
                    $0.billingRetry = true
                    $0.graceExpires = grace.map(AppStoreMillis.from)
                }
            }
            return latest
        case "GRACE_PERIOD_EXPIRED":
            if let original { updateRenewal(original) { $0.graceExpires = nil } }
            return latest
        case "EXPIRED":
            if let original {
                updateRenewal(original) {
                    $0.autoRenew = false
                    $0.expirationIntent = body.subtype == "BILLING_RETRY" ? 2 : 1
                }
                receipts.setAutoRenew(false, originalTransactionID: original)
            }
            return latest
        case "REFUND", "REVOKE", "REFUND_REVERSED":
            guard let original else { return nil }
            return try setRevoked(type != "REFUND_REVERSED", originalTransactionID: original)
        case "RENEWAL_EXTENDED":
            guard let original else { return nil }
            return try extend(originalTransactionID: original, by: body.periodSeconds ?? 86_400)
        default:
            return latest
        }
        // A new transaction: the next period of the subscription, a resubscription, or a new purchase.
        guard let productID = body.productID ?? latest?.productID else { return nil }
        let kind: PurchaseKind
        if let period = body.periodSeconds, period > 0 {
            kind = .autoRenewable(period: period)
        } else if let latest {
            kind = latest.kind
        } else {
            kind = type == "ONE_TIME_CHARGE" ? .consumable : .autoRenewable(period: 30 * 86_400)
        }
        return try issueTransaction(productID: productID, kind: kind, originalTransactionID: original)
    }

    // MARK: - Signing

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }()

    private func sign(_ payload: some Encodable) throws -> String {
        try authority.sign(payload: Self.encoder.encode(payload))
    }

    /// Apple's `data.status`: 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
    private static func subscriptionStatus(type: String, subtype: String?, transaction: SandboxTransaction) -> Int? {
        guard case .autoRenewable = transaction.kind else { return nil }
        switch type {
        case "EXPIRED": return 2
        case "GRACE_PERIOD_EXPIRED": return 3
        case "DID_FAIL_TO_RENEW": return subtype == "GRACE_PERIOD" ? 4 : 3
        case "REFUND", "REVOKE": return 5
        default: return 1
        }
    }

    struct State {
        var nextTransactionID: UInt64
        var transactions: [String: TransactionRecord] = [:]
        /// Transaction ids by original transaction id, oldest first.
        var chains: [String: [String]] = [:]
        /// Renewal information by original transaction id (subscriptions only).
        var renewals: [String: RenewalState] = [:]
    }

    struct RenewalState {
        var autoRenew = true
        var autoRenewProductID: String?
        var billingRetry = false
        var graceExpires: Int64?
        var expirationIntent: Int?
    }

    struct TransactionRecord {
        var payload: TransactionPayload
        let kind: PurchaseKind
        var signed: String
        let receiptData: String

        var transaction: SandboxTransaction {
            SandboxTransaction(
                transactionID: payload.transactionId, originalTransactionID: payload.originalTransactionId,
                productID: payload.productId, bundleID: payload.bundleId, kind: kind,
                purchaseDate: AppStoreMillis.date(payload.purchaseDate), expiresDate: payload.expiresDate.map(AppStoreMillis.date),
                signedTransaction: signed, receiptData: receiptData
            )
        }
    }
}

extension SandboxAppStore.PurchaseKind {
    /// The subscription period, for auto-renewable subscriptions.
    var period: TimeInterval? {
        if case .autoRenewable(let period) = self { return period }
        return nil
    }
}

/// A transaction issued by ``SandboxAppStore``.
public struct SandboxTransaction: Sendable, Equatable {
    /// The numeric transaction id.
    public let transactionID: String
    /// The id of the first transaction of the subscription (itself for a first purchase).
    public let originalTransactionID: String
    /// The product purchased.
    public let productID: String
    /// The app the purchase belongs to.
    public let bundleID: String
    /// Subscription or consumable.
    public let kind: SandboxAppStore.PurchaseKind
    /// When it was bought (millisecond precision).
    public let purchaseDate: Date
    /// When the subscription period ends; `nil` for consumables.
    public let expiresDate: Date?
    /// The StoreKit 2 signed transaction (JWS).
    public let signedTransaction: String
    /// The purchase's legacy receipt (opaque; verified through the verifyReceipt emulator).
    public let receiptData: String
}

/// App Store dates: integer milliseconds since 1970.
enum AppStoreMillis {
    /// Milliseconds since 1970, clamped to what an `Int64` holds (a date past the year 292 million is no date).
    static func from(_ date: Date) -> Int64 {
        Int64(clampingRounded: date.timeIntervalSince1970 * 1000)
    }

    static func date(_ millis: Int64) -> Date {
        Date(timeIntervalSince1970: Double(millis) / 1000)
    }
}

// MARK: - Wire types

/// Apple's `JWSTransactionDecodedPayload` (the fields the sandbox produces).
struct TransactionPayload: Codable, Equatable {
    var transactionId: String
    var originalTransactionId: String
    var webOrderLineItemId: String?
    var bundleId: String
    var productId: String
    var subscriptionGroupIdentifier: String?
    var purchaseDate: Int64
    var originalPurchaseDate: Int64
    var expiresDate: Int64?
    var quantity: Int
    var type: String
    var appAccountToken: String?
    var inAppOwnershipType: String
    var signedDate: Int64
    var revocationDate: Int64?
    var revocationReason: Int?
    var environment: String
    var transactionReason: String?
    var storefront: String?
    var storefrontId: String?
    var currency: String?

    init(
        transactionId: String, originalTransactionId: String, bundleId: String, productId: String, purchaseDate: Int64,
        originalPurchaseDate: Int64, quantity: Int, type: String, inAppOwnershipType: String, signedDate: Int64,
        environment: String, storefront: String?, storefrontId: String?, currency: String?
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.bundleId = bundleId
        self.productId = productId
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.quantity = quantity
        self.type = type
        self.inAppOwnershipType = inAppOwnershipType
        self.signedDate = signedDate
        self.environment = environment
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.currency = currency
    }

    enum CodingKeys: String, CodingKey {
        case transactionId
        case originalTransactionId
        case webOrderLineItemId
        case bundleId
        case productId
        case subscriptionGroupIdentifier
        case purchaseDate
        case originalPurchaseDate
        case expiresDate
        case quantity
        case type
        case appAccountToken
        case inAppOwnershipType
        case signedDate
        case revocationDate
        case revocationReason
        case environment
        case transactionReason
        case storefront
        case storefrontId
        case currency
    }
}

/// Apple's `JWSRenewalInfoDecodedPayload` (the fields the sandbox produces).
struct RenewalInfoPayload: Codable, Equatable {
    let originalTransactionId: String
    let productId: String
    let autoRenewProductId: String
    let autoRenewStatus: Int
    let isInBillingRetryPeriod: Bool?
    let gracePeriodExpiresDate: Int64?
    let expirationIntent: Int?
    let renewalDate: Int64?
    let recentSubscriptionStartDate: Int64
    let signedDate: Int64
    let environment: String

    enum CodingKeys: String, CodingKey {
        case originalTransactionId
        case productId
        case autoRenewProductId
        case autoRenewStatus
        case isInBillingRetryPeriod
        case gracePeriodExpiresDate
        case expirationIntent
        case renewalDate
        case recentSubscriptionStartDate
        case signedDate
        case environment
    }
}

/// Apple's `responseBodyV2DecodedPayload`.
struct NotificationPayload: Codable, Equatable {
    let notificationType: String
    let subtype: String?
    let notificationUUID: String
    let data: NotificationData?
    let version: String
    let signedDate: Int64

    enum CodingKeys: String, CodingKey {
        case notificationType
        case subtype
        case notificationUUID
        case data
        case version
        case signedDate
    }
}

/// Apple's notification `data` object.
struct NotificationData: Codable, Sendable, Equatable {
    let appAppleId: Int64?
    let bundleId: String
    let bundleVersion: String?
    let environment: String
    let signedTransactionInfo: String?
    let signedRenewalInfo: String?
    let status: Int?

    enum CodingKeys: String, CodingKey {
        case appAppleId
        case bundleId
        case bundleVersion
        case environment
        case signedTransactionInfo
        case signedRenewalInfo
        case status
    }
}

struct PurchaseRequestBody: Decodable {
    let productID: String
    let kind: String
    let periodSeconds: Double?
    let bundleID: String?
    let originalTransactionID: String?
    let appAccountToken: UUID?

    enum CodingKeys: String, CodingKey {
        case productID = "product_id"
        case kind
        case periodSeconds = "period_seconds"
        case bundleID = "bundle_id"
        case originalTransactionID = "original_transaction_id"
        case appAccountToken = "app_account_token"
    }
}

struct PurchaseResponseBody: Encodable {
    let transactionID: String
    let originalTransactionID: String
    let productID: String
    let purchaseDate: Date
    let expiresDate: Date?
    let signedTransaction: String
    let receiptData: String

    init(_ transaction: SandboxTransaction) {
        transactionID = transaction.transactionID
        originalTransactionID = transaction.originalTransactionID
        productID = transaction.productID
        purchaseDate = transaction.purchaseDate
        expiresDate = transaction.expiresDate
        signedTransaction = transaction.signedTransaction
        receiptData = transaction.receiptData
    }

    enum CodingKeys: String, CodingKey {
        case transactionID = "transaction_id"
        case originalTransactionID = "original_transaction_id"
        case productID = "product_id"
        case purchaseDate = "purchase_date"
        case expiresDate = "expires_date"
        case signedTransaction = "signed_transaction"
        case receiptData = "receipt_data"
    }
}

/// What the App Store should notify (the JSON of `POST /app-store/notifications`).
public struct SandboxNotificationOrder: Codable, Sendable, Equatable {
    /// The `notificationType`, e.g. `DID_RENEW`, `DID_FAIL_TO_RENEW`, `EXPIRED`, `REFUND`.
    public var notificationType: String
    /// The `subtype`, e.g. `GRACE_PERIOD`, `AUTO_RENEW_DISABLED`, `UPGRADE`.
    public var subtype: String?
    /// The subscription (or purchase) the notification is about.
    public var originalTransactionID: String?
    /// The product of a new purchase, an upgrade or a downgrade.
    public var productID: String?
    /// The period of a new or upgraded subscription (or the extension of RENEWAL_EXTENDED), in seconds.
    public var periodSeconds: Double?
    /// The billing grace period of DID_FAIL_TO_RENEW/GRACE_PERIOD, in seconds (6 days by default).
    public var gracePeriodSeconds: Double?

    /// Creates an order from its fields.
    public init(
        notificationType: String, subtype: String? = nil, originalTransactionID: String? = nil, productID: String? = nil,
        periodSeconds: Double? = nil, gracePeriodSeconds: Double? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.periodSeconds = periodSeconds
        self.gracePeriodSeconds = gracePeriodSeconds
    }

    enum CodingKeys: String, CodingKey {
        case notificationType = "notification_type"
        case subtype
        case originalTransactionID = "original_transaction_id"
        case productID = "product_id"
        case periodSeconds = "period_seconds"
        case gracePeriodSeconds = "grace_period_seconds"
    }
}

struct NotificationResponseBody: Encodable {
    let signedPayload: String
    let notificationUUID: String
    let transactionID: String?
    let originalTransactionID: String?

    enum CodingKeys: String, CodingKey {
        case signedPayload = "signed_payload"
        case notificationUUID = "notification_uuid"
        case transactionID = "transaction_id"
        case originalTransactionID = "original_transaction_id"
    }
}

extension SandboxAppStore {
    /// An App Store emulator with a fresh in-memory certificate authority and receipt emulator (no shared secret):
    /// for benchmarks and tests that do not verify purchases against a server's trust store.
    public static func ephemeral(bundleID: String, now: @escaping @Sendable () -> Date = { Date() }) throws -> SandboxAppStore {
        SandboxAppStore(
            authority: try AppStoreTestAuthority.generate(), receipts: SandboxReceiptValidator(sharedSecret: nil, bundleID: bundleID, now: now),
            bundleID: bundleID, now: now)
    }
}
