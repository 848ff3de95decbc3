import Foundation

/// What ``AppStoreReceiptVerifier`` learned from a verified receipt: the purchase asked for and, for a subscription,
/// its renewal information.
public struct AppStoreReceiptVerification: Sendable, Equatable {
    /// The purchase of the requested product (see ``AppStoreReceiptVerifier/verify(receiptData:productID:)``).
    public let purchase: VerifiedPurchase
    /// The subscription's entry of `pending_renewal_info` (matched by original transaction id); `nil` for
    /// consumables, or when Apple's answer has none. Its `signedDate` is always `nil`.
    public let renewalInfo: VerifiedRenewalInfo?
    /// Apple's `latest_receipt`: the newest receipt of the same app installation, when Apple returned one.
    public let latestReceipt: String?

    /// Creates a verification result from its parts.
    public init(purchase: VerifiedPurchase, renewalInfo: VerifiedRenewalInfo?, latestReceipt: String?) {
        self.purchase = purchase
        self.renewalInfo = renewalInfo
        self.latestReceipt = latestReceipt
    }
}

// MARK: - Wire types of Apple's verifyReceipt endpoint

extension AppStoreReceiptVerifier {
    /// The `requestBody` of `POST /verifyReceipt`.
    struct VerifyReceiptRequest: Encodable {
        let receiptData: String
        let password: String?
        let excludeOldTransactions: Bool

        enum CodingKeys: String, CodingKey {
            case receiptData = "receipt-data"
            case password
            case excludeOldTransactions = "exclude-old-transactions"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(receiptData, forKey: .receiptData)
            try container.encodeIfPresent(password, forKey: .password)
            try container.encode(excludeOldTransactions, forKey: .excludeOldTransactions)
        }
    }

    /// The `responseBody` of `POST /verifyReceipt` (the members Chorus reads).
    ///
    /// Apple writes numbers as strings in the transaction arrays; every scalar is read leniently (a string, a
    /// number or a boolean) and every transaction field is optional, so one odd entry of another product cannot
    /// make the whole answer unreadable. Only the entries actually chosen are validated.
    struct VerifyReceiptResponse: Decodable {
        let status: Int
        let environment: String?
        let isRetryable: Bool?
        let receipt: ReceiptBody?
        let latestReceiptInfo: [ReceiptTransaction]?
        let pendingRenewalInfo: [ReceiptPendingRenewal]?
        let latestReceipt: String?

        enum CodingKeys: String, CodingKey {
            case status
            case environment
            case isRetryable = "is-retryable"
            case receipt
            case latestReceiptInfo = "latest_receipt_info"
            case pendingRenewalInfo = "pending_renewal_info"
            case latestReceipt = "latest_receipt"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            guard let status = container.receiptScalar(forKey: .status).flatMap({ Int($0) }) else {
                throw DecodingError.dataCorruptedError(forKey: .status, in: container, debugDescription: "no numeric status")
            }
            self.status = status
            environment = container.receiptScalar(forKey: .environment)
            isRetryable = container.receiptScalar(forKey: .isRetryable).flatMap(ReceiptBool.parse)
            receipt = try container.decodeIfPresent(ReceiptBody.self, forKey: .receipt)
            latestReceiptInfo = try container.decodeIfPresent([ReceiptTransaction].self, forKey: .latestReceiptInfo)
            pendingRenewalInfo = try container.decodeIfPresent([ReceiptPendingRenewal].self, forKey: .pendingRenewalInfo)
            latestReceipt = container.receiptScalar(forKey: .latestReceipt)
        }
    }

    /// `responseBody.Receipt`.
    struct ReceiptBody: Decodable {
        let bundleID: String?
        let applicationVersion: String?
        let inApp: [ReceiptTransaction]?

        enum CodingKeys: String, CodingKey {
            case bundleID = "bundle_id"
            case applicationVersion = "application_version"
            case inApp = "in_app"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            bundleID = container.receiptScalar(forKey: .bundleID)
            applicationVersion = container.receiptScalar(forKey: .applicationVersion)
            inApp = try container.decodeIfPresent([ReceiptTransaction].self, forKey: .inApp)
        }
    }

    /// One entry of `receipt.in_app` or `latest_receipt_info` (`responseBody.Latest_receipt_info`).
    struct ReceiptTransaction: Decodable {
        let productID: String?
        let transactionID: String?
        let originalTransactionID: String?
        let purchaseDateMillis: String?
        let originalPurchaseDateMillis: String?
        let expiresDateMillis: String?
        let cancellationDateMillis: String?
        let cancellationReason: String?
        let quantity: String?
        let inAppOwnershipType: String?

