import ChorusProviders
import Foundation
import JWTKit
import NIOConcurrencyHelpers
import Vapor

/// A local stand-in for the App Store's signing of transactions and server notifications.
///
/// Transactions and notifications are JWS with Apple's field names (`JWSTransactionDecodedPayload`,
/// `responseBodyV2DecodedPayload`), but signed with a shared HS256 key instead of Apple's ES256
/// certificate chain; ``SandboxPurchaseVerifier`` checks them with the same key. A legacy receipt is
/// stood in for by base64 JSON `{"signed_transactions": [...]}`.
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
    private let signingKey: String
    private let now: @Sendable () -> Date
    private let state = NIOLockedValueBox(State())

    /// Creates an App Store emulator.
    ///
    /// - Parameters:
    ///   - signingKey: The HS256 secret shared with ``SandboxPurchaseVerifier``.
    ///   - now: The clock used for purchase and signing dates.
    public init(
        signingKey: String,
        bundleID: String,
        environment: AppStoreEnvironment = .sandbox,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.signingKey = signingKey
        self.bundleID = bundleID
        self.environment = environment
        self.now = now
    }

    /// Issues and signs a transaction: a first purchase, or a renewal when `originalTransactionID` names an
    /// earlier one. Dates are truncated to milliseconds, as the App Store encodes them.
    public func issueTransaction(
        productID: String,
        kind: PurchaseKind,
        bundleID: String? = nil,
        purchaseDate: Date? = nil,
        originalTransactionID: String? = nil,
        appAccountToken: UUID? = nil
    ) async throws -> SandboxTransaction {
        let purchaseMillis = AppStoreMillis.from(purchaseDate ?? now())
        let (transactionID, chain) = state.withLockedValue { state -> (String, [String]) in
            let id = String(state.nextTransactionID)
            state.nextTransactionID += 1
            let original = originalTransactionID ?? id
            return (id, (state.chains[original] ?? []) + [id])
        }
        let original = originalTransactionID ?? transactionID
        let originalPurchase = state.withLockedValue { state in
            state.chains[original]?.first.flatMap { state.transactions[$0]?.payload.purchaseDate }
        }
        var payload = TransactionPayload(
            transactionId: transactionID, originalTransactionId: original, bundleId: bundleID ?? self.bundleID,
            productId: productID, purchaseDate: purchaseMillis, originalPurchaseDate: originalPurchase ?? purchaseMillis,
            quantity: 1, type: "Consumable", inAppOwnershipType: "PURCHASED", signedDate: AppStoreMillis.from(now()),
            environment: environment.rawValue, storefront: "USA", storefrontId: "143441", currency: "USD"
        )
        payload.appAccountToken = appAccountToken?.uuidString.lowercased()
        if case .autoRenewable(let period) = kind {
            payload.type = "Auto-Renewable Subscription"
            payload.expiresDate = purchaseMillis + Int64((period * 1000).rounded())
            payload.webOrderLineItemId = String(Int64(transactionID).map { $0 + 1_000_000_000 } ?? 0)
            payload.subscriptionGroupIdentifier = "21000000"
            payload.transactionReason = originalTransactionID == nil ? "PURCHASE" : "RENEWAL"
        } else {
            payload.transactionReason = "PURCHASE"
        }
        let signed = try await sign(payload)
        let record = TransactionRecord(payload: payload, kind: kind, signed: signed)
        let receipt = try receiptData(
            for: chain.compactMap { id in
                id == transactionID ? signed : state.withLockedValue { $0.transactions[id]?.signed }
            })
        state.withLockedValue { state in
            state.transactions[transactionID] = record
            state.chains[original, default: []].append(transactionID)
        }
        return record.transaction(receiptData: receipt)
    }

    /// The latest transaction of the subscription (or purchase) whose first transaction is `originalTransactionID`.
    public func latestTransaction(originalTransactionID: String) -> SandboxTransaction? {
        state.withLockedValue { state in
            guard let id = state.chains[originalTransactionID]?.last, let record = state.transactions[id] else { return nil }
            let chain = state.chains[originalTransactionID] ?? []
            let receipt = try? Self.encodeReceipt(chain.compactMap { state.transactions[$0]?.signed })
            return record.transaction(receiptData: receipt ?? "")
        }
    }

    /// Signs an App Store Server Notification V2 and returns its `signedPayload`.
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
    ) async throws -> String {
        let payload = NotificationPayload(
            notificationType: type,
            subtype: subtype,
            notificationUUID: notificationUUID.uuidString.lowercased(),
            data: NotificationData(
                appAppleId: 1_234_567_890,
                bundleId: transaction?.bundleID ?? bundleID,
                bundleVersion: "1",
                environment: environment.rawValue,
                signedTransactionInfo: transaction?.signedTransaction,
                status: transaction.flatMap { Self.subscriptionStatus(type: type, transaction: $0) }
            ),
            version: "2.0",
            signedDate: AppStoreMillis.from(now())
        )
        return try await sign(payload)
    }

    /// Re-signs a known transaction with `revocationDate` set (what the App Store sends after a refund).
    func revokedTransaction(_ transaction: SandboxTransaction, at date: Date) async throws -> SandboxTransaction {
        guard var record = state.withLockedValue({ $0.transactions[transaction.transactionID] }) else { return transaction }
        record.payload.revocationDate = AppStoreMillis.from(date)
        record.payload.revocationReason = 0
        record.payload.signedDate = AppStoreMillis.from(now())
        record.signed = try await sign(record.payload)
        let updated = record
        state.withLockedValue { $0.transactions[transaction.transactionID] = updated }
        return record.transaction(receiptData: try receiptData(for: [record.signed]))
    }

    // MARK: - Control routes

    /// Mounts `POST /app-store/purchases` and `POST /app-store/notifications` on `routes`.
    public func register(on routes: any RoutesBuilder) {
        let appStore = routes.grouped("app-store")
        appStore.post("purchases") { request async -> Response in
            await self.handlePurchase(request)
        }
        appStore.post("notifications") { request async -> Response in
            await self.handleNotification(request)
        }
    }

    private func handlePurchase(_ request: Request) async -> Response {
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
        case ("auto_renewable", let period?) where period > 0:
            kind = .autoRenewable(period: period)
        case ("auto_renewable", _):
            return SandboxJSON.detail("period_seconds must be a positive number for auto_renewable.", status: .badRequest)
        default:
            return SandboxJSON.detail("kind must be auto_renewable or consumable.", status: .badRequest)
        }
        do {
            let transaction = try await issueTransaction(
                productID: body.productID, kind: kind, bundleID: body.bundleID,
                originalTransactionID: body.originalTransactionID, appAccountToken: body.appAccountToken
            )
            return SandboxJSON.response(PurchaseResponseBody(transaction), status: .created)
        } catch {
            return SandboxJSON.detail("Signing failed: \(error)", status: .internalServerError)
        }
    }

    private func handleNotification(_ request: Request) async -> Response {
        let body: NotificationRequestBody
        do {
            body = try SandboxJSON.decode(NotificationRequestBody.self, from: request)
        } catch {
            return SandboxJSON.detail(
                "Body must be {\"notification_type\": ..., \"subtype\": ..., \"original_transaction_id\": ..., "
                    + "\"product_id\": ..., \"period_seconds\": ...}.",
                status: .badRequest
            )
        }
        do {
            let transaction = try await transactionForNotification(body)
            let uuid = UUID()
            let signed = try await signNotification(
                type: body.notificationType, subtype: body.subtype, transaction: transaction, notificationUUID: uuid
            )
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

    /// New purchases and renewals issue a transaction; other notifications carry the latest one of the chain.
    private func transactionForNotification(_ body: NotificationRequestBody) async throws -> SandboxTransaction? {
        let latest = body.originalTransactionID.flatMap { latestTransaction(originalTransactionID: $0) }
        let issuesTransaction = ["SUBSCRIBED", "DID_RENEW", "ONE_TIME_CHARGE"].contains(body.notificationType)
        if !issuesTransaction, let latest {
            if ["REFUND", "REVOKE"].contains(body.notificationType) {
                return try await revokedTransaction(latest, at: now())
            }
            return latest
        }
        guard let productID = body.productID ?? latest?.productID else {
            if latest == nil, body.originalTransactionID != nil {
                throw Abort(.notFound, reason: "Unknown original_transaction_id.")
            }
            return nil
        }
        let kind: PurchaseKind
        if let period = body.periodSeconds, period > 0 {
            kind = .autoRenewable(period: period)
        } else if let latest {
            kind = latest.kind
        } else {
            kind = body.notificationType == "ONE_TIME_CHARGE" ? .consumable : .autoRenewable(period: 30 * 86_400)
        }
        let original = latest?.originalTransactionID ?? (body.notificationType == "DID_RENEW" ? body.originalTransactionID : nil)
        return try await issueTransaction(productID: productID, kind: kind, originalTransactionID: original)
    }

    // MARK: - Signing

    private func sign(_ payload: some JWTPayload) async throws -> String {
        let keys = await JWTKeyCollection().add(hmac: AppStoreSigningKey.hmacKey(signingKey), digestAlgorithm: .sha256)
        return try await keys.sign(payload)
    }

    private func receiptData(for signedTransactions: [String]) throws -> String {
        try Self.encodeReceipt(signedTransactions)
    }

    static func encodeReceipt(_ signedTransactions: [String]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return try encoder.encode(ReceiptBody(signedTransactions: signedTransactions)).base64EncodedString()
    }

    private static func subscriptionStatus(type: String, transaction: SandboxTransaction) -> Int? {
        guard case .autoRenewable = transaction.kind else { return nil }
        switch type {
        case "EXPIRED", "GRACE_PERIOD_EXPIRED": return 2
        case "DID_FAIL_TO_RENEW": return 3
        case "REFUND", "REVOKE": return 5
        default: return 1
        }
    }

    struct State {
        var nextTransactionID: UInt64 = 2_000_000_000_000_001
        var transactions: [String: TransactionRecord] = [:]
        /// Transaction ids by original transaction id, oldest first.
        var chains: [String: [String]] = [:]
    }

    struct TransactionRecord {
        var payload: TransactionPayload
        let kind: PurchaseKind
        var signed: String

        func transaction(receiptData: String) -> SandboxTransaction {
            SandboxTransaction(
                transactionID: payload.transactionId, originalTransactionID: payload.originalTransactionId,
                productID: payload.productId, bundleID: payload.bundleId, kind: kind,
                purchaseDate: AppStoreMillis.date(payload.purchaseDate), expiresDate: payload.expiresDate.map(AppStoreMillis.date),
                signedTransaction: signed, receiptData: receiptData
            )
        }
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
    /// The legacy receipt stand-in: base64 JSON `{"signed_transactions": [...]}` of the subscription's transactions.
    public let receiptData: String
}

/// The HS256 key shared by ``SandboxAppStore`` and ``SandboxPurchaseVerifier``: SHA-256 of the configured
/// secret, so any secret yields a full-length (32-byte) key.
enum AppStoreSigningKey {
    static func hmacKey(_ secret: String) -> HMACKey {
        HMACKey(key: SymmetricKey(data: SHA256.hash(data: Data(secret.utf8))))
    }
}

/// App Store dates: integer milliseconds since 1970.
enum AppStoreMillis {
    static func from(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func date(_ millis: Int64) -> Date {
        Date(timeIntervalSince1970: Double(millis) / 1000)
    }
}

// MARK: - Wire types

/// Apple's `JWSTransactionDecodedPayload` (the fields the sandbox produces).
struct TransactionPayload: JWTPayload, Equatable {
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

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Apple's `responseBodyV2DecodedPayload`.
struct NotificationPayload: JWTPayload, Equatable {
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

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Apple's notification `data` object.
struct NotificationData: Codable, Sendable, Equatable {
    let appAppleId: Int64?
    let bundleId: String
    let bundleVersion: String?
    let environment: String
    let signedTransactionInfo: String?
    let status: Int?

    enum CodingKeys: String, CodingKey {
        case appAppleId
        case bundleId
        case bundleVersion
        case environment
        case signedTransactionInfo
        case status
    }
}

/// The legacy receipt stand-in.
struct ReceiptBody: Codable {
    let signedTransactions: [String]

    enum CodingKeys: String, CodingKey {
        case signedTransactions = "signed_transactions"
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

struct NotificationRequestBody: Decodable {
    let notificationType: String
    let subtype: String?
    let originalTransactionID: String?
    let productID: String?
    let periodSeconds: Double?

    enum CodingKeys: String, CodingKey {
        case notificationType = "notification_type"
        case subtype
        case originalTransactionID = "original_transaction_id"
        case productID = "product_id"
        case periodSeconds = "period_seconds"
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
