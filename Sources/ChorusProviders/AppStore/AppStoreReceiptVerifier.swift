import AsyncHTTPClient
import ChorusCore
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Verifies legacy App Store receipts (the base64 `receipt_data` of StoreKit 1 apps) through Apple's `verifyReceipt`
/// endpoint, and finds the purchase of one product in them.
///
/// Apple has deprecated `verifyReceipt`, but it still answers. The protocol:
/// - The receipt is always sent to production first; only Apple's status 21007 ("a sandbox receipt sent to
///   production") sends it on to the sandbox URL. Which environment a receipt belongs to is decided by Apple, never by
///   the client. The environment Apple names must be one of `acceptedEnvironments`, else
///   ``PurchaseVerificationError/wrongEnvironment(_:)`` (a sandbox receipt is refused without asking the sandbox when
///   Sandbox is not accepted).
/// - `receipt.bundle_id` must be this app's bundle id, else ``PurchaseVerificationError/wrongBundle(_:)``.
/// - The purchase returned for a subscription is the transaction of that product with the latest `expires_date_ms`
///   (from `latest_receipt_info` and `receipt.in_app` together, never "the last element"); refunded transactions
///   (with a `cancellation_date_ms`) are passed over unless every one is refunded, in which case the latest is
///   returned with its `revocationDate` set, so the caller refuses it. A consumable or other non-subscription is the
///   most recent `receipt.in_app` transaction of the product by `purchase_date_ms`. Dates come from Apple's `*_ms`
///   fields only, never from the formatted date strings.
///
/// Apple's statuses become errors as follows:
/// - 21000 (unreadable request), 21002 (malformed receipt data), 21010 (account not found), an unknown status, or
///   21008 (which cannot happen when starting at production) → ``PurchaseVerificationError/malformed(_:)``.
/// - 21003 (the receipt could not be authenticated) → ``PurchaseVerificationError/invalidSignature(_:)``.
/// - 21004 (the shared secret does not match) → ``PurchaseVerificationError/unavailable(_:)``: this is a
///   misconfiguration of this server (`sharedSecret` is wrong or missing), not the user's fault, and the receipt will
///   verify once it is fixed.
/// - 21005, 21009, 21100–21199, any status Apple marks `is-retryable`, HTTP errors, answers that are not JSON or
///   exceed 4 MiB, timeouts and connection failures → ``PurchaseVerificationError/unavailable(_:)``. Nothing is
///   retried here; the caller decides.
/// - 21006 (an iOS 6 style receipt whose subscription expired) is read like a valid answer: the purchase comes back
///   with its past `expiresDate`.
///
/// The receipt data, the shared secret and Apple's answer are never logged; status codes, the endpoint, the
/// environment, the product and the chosen transaction id are.
public struct AppStoreReceiptVerifier: Sendable {
    /// Apple's production `verifyReceipt` URL.
    public static let appleProductionURL = URL(string: "https://buy.itunes.apple.com/verifyReceipt")!
    /// Apple's sandbox `verifyReceipt` URL.
    public static let appleSandboxURL = URL(string: "https://sandbox.itunes.apple.com/verifyReceipt")!
    /// The largest answer read from Apple, in bytes (4 MiB); a larger one is ``PurchaseVerificationError/unavailable(_:)``.
    public static let maxResponseBytes = 4 << 20

    private let httpClient: HTTPClient
    private let productionURL: URL
    private let sandboxURL: URL
    private let sharedSecret: String?
    private let bundleID: String
    private let acceptedEnvironments: Set<AppStoreEnvironment>
    private let timeout: TimeAmount
    private let logger: Logger

