import Foundation

/// The App Store environment a transaction or notification comes from.
public enum AppStoreEnvironment: String, Sendable, Codable {
    case sandbox = "Sandbox"
    case production = "Production"
    case xcode = "Xcode"
}

/// A purchase whose signature and origin have been checked (Apple's `JWSTransactionDecodedPayload`, or one
/// transaction of a legacy receipt).
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
    /// When the App Store signed this data (`signedDate`); `nil` for legacy receipts.
    public let signedDate: Date?
    /// The UUID the app attached to the purchase (`appAccountToken`); Chorus apps set the user's id.
    public let appAccountToken: UUID?
    /// When the App Store refunded or revoked the transaction; `nil` while it stands.
    public let revocationDate: Date?
    /// Apple's `revocationReason` (0 other, 1 an issue in the app), when revoked.
    public let revocationReason: Int?
    /// `PURCHASED` or `FAMILY_SHARED` (`inAppOwnershipType`); `nil` when the source does not say.
    public let ownershipType: String?
    /// Apple's product `type` (`Auto-Renewable Subscription`, `Consumable`, ...); `nil` when the source does not say.
    public let productType: String?
    /// How many units were bought (consumables).
    public let quantity: Int

    /// Creates a verified purchase from its fields.
    public init(
        productID: String,
        transactionID: String,
        originalTransactionID: String,
        purchaseDate: Date,
        expiresDate: Date?,
        environment: AppStoreEnvironment,
        bundleID: String,
        signedDate: Date? = nil,
        appAccountToken: UUID? = nil,
        revocationDate: Date? = nil,
        revocationReason: Int? = nil,
        ownershipType: String? = nil,
        productType: String? = nil,
        quantity: Int = 1
    ) {
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
        self.environment = environment
        self.bundleID = bundleID
        self.signedDate = signedDate
        self.appAccountToken = appAccountToken
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.ownershipType = ownershipType
        self.productType = productType
        self.quantity = quantity
    }
}

/// Verified subscription renewal information (Apple's `JWSRenewalInfoDecodedPayload`).
public struct VerifiedRenewalInfo: Sendable, Equatable {
    /// The subscription this renewal information belongs to.
    public let originalTransactionID: String
    /// The product the user is currently subscribed to.
    public let productID: String?
    /// The product the subscription renews to next (differs after a downgrade or crossgrade).
    public let autoRenewProductID: String?
    /// Whether the subscription renews automatically (`autoRenewStatus` 1).
    public let willAutoRenew: Bool?
    /// Whether the App Store is still trying to bill the user.
    public let isInBillingRetryPeriod: Bool?
    /// Until when the user keeps access while billing is retried (billing grace period).
    public let gracePeriodExpiresDate: Date?
    /// Why the subscription expired (`expirationIntent`), when it did.
    public let expirationIntent: Int?
    /// When the App Store signed this data; `nil` in old payloads that lack it.
    public let signedDate: Date?
    /// The App Store environment that signed it; `nil` in old payloads that lack it.
    public let environment: AppStoreEnvironment?

    /// Creates verified renewal information from its fields.
    public init(
        originalTransactionID: String,
        productID: String?,
        autoRenewProductID: String?,
        willAutoRenew: Bool?,
        isInBillingRetryPeriod: Bool?,
        gracePeriodExpiresDate: Date?,
        expirationIntent: Int?,
        signedDate: Date?,
        environment: AppStoreEnvironment?
    ) {
        self.originalTransactionID = originalTransactionID
        self.productID = productID
        self.autoRenewProductID = autoRenewProductID
        self.willAutoRenew = willAutoRenew
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.expirationIntent = expirationIntent
        self.signedDate = signedDate
        self.environment = environment
    }
}

/// An App Store Server Notification V2 whose signature and origin have been checked, with its nested signed
/// transaction and renewal information verified on their own.
public struct VerifiedNotification: Sendable, Equatable {
    /// The notification's unique identifier; use it to ignore redeliveries.
    public let notificationUUID: String
    /// The notification type, e.g. `SUBSCRIBED`, `DID_RENEW`, `EXPIRED`, `REFUND`.
    public let notificationType: String
    /// The subtype, e.g. `INITIAL_BUY`, `AUTO_RENEW_DISABLED`; `nil` when the type has none.
    public let subtype: String?
    /// When the App Store signed the notification; `nil` only in 2022-era payloads that lack the field.
    public let signedDate: Date?
    /// The environment named in `data` (or `summary`); `nil` when the payload names none.
    public let environment: AppStoreEnvironment?
    /// The bundle id named in `data`, when present.
    public let bundleID: String?
    /// The App Store app id named in `data` (present in production).
    public let appAppleID: Int64?
    /// `data.status`: 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked.
    public let status: Int?
    /// The transaction the notification is about (`data.signedTransactionInfo`), when it carries one.
    public let transaction: VerifiedPurchase?
    /// The subscription's renewal information (`data.signedRenewalInfo`), when it carries one.
    public let renewalInfo: VerifiedRenewalInfo?

    /// Creates a verified notification from its fields.
    public init(
        notificationUUID: String,
        notificationType: String,
        subtype: String?,
        signedDate: Date?,
        environment: AppStoreEnvironment? = nil,
        bundleID: String? = nil,
        appAppleID: Int64? = nil,
        status: Int? = nil,
        transaction: VerifiedPurchase?,
        renewalInfo: VerifiedRenewalInfo? = nil
    ) {
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.signedDate = signedDate
        self.environment = environment
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.status = status
        self.transaction = transaction
        self.renewalInfo = renewalInfo
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

extension PurchaseVerificationError {
    /// The human-readable reason, without the case name.
    public var reason: String {
        switch self {
        case .malformed(let reason), .invalidSignature(let reason), .wrongBundle(let reason), .wrongEnvironment(let reason),
            .unavailable(let reason):
            reason
        }
    }
}
