import Foundation

/// The App Store environment a transaction or notification comes from.
public enum AppStoreEnvironment: String, Sendable, Codable {
    case sandbox = "Sandbox"
    case production = "Production"
    case xcode = "Xcode"
}

/// A purchase whose signature and origin have been checked.
public struct VerifiedPurchase: Sendable, Equatable {
    /// The App Store product identifier.
    public let productID: String
    /// The identifier of this transaction (a purchase or a renewal).
    public let transactionID: String
    /// The identifier of the first transaction of the subscription (equal to `transactionID` for consumables).
    public let originalTransactionID: String
    /// When the App Store charged the user for this transaction.
    public let purchaseDate: Date
    /// When the subscription period this transaction pays for ends; `nil` for consumables.
    public let expiresDate: Date?
    /// The App Store environment that signed the transaction.
    public let environment: AppStoreEnvironment
    /// The bundle identifier of the app the transaction belongs to.
    public let bundleID: String

    /// Creates a verified purchase from its fields.
    public init(
        productID: String,
        transactionID: String,
        originalTransactionID: String,
        purchaseDate: Date,
        expiresDate: Date?,
        environment: AppStoreEnvironment,
        bundleID: String
    ) {
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.environment = environment
        self.bundleID = bundleID
    }
}

/// An App Store Server Notification V2 whose signature and origin have been checked.
public struct VerifiedNotification: Sendable, Equatable {
    /// The notification's unique identifier; use it to ignore redeliveries.
    public let notificationUUID: String
    /// The notification type, e.g. `SUBSCRIBED`, `DID_RENEW`, `EXPIRED`, `REFUND`.
    public let notificationType: String
    /// The subtype, e.g. `INITIAL_BUY`, `AUTO_RENEW_DISABLED`; `nil` when the type has none.
    public let subtype: String?
    /// When the App Store signed the notification.
    public let signedDate: Date
    /// The transaction the notification is about, when it carries one.
    public let transaction: VerifiedPurchase?

    /// Creates a verified notification from its fields.
    public init(
        notificationUUID: String,
        notificationType: String,
        subtype: String?,
        signedDate: Date,
        transaction: VerifiedPurchase?
    ) {
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.signedDate = signedDate
        self.transaction = transaction
    }
}

/// Why a receipt, transaction or notification was not accepted.
public enum PurchaseVerificationError: Error, Sendable, Equatable {
    /// The input is not in the expected format, or does not contain what was asked for.
    case malformed(String)
    /// The signature or certificate chain does not verify.
    case invalidSignature(String)
    /// The purchase belongs to another app.
    case wrongBundle(String)
    /// The purchase comes from an environment this verifier does not accept.
    case wrongEnvironment(String)
    /// The verification service could not be reached; the input may verify later.
    case unavailable(String)
}

/// Verifies App Store purchases and notifications.
public protocol PurchaseVerifier: Sendable {
    /// Verifies a legacy base64 receipt and returns the purchase of `productID` it contains.
    func verifyReceipt(_ receiptData: String, productID: String) async throws -> VerifiedPurchase
    /// Verifies a StoreKit 2 signed transaction (JWS).
    func verifySignedTransaction(_ jws: String) async throws -> VerifiedPurchase
    /// Verifies an App Store Server Notification V2 `signedPayload`.
    func verifyNotification(_ signedPayload: String) async throws -> VerifiedNotification
}