    /// Creates a verifier for one app.
    ///
    /// - Parameters:
    ///   - productionURL: Where receipts are sent first (Apple's production endpoint, or a sandbox emulator's).
    ///   - sandboxURL: Where receipts go after production answers 21007.
    ///   - sharedSecret: The app's App Store Connect shared secret, sent as `password`; receipts holding
    ///     auto-renewable subscriptions need it. `nil` sends none.
    ///   - bundleID: The only bundle id accepted.
    ///   - acceptedEnvironments: The environments accepted (`[.production]` in production deployments).
    ///   - timeout: The deadline of each HTTP exchange (production, then possibly sandbox).
    public init(
        httpClient: HTTPClient,
        productionURL: URL = AppStoreReceiptVerifier.appleProductionURL,
        sandboxURL: URL = AppStoreReceiptVerifier.appleSandboxURL,
        sharedSecret: String?,
        bundleID: String,
        acceptedEnvironments: Set<AppStoreEnvironment>,
        timeout: TimeAmount = .seconds(15),
        logger: Logger
    ) {
        self.httpClient = httpClient
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.sharedSecret = sharedSecret.flatMap { $0.isEmpty ? nil : $0 }
        self.bundleID = bundleID
        self.acceptedEnvironments = acceptedEnvironments
        self.timeout = timeout
        self.logger = logger
    }

    /// Verifies `receiptData` with Apple and returns the purchase of `productID` it holds.
    ///
    /// - Throws: ``PurchaseVerificationError`` (see the type's documentation for which case means what), or
    ///   `CancellationError`.
    public func verify(receiptData: String, productID: String) async throws -> VerifiedPurchase {
        try await verifyWithRenewalInfo(receiptData: receiptData, productID: productID).purchase
    }

    /// Like ``verify(receiptData:productID:)``, and also returns the subscription's `pending_renewal_info` entry and
    /// Apple's `latest_receipt`.
    public func verifyWithRenewalInfo(receiptData: String, productID: String) async throws -> AppStoreReceiptVerification {
        var metadata: Logger.Metadata = ["product_id": "\(productID)"]
        guard !receiptData.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw logged(.malformed("the receipt data is empty"), metadata: metadata)
        }
        logger.info("appstore.receipt.verify", metadata: metadata)

