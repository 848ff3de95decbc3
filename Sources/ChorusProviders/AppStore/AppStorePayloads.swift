import Foundation

// The decoded payloads of Apple's signed data, with Apple's field names. Unknown fields are ignored; fields Apple
// documents as numbers also decode from numeric strings (and dates from fractional numbers), identifiers documented as
// strings also decode from numbers, and booleans also decode from 0/1. Dates are milliseconds since 1970.

/// A payload that carries Apple's `signedDate` (milliseconds since 1970).
protocol AppStoreSignedPayload: Decodable, Sendable {
    /// What the payload is, for error messages ("transaction", "renewal info", "notification").
    static var kindDescription: String { get }
    /// `signedDate` in milliseconds since 1970, when present.
    var signedDate: Int64? { get }
}

/// Apple's `JWSTransactionDecodedPayload` (the fields Chorus uses).
struct AppStoreTransactionPayload: AppStoreSignedPayload {
    static let kindDescription = "transaction"

    var transactionId: String?
    var originalTransactionId: String?
    var bundleId: String?
    var productId: String?
    var purchaseDate: Int64?
    var originalPurchaseDate: Int64?
    var expiresDate: Int64?
    var type: String?
    var inAppOwnershipType: String?
    var signedDate: Int64?
    var environment: String?
    var appAccountToken: String?
    var revocationDate: Int64?
    var revocationReason: Int?
    var quantity: Int?

    enum CodingKeys: String, CodingKey {
        case transactionId
        case originalTransactionId
        case bundleId
        case productId
        case purchaseDate
        case originalPurchaseDate
        case expiresDate
        case type
        case inAppOwnershipType
        case signedDate
        case environment
        case appAccountToken
        case revocationDate
        case revocationReason
        case quantity
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        transactionId = try container.lenientString(.transactionId)
        originalTransactionId = try container.lenientString(.originalTransactionId)
        bundleId = try container.lenientString(.bundleId)
        productId = try container.lenientString(.productId)
        purchaseDate = try container.lenientInt64(.purchaseDate)
        originalPurchaseDate = try container.lenientInt64(.originalPurchaseDate)
        expiresDate = try container.lenientInt64(.expiresDate)
        type = try container.lenientString(.type)
        inAppOwnershipType = try container.lenientString(.inAppOwnershipType)
        signedDate = try container.lenientInt64(.signedDate)
        environment = try container.lenientString(.environment)
        appAccountToken = try container.lenientString(.appAccountToken)
        revocationDate = try container.lenientInt64(.revocationDate)
        revocationReason = try container.lenientInt64(.revocationReason).map { Int(clamping: $0) }
        quantity = try container.lenientInt64(.quantity).map { Int(clamping: $0) }
    }
}

/// Apple's `JWSRenewalInfoDecodedPayload` (the fields Chorus uses).
struct AppStoreRenewalInfoPayload: AppStoreSignedPayload {
    static let kindDescription = "renewal info"

    var originalTransactionId: String?
    var productId: String?
    var autoRenewProductId: String?
    var autoRenewStatus: Int?
    var isInBillingRetryPeriod: Bool?
    var gracePeriodExpiresDate: Int64?
    var expirationIntent: Int?
    var signedDate: Int64?
    var environment: String?

    enum CodingKeys: String, CodingKey {
        case originalTransactionId
        case productId
        case autoRenewProductId
        case autoRenewStatus
        case isInBillingRetryPeriod
        case gracePeriodExpiresDate
        case expirationIntent
        case signedDate
        case environment
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        originalTransactionId = try container.lenientString(.originalTransactionId)
        productId = try container.lenientString(.productId)
        autoRenewProductId = try container.lenientString(.autoRenewProductId)
        autoRenewStatus = try container.lenientInt64(.autoRenewStatus).map { Int(clamping: $0) }
        isInBillingRetryPeriod = try container.lenientBool(.isInBillingRetryPeriod)
        gracePeriodExpiresDate = try container.lenientInt64(.gracePeriodExpiresDate)
        expirationIntent = try container.lenientInt64(.expirationIntent).map { Int(clamping: $0) }
        signedDate = try container.lenientInt64(.signedDate)
        environment = try container.lenientString(.environment)
    }
}

/// Apple's `ResponseBodyV2DecodedPayload`: an App Store Server Notification V2 (the fields Chorus uses).
struct AppStoreNotificationPayload: AppStoreSignedPayload {
    static let kindDescription = "notification"

    var notificationType: String?
    var subtype: String?
    var notificationUUID: String?
    var signedDate: Int64?
    var version: String?
    var data: NotificationData?
    var summary: NotificationSummary?
    var appData: NotificationAppData?
    var externalPurchaseToken: NotificationExternalPurchaseToken?

    enum CodingKeys: String, CodingKey {
        case notificationType
        case subtype
        case notificationUUID
        case signedDate
        case version
        case data
        case summary
        case appData
        case externalPurchaseToken
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        notificationType = try container.lenientString(.notificationType)
        subtype = try container.lenientString(.subtype)
        notificationUUID = try container.lenientString(.notificationUUID)
        signedDate = try container.lenientInt64(.signedDate)
        version = try container.lenientString(.version)
        data = try container.decodeIfPresent(NotificationData.self, forKey: .data)
        summary = try container.decodeIfPresent(NotificationSummary.self, forKey: .summary)
        appData = try container.decodeIfPresent(NotificationAppData.self, forKey: .appData)
        externalPurchaseToken = try container.decodeIfPresent(NotificationExternalPurchaseToken.self, forKey: .externalPurchaseToken)
    }