        enum CodingKeys: String, CodingKey {
            case productID = "product_id"
            case transactionID = "transaction_id"
            case originalTransactionID = "original_transaction_id"
            case purchaseDateMillis = "purchase_date_ms"
            case originalPurchaseDateMillis = "original_purchase_date_ms"
            case expiresDateMillis = "expires_date_ms"
            case cancellationDateMillis = "cancellation_date_ms"
            case cancellationReason = "cancellation_reason"
            case quantity
            case inAppOwnershipType = "in_app_ownership_type"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            productID = container.receiptScalar(forKey: .productID)
            transactionID = container.receiptScalar(forKey: .transactionID)
            originalTransactionID = container.receiptScalar(forKey: .originalTransactionID)
            purchaseDateMillis = container.receiptScalar(forKey: .purchaseDateMillis)
            originalPurchaseDateMillis = container.receiptScalar(forKey: .originalPurchaseDateMillis)
            expiresDateMillis = container.receiptScalar(forKey: .expiresDateMillis)
            cancellationDateMillis = container.receiptScalar(forKey: .cancellationDateMillis)
            cancellationReason = container.receiptScalar(forKey: .cancellationReason)
            quantity = container.receiptScalar(forKey: .quantity)
            inAppOwnershipType = container.receiptScalar(forKey: .inAppOwnershipType)
        }

        /// `expires_date_ms` as a date; `nil` when absent or unreadable.
        var expiresDate: Date? { expiresDateMillis.flatMap(ReceiptMillis.date) }
        /// `purchase_date_ms` as a date; `nil` when absent or unreadable.
        var purchaseDate: Date? { purchaseDateMillis.flatMap(ReceiptMillis.date) }
        /// `cancellation_date_ms` as a date; `nil` when the transaction stands.
        var cancellationDate: Date? { cancellationDateMillis.flatMap(ReceiptMillis.date) }
        /// Whether Apple refunded or revoked the transaction. An unreadable `cancellation_date_ms` counts as cancelled.
        var isCancelled: Bool { cancellationDateMillis.map { !$0.isEmpty } ?? false }
    }

    /// One entry of `pending_renewal_info` (`responseBody.Pending_renewal_info`).
    struct ReceiptPendingRenewal: Decodable {
        let autoRenewProductID: String?
        let originalTransactionID: String?
        let productID: String?
        let autoRenewStatus: String?
        let isInBillingRetryPeriod: String?
        let gracePeriodExpiresDateMillis: String?
        let expirationIntent: String?

        enum CodingKeys: String, CodingKey {
            case autoRenewProductID = "auto_renew_product_id"
            case originalTransactionID = "original_transaction_id"
            case productID = "product_id"
            case autoRenewStatus = "auto_renew_status"
            case isInBillingRetryPeriod = "is_in_billing_retry_period"
            case gracePeriodExpiresDateMillis = "grace_period_expires_date_ms"
            case expirationIntent = "expiration_intent"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            autoRenewProductID = container.receiptScalar(forKey: .autoRenewProductID)
            originalTransactionID = container.receiptScalar(forKey: .originalTransactionID)
            productID = container.receiptScalar(forKey: .productID)
            autoRenewStatus = container.receiptScalar(forKey: .autoRenewStatus)
            isInBillingRetryPeriod = container.receiptScalar(forKey: .isInBillingRetryPeriod)
            gracePeriodExpiresDateMillis = container.receiptScalar(forKey: .gracePeriodExpiresDateMillis)
            expirationIntent = container.receiptScalar(forKey: .expirationIntent)
        }
    }

    /// verifyReceipt's millisecond dates: decimal strings of milliseconds since 1970.
    enum ReceiptMillis {
        static func date(_ text: String) -> Date? {
            guard let millis = Int64(text.trimmingCharacters(in: .whitespaces)), millis >= 0 else { return nil }
            return AppStoreSignedDataVerifier.date(millis: millis)
        }
    }

    /// verifyReceipt's booleans: `"1"`/`"0"`, `"true"`/`"false"` (as strings or JSON).
    enum ReceiptBool {
        static func parse(_ text: String) -> Bool? {
            switch text.lowercased() {
            case "1", "true": true
            case "0", "false": false
            default: nil
            }
        }
    }
}

extension KeyedDecodingContainer {
    /// A scalar member as text, whether Apple wrote it as a string, a number or a boolean; `nil` when absent, `null`
    /// or not a scalar.
    fileprivate func receiptScalar(forKey key: Key) -> String? {
        if let text = try? decodeIfPresent(String.self, forKey: key) { return text }
        if let number = try? decodeIfPresent(Int64.self, forKey: key) { return String(number) }
        if let number = try? decodeIfPresent(Double.self, forKey: key) { return Int64(exactly: number.rounded()).map { String($0) } }
        if let flag = try? decodeIfPresent(Bool.self, forKey: key) { return flag ? "true" : "false" }
        return nil
    }
}