        var endpoint = Endpoint.production
        var answer = try await post(receiptData, to: endpoint, metadata: metadata)
        if answer.status == Self.sandboxReceiptStatus {
            guard acceptedEnvironments.contains(.sandbox) else {
                metadata["apple_status"] = "\(answer.status)"
                throw logged(
                    .wrongEnvironment("the receipt comes from the Sandbox environment (21007), which is not accepted"),
                    metadata: metadata
                )
            }
            logger.info("appstore.receipt.sandbox_receipt: retrying at the sandbox", metadata: metadata)
            endpoint = .sandbox
            answer = try await post(receiptData, to: endpoint, metadata: metadata)
        }
        metadata["endpoint"] = "\(endpoint.rawValue)"
        metadata["apple_status"] = "\(answer.status)"
        if answer.status == 21004 {
            logger.error("appstore.receipt: Apple refused the configured shared secret (21004); check its configuration", metadata: metadata)
        }
        let verification: AppStoreReceiptVerification
        do {
            verification = try Self.verification(
                of: answer, endpoint: endpoint, productID: productID, bundleID: bundleID, acceptedEnvironments: acceptedEnvironments)
        } catch let error as PurchaseVerificationError {
            throw logged(error, metadata: metadata)
        }
        let purchase = verification.purchase
        metadata["environment"] = "\(purchase.environment.rawValue)"
        metadata["transaction_id"] = "\(purchase.transactionID)"
        metadata["original_transaction_id"] = "\(purchase.originalTransactionID)"
        if let expires = purchase.expiresDate { metadata["expires_ms"] = "\(Self.millis(expires))" }
        if purchase.revocationDate != nil { metadata["revoked"] = "true" }
        logger.info("appstore.receipt.verified", metadata: metadata)
        return verification
    }

    /// Reads a `verifyReceipt` answer of Apple's (the JSON body of a 2xx) as ``verifyWithRenewalInfo(receiptData:productID:)``
    /// does once no retry at the sandbox is due; what Apple answers is outside input, so every value in it is checked.
    ///
    /// - Throws: ``PurchaseVerificationError``.
    public static func verification(
        ofAnswer data: Data, productID: String, bundleID: String, acceptedEnvironments: Set<AppStoreEnvironment>
    ) throws -> AppStoreReceiptVerification {
        let answer: VerifyReceiptResponse
        do {
            answer = try JSONDecoder().decode(VerifyReceiptResponse.self, from: data)
        } catch {
            throw PurchaseVerificationError.malformed("the App Store's answer could not be read")
        }
        return try verification(
            of: answer, endpoint: .production, productID: productID, bundleID: bundleID, acceptedEnvironments: acceptedEnvironments)
    }

    /// The status, environment, bundle and purchase checks of one answer.
    static func verification(
        of answer: VerifyReceiptResponse, endpoint: Endpoint, productID: String, bundleID: String,
        acceptedEnvironments: Set<AppStoreEnvironment>
    ) throws -> AppStoreReceiptVerification {
        if let error = Self.error(forStatus: answer.status, isRetryable: answer.isRetryable, endpoint: endpoint) { throw error }
        let environment: AppStoreEnvironment
        if let named = answer.environment {
            guard let known = AppStoreEnvironment(rawValue: named) else {
                throw PurchaseVerificationError.malformed("the App Store answered an unknown environment \(named)")
            }
            environment = known
        } else {
            environment = endpoint.environment
        }
        guard acceptedEnvironments.contains(environment) else {
            throw PurchaseVerificationError.wrongEnvironment(
                "the receipt comes from the \(environment.rawValue) environment, which is not accepted")
        }
        guard let receipt = answer.receipt else {
            throw PurchaseVerificationError.malformed("the App Store's answer holds no receipt")
        }
        guard let receiptBundle = receipt.bundleID else {
            throw PurchaseVerificationError.malformed("the App Store's answer has no receipt.bundle_id")
        }
        guard receiptBundle == bundleID else {
            throw PurchaseVerificationError.wrongBundle("the receipt belongs to \(receiptBundle), not \(bundleID)")
        }
        guard
            let chosen = Self.purchase(
                of: productID, latestReceiptInfo: answer.latestReceiptInfo ?? [], inApp: receipt.inApp ?? [])
        else {
            throw PurchaseVerificationError.malformed("the receipt holds no purchase of \(productID)")
        }
        let purchase = try Self.verifiedPurchase(chosen, productID: productID, environment: environment, bundleID: receiptBundle)
        let renewalInfo =
            purchase.expiresDate == nil
            ? nil
            : Self.renewalInfo(
                answer.pendingRenewalInfo ?? [], originalTransactionID: purchase.originalTransactionID, environment: environment)
        return AppStoreReceiptVerification(purchase: purchase, renewalInfo: renewalInfo, latestReceipt: answer.latestReceipt)
    }

    // MARK: - Statuses

    /// Apple's status for a sandbox receipt sent to production.
    static let sandboxReceiptStatus = 21007

    /// The error an answer's status means, or `nil` when the answer carries a receipt to read (0 and 21006).
    static func error(forStatus status: Int, isRetryable: Bool?, endpoint: Endpoint) -> PurchaseVerificationError? {
        switch status {
        case 0, 21006:
            return nil
        case 21004:
            return .unavailable("the configured shared secret was refused (21004)")
        case _ where isRetryable == true:
            return .unavailable("the App Store answered status \(status) and marked it retryable")
        case 21000:
            return .malformed("the App Store could not read the verification request (21000)")
        case 21002:
            return .malformed("the App Store could not read the receipt data (21002: malformed or missing)")
        case 21003:
            return .invalidSignature("the App Store could not authenticate the receipt (21003)")
        case 21005:
            return .unavailable("the App Store receipt server is temporarily unavailable (21005)")
        case 21007:
            return .malformed("the App Store \(endpoint.rawValue) endpoint called this a sandbox receipt (21007)")
        case 21008:
            return .malformed(
                "the App Store \(endpoint.rawValue) endpoint called this a production receipt (21008) after production "
                    + "called it a sandbox receipt"
            )
        case 21009:
            return .unavailable("the App Store had an internal data access error (21009)")
        case 21010:
            return .malformed("the App Store found no account for this receipt (21010: not found or deleted)")
        case 21100...21199:
            return .unavailable("the App Store had an internal error (\(status))")
        default:
            return .malformed("the App Store answered the unknown status \(status)")
        }
    }

    // MARK: - Choosing the purchase

    /// The transaction of `productID` to report, or `nil` when the receipt holds none.
    ///
    /// Entries of `latest_receipt_info` win over `in_app` entries with the same transaction id (they are newer). If any
    /// entry has an `expires_date_ms` the product is a subscription: the standing (not cancelled) transaction with the
    /// latest expiry, or, when all are cancelled, the cancelled one with the latest expiry. Otherwise the most recent
    /// transaction by `purchase_date_ms`. Ties go to the later purchase, then to the larger transaction id.
    static func purchase(
        of productID: String, latestReceiptInfo: [ReceiptTransaction], inApp: [ReceiptTransaction]
    ) -> ReceiptTransaction? {
        var candidates = latestReceiptInfo.filter { $0.productID == productID }
        let seen = Set(candidates.compactMap(\.transactionID))
        candidates += inApp.filter { $0.productID == productID && !($0.transactionID.map(seen.contains) ?? false) }
        guard !candidates.isEmpty else { return nil }

        let subscriptions = candidates.filter { $0.expiresDate != nil }
        if !subscriptions.isEmpty {
            let standing = subscriptions.filter { !$0.isCancelled }
            return (standing.isEmpty ? subscriptions : standing).max { isOrdered($0, before: $1, byExpiry: true) }
        }
        return candidates.max { isOrdered($0, before: $1, byExpiry: false) }
    }

    private static func isOrdered(_ lhs: ReceiptTransaction, before rhs: ReceiptTransaction, byExpiry: Bool) -> Bool {
        func key(_ transaction: ReceiptTransaction) -> (Int64, Int64, Int64, String) {
            (
                byExpiry ? transaction.expiresDateMillis.flatMap { Int64($0) } ?? Int64.min : 0,
                transaction.purchaseDateMillis.flatMap { Int64($0) } ?? Int64.min,
                transaction.transactionID.flatMap { Int64($0) } ?? Int64.min,
                transaction.transactionID ?? ""
            )
        }
        return key(lhs) < key(rhs)
    }

    static func verifiedPurchase(
        _ transaction: ReceiptTransaction, productID: String, environment: AppStoreEnvironment, bundleID: String
    ) throws -> VerifiedPurchase {
        guard let transactionID = transaction.transactionID, !transactionID.isEmpty else {
            throw PurchaseVerificationError.malformed("the purchase of \(productID) has no transaction_id")
        }
        guard let purchaseDate = transaction.purchaseDate else {
            throw PurchaseVerificationError.malformed("the purchase of \(productID) has no readable purchase_date_ms")
        }
        if transaction.expiresDateMillis != nil && transaction.expiresDate == nil {
            throw PurchaseVerificationError.malformed("the purchase of \(productID) has an unreadable expires_date_ms")
        }
        if transaction.isCancelled && transaction.cancellationDate == nil {
            throw PurchaseVerificationError.malformed("the purchase of \(productID) has an unreadable cancellation_date_ms")
        }
        let quantity: Int
        if let text = transaction.quantity {
            guard let parsed = Int(text), parsed > 0 else {
                throw PurchaseVerificationError.malformed("the purchase of \(productID) has an unreadable quantity")
            }
            quantity = parsed
        } else {
            quantity = 1
        }
        let originalTransactionID = transaction.originalTransactionID.flatMap { $0.isEmpty ? nil : $0 } ?? transactionID
        return VerifiedPurchase(
            productID: productID,
            transactionID: transactionID,
            originalTransactionID: originalTransactionID,
            purchaseDate: purchaseDate,
            expiresDate: transaction.expiresDate,
            environment: environment,
            bundleID: bundleID,
            signedDate: nil,
            appAccountToken: nil,
            revocationDate: transaction.cancellationDate,
            revocationReason: transaction.cancellationDate == nil ? nil : transaction.cancellationReason.flatMap { Int($0) },
            ownershipType: transaction.inAppOwnershipType,
            productType: transaction.expiresDate == nil ? nil : "Auto-Renewable Subscription",
            quantity: quantity
        )
    }

    static func renewalInfo(
        _ entries: [ReceiptPendingRenewal], originalTransactionID: String, environment: AppStoreEnvironment
    ) -> VerifiedRenewalInfo? {
        guard let entry = entries.first(where: { $0.originalTransactionID == originalTransactionID }) else { return nil }
        return VerifiedRenewalInfo(
            originalTransactionID: originalTransactionID,
            productID: entry.productID,
            autoRenewProductID: entry.autoRenewProductID,
            willAutoRenew: entry.autoRenewStatus.flatMap(ReceiptBool.parse),
            isInBillingRetryPeriod: entry.isInBillingRetryPeriod.flatMap(ReceiptBool.parse),
            gracePeriodExpiresDate: entry.gracePeriodExpiresDateMillis.flatMap(ReceiptMillis.date),
            expirationIntent: entry.expirationIntent.flatMap { Int($0) },
            signedDate: nil,
            environment: environment
        )
    }

    // MARK: - HTTP

    /// The two `verifyReceipt` endpoints.
    enum Endpoint: String {
        case production
        case sandbox

        var environment: AppStoreEnvironment {
            switch self {
            case .production: .production
            case .sandbox: .sandbox
            }
        }
    }

    private func post(_ receiptData: String, to endpoint: Endpoint, metadata: Logger.Metadata) async throws -> VerifyReceiptResponse {
        var metadata = metadata
        metadata["endpoint"] = "\(endpoint.rawValue)"
        let url = endpoint == .production ? productionURL : sandboxURL
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Accept", value: "application/json")
        let body = VerifyReceiptRequest(receiptData: receiptData, password: sharedSecret, excludeOldTransactions: false)
        request.body = .bytes(ByteBuffer(data: try JSONEncoder().encode(body)))

        let status: HTTPResponseStatus
        let buffer: ByteBuffer
        do {
            let response = try await httpClient.execute(request, timeout: timeout)
            status = response.status
            buffer = try await response.body.collect(upTo: Self.maxResponseBytes)
        } catch let error as CancellationError {
            throw error
        } catch is NIOTooManyBytesError {
            throw logged(.unavailable("the App Store's \(endpoint.rawValue) answer exceeds 4 MiB"), metadata: metadata)
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw logged(.unavailable("the App Store \(endpoint.rawValue) endpoint could not be reached: \(error)"), metadata: metadata)
        }
        metadata["http_status"] = "\(status.code)"
        guard (200..<300).contains(status.code) else {
            throw logged(.unavailable("the App Store \(endpoint.rawValue) endpoint answered HTTP \(status.code)"), metadata: metadata)
        }
        let data = Data(buffer.readableBytesView)
        guard (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
            throw logged(.unavailable("the App Store \(endpoint.rawValue) endpoint answered something other than JSON"), metadata: metadata)
        }
        let answer: VerifyReceiptResponse
        do {
            answer = try JSONDecoder().decode(VerifyReceiptResponse.self, from: data)
        } catch {
            throw logged(.malformed("the App Store's \(endpoint.rawValue) answer could not be read"), metadata: metadata)
        }
        metadata["apple_status"] = "\(answer.status)"
        logger.debug("appstore.receipt.answer", metadata: metadata)
        return answer
    }

    private func logged(_ error: PurchaseVerificationError, metadata: Logger.Metadata) -> PurchaseVerificationError {
        var metadata = metadata
        switch error {
        case .malformed(let reason): metadata["error"] = "malformed: \(reason)"
        case .invalidSignature(let reason): metadata["error"] = "invalid signature: \(reason)"
        case .wrongBundle(let reason): metadata["error"] = "wrong bundle: \(reason)"
        case .wrongEnvironment(let reason): metadata["error"] = "wrong environment: \(reason)"
        case .unavailable(let reason): metadata["error"] = "unavailable: \(reason)"
        }
        logger.warning("appstore.receipt.refused", metadata: metadata)
        return error
    }

    /// For the log: a date read from Apple's answer as milliseconds, clamped (a date of `Int64.max` ms rounds above it).
    private static func millis(_ date: Date) -> Int64 {
        Int64(clampingRounded: date.timeIntervalSince1970 * 1000)
    }
}