    /// The app the notification names: from `data`, else `summary`, else `appData`, else `externalPurchaseToken`
    /// (whose environment is Sandbox when `externalPurchaseId` starts with `SANDBOX`, as in Apple's library).
    var appIdentity: (bundleId: String?, appAppleId: Int64?, environment: String?) {
        if let data {
            return (data.bundleId, data.appAppleId, data.environment)
        }
        if let summary {
            return (summary.bundleId, summary.appAppleId, summary.environment)
        }
        if let appData {
            return (appData.bundleId, appData.appAppleId, appData.environment)
        }
        if let token = externalPurchaseToken {
            let sandbox = token.externalPurchaseId?.hasPrefix("SANDBOX") ?? false
            return (token.bundleId, token.appAppleId, sandbox ? AppStoreEnvironment.sandbox.rawValue : AppStoreEnvironment.production.rawValue)
        }
        return (nil, nil, nil)
    }

    /// Apple's notification `data` object.
    struct NotificationData: Decodable, Sendable {
        var bundleId: String?
        var appAppleId: Int64?
        var environment: String?
        var status: Int?
        var signedTransactionInfo: String?
        var signedRenewalInfo: String?

        enum CodingKeys: String, CodingKey {
            case bundleId
            case appAppleId
            case environment
            case status
            case signedTransactionInfo
            case signedRenewalInfo
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            bundleId = try container.lenientString(.bundleId)
            appAppleId = try container.lenientInt64(.appAppleId)
            environment = try container.lenientString(.environment)
            status = try container.lenientInt64(.status).map { Int(clamping: $0) }
            signedTransactionInfo = try container.lenientString(.signedTransactionInfo)
            signedRenewalInfo = try container.lenientString(.signedRenewalInfo)
        }
    }

    /// Apple's notification `summary` object (`RENEWAL_EXTENSION` summaries).
    struct NotificationSummary: Decodable, Sendable {
        var requestIdentifier: String?
        var environment: String?
        var appAppleId: Int64?
        var bundleId: String?
        var productId: String?
        var succeededCount: Int64?
        var failedCount: Int64?

        enum CodingKeys: String, CodingKey {
            case requestIdentifier
            case environment
            case appAppleId
            case bundleId
            case productId
            case succeededCount
            case failedCount
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            requestIdentifier = try container.lenientString(.requestIdentifier)
            environment = try container.lenientString(.environment)
            appAppleId = try container.lenientInt64(.appAppleId)
            bundleId = try container.lenientString(.bundleId)
            productId = try container.lenientString(.productId)
            succeededCount = try container.lenientInt64(.succeededCount)
            failedCount = try container.lenientInt64(.failedCount)
        }
    }

    /// Apple's notification `appData` object (app-level notifications such as `RESCIND_CONSENT`).
    struct NotificationAppData: Decodable, Sendable {
        var appAppleId: Int64?
        var bundleId: String?
        var environment: String?

        enum CodingKeys: String, CodingKey {
            case appAppleId
            case bundleId
            case environment
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            appAppleId = try container.lenientInt64(.appAppleId)
            bundleId = try container.lenientString(.bundleId)
            environment = try container.lenientString(.environment)
        }
    }

    /// Apple's notification `externalPurchaseToken` object (`EXTERNAL_PURCHASE_TOKEN` notifications).
    struct NotificationExternalPurchaseToken: Decodable, Sendable {
        var externalPurchaseId: String?
        var appAppleId: Int64?
        var bundleId: String?

        enum CodingKeys: String, CodingKey {
            case externalPurchaseId
            case appAppleId
            case bundleId
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            externalPurchaseId = try container.lenientString(.externalPurchaseId)
            appAppleId = try container.lenientInt64(.appAppleId)
            bundleId = try container.lenientString(.bundleId)
        }
    }
}

/// Just `signedDate`, to read a nested JWS's signing time before it is verified.
struct AppStoreSignedDateOnly: Decodable {
    var signedDate: Int64?

    enum CodingKeys: String, CodingKey {
        case signedDate
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        signedDate = try container.lenientInt64(.signedDate)
    }
}

extension KeyedDecodingContainer {
    /// Decodes an integer that may arrive as a JSON integer, a whole fractional number or a numeric string; `nil` when
    /// the key is absent or `null`.
    func lenientInt64(_ key: Key) throws -> Int64? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let value = try? decode(Int64.self, forKey: key) {
            return value
        }
        if let value = try? decode(Double.self, forKey: key), value.isFinite, let whole = Int64(exactly: value.rounded(.down)) {
            return whole
        }
        if let text = try? decode(String.self, forKey: key), let value = Int64(text.trimmingCharacters(in: .whitespaces)) {
            return value
        }
        throw DecodingError.typeMismatch(
            Int64.self,
            .init(codingPath: codingPath + [key], debugDescription: "\(key.stringValue) is not a number")
        )
    }

    /// Decodes a string that may arrive as a JSON number (identifiers); `nil` when the key is absent or `null`.
    func lenientString(_ key: Key) throws -> String? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let value = try? decode(String.self, forKey: key) {
            return value
        }
        if let value = try? decode(Int64.self, forKey: key) {
            return String(value)
        }
        throw DecodingError.typeMismatch(
            String.self,
            .init(codingPath: codingPath + [key], debugDescription: "\(key.stringValue) is not a string")
        )
    }

    /// Decodes a boolean that may arrive as `true`/`false` or 0/1; `nil` when the key is absent or `null`.
    func lenientBool(_ key: Key) throws -> Bool? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let value = try? decode(Bool.self, forKey: key) {
            return value
        }
        if let value = try lenientInt64(key) {
            return value != 0
        }
        return nil
    }
}
