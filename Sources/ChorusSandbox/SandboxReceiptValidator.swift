import ChorusProviders
import Foundation
import NIOConcurrencyHelpers
import Vapor

/// One in-app purchase held by a receipt that ``SandboxReceiptValidator`` issued.
public struct SandboxReceiptTransaction: Sendable, Equatable {
    /// The App Store product identifier.
    public var productID: String
    /// The transaction's identifier (a purchase or a renewal).
    public var transactionID: String
    /// The first transaction of the subscription; equal to `transactionID` for first purchases and consumables.
    public var originalTransactionID: String
    /// When the user was charged (millisecond precision, as the App Store writes it).
    public var purchaseDate: Date
    /// When the subscription period ends; `nil` for consumables and other non-subscriptions.
    public var expiresDate: Date?
    /// How many units were bought.
    public var quantity: Int
    /// Whether it is an auto-renewable subscription (listed in `latest_receipt_info` and `pending_renewal_info`).
    public var isSubscription: Bool
    /// When the App Store refunded or revoked it (`cancellation_date_ms`); see ``SandboxReceiptValidator/cancel(transactionID:at:reason:)``.
    public var cancellationDate: Date?
    /// Apple's `cancellation_reason` (`0` other, `1` an issue in the app), when cancelled.
    public var cancellationReason: Int?

    /// Creates a transaction; `originalTransactionID` defaults to `transactionID`, `isSubscription` to whether it
    /// has an `expiresDate`. Dates are rounded to milliseconds.
    public init(
        productID: String,
        transactionID: String,
        originalTransactionID: String? = nil,
        purchaseDate: Date,
        expiresDate: Date? = nil,
        quantity: Int = 1,
        isSubscription: Bool? = nil,
        cancellationDate: Date? = nil,
        cancellationReason: Int? = nil
    ) {
        self.productID = productID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID ?? transactionID
        self.purchaseDate = SandboxReceiptValidator.rounded(purchaseDate)
        self.expiresDate = expiresDate.map(SandboxReceiptValidator.rounded)
        self.quantity = quantity
        self.isSubscription = isSubscription ?? (expiresDate != nil)
        self.cancellationDate = cancellationDate.map(SandboxReceiptValidator.rounded)
        self.cancellationReason = cancellationReason
    }
}

/// One call of the emulated `verifyReceipt`, as ``SandboxReceiptValidator/verifications()`` lists it. Neither the
/// receipt nor the password is kept.
public struct SandboxReceiptVerification: Sendable, Equatable, Codable {
    /// Position in the log, from 1.
    public let id: Int
    /// The endpoint called: `production` or `sandbox`.
    public let endpoint: AppStoreEnvironment
    /// The `status` answered, or `nil` when the answer was an injected HTTP error or non-JSON body.
    public let status: Int?
    /// The HTTP status answered.
    public let httpStatus: Int
    /// The environment of the receipt posted, when it was one the emulator issued.
    public let receiptEnvironment: AppStoreEnvironment?
    /// Whether the request carried a `password`.
    public let passwordProvided: Bool
    /// When the request arrived.
    public let receivedAt: Date

    enum CodingKeys: String, CodingKey {
        case id
        case endpoint
        case status
        case httpStatus = "http_status"
        case receiptEnvironment = "receipt_environment"
        case passwordProvided = "password_provided"
        case receivedAt = "received_at"
    }
}

/// A failure ``SandboxReceiptValidator`` can be told to answer with, to play an App Store outage.
public enum SandboxReceiptFailure: Sendable, Equatable {
    /// HTTP 200 with `{"status": code}` (and `"is-retryable": true` for 21100–21199).
    case status(Int)
    /// This HTTP status with an HTML body, as a failing front end answers.
    case httpStatus(Int)
    /// HTTP 200 with an HTML body.
    case notJSON
}

/// A local emulator of Apple's legacy `verifyReceipt` endpoints, production and sandbox.
///
/// Receipts are issued here as opaque base64 data (random bytes behind a DER `SEQUENCE` header, like the PKCS#7
/// blob of a real app receipt, which a server cannot read locally): only this emulator knows what each holds. A
/// receipt belongs to one app installation; ``appendTransaction(_:toReceipt:)`` adds a renewal or a new purchase to the
/// installation and returns its grown receipt. As on Apple's servers, every receipt of the installation then shows all
/// its subscription transactions in `latest_receipt_info` (and the newest receipt in `latest_receipt`), while
/// `receipt.in_app` lists only what that receipt itself held when it was issued.
///
/// Answers follow Apple's contract: JSON with `status`, `environment`, `receipt` (`bundle_id`, `in_app`, …),
/// `latest_receipt_info`, `pending_renewal_info` and `latest_receipt`, numbers in transactions written as strings,
/// dates as `*_ms` strings alongside the formatted `Etc/GMT` and `America/Los_Angeles` strings. Statuses, checked in
/// this order: 21000 for a body that is not a JSON object; 21002 for missing or non-base64 `receipt-data`; 21003 for
/// base64 this emulator did not issue, or a receipt of the `Xcode` environment (signed locally by StoreKit Testing);
/// 21007 for a sandbox receipt posted to production, 21008 for a production receipt posted to the sandbox; 21004
/// when a shared secret is configured and `password` differs, or is missing for a receipt holding subscriptions.
/// ``failNextVerifications(with:count:)`` plays outages.
///
/// Every request is listed by ``verifications()`` without its receipt or password. When the routes are mounted behind a
/// ``SandboxRecorder``, give the recorder ``redactedSecrets`` so the shared secret is never stored in clear.
public final class SandboxReceiptValidator: Sendable {
    /// The bundle id receipts are issued for unless another is given.
    public let bundleID: String
    let sharedSecret: String?
    private let now: @Sendable () -> Date
    private let state = NIOLockedValueBox(State())

    /// Creates an emulator.
    ///
    /// - Parameters:
    ///   - sharedSecret: The App Store Connect shared secret `password` must match; `nil` accepts any password.
    ///   - bundleID: The default bundle id of issued receipts.
    ///   - now: The clock used for `request_date`, receipt creation dates and default cancellation dates.
    public init(sharedSecret: String?, bundleID: String, now: @escaping @Sendable () -> Date = { Date() }) {
        self.sharedSecret = sharedSecret.flatMap { $0.isEmpty ? nil : $0 }
        self.bundleID = bundleID
        self.now = now
    }

    /// The secrets a ``SandboxRecorder`` in front of these routes must redact (the shared secret, if any).
    public var redactedSecrets: [String] {
        sharedSecret.map { [$0] } ?? []
    }

    // MARK: - Receipts

    /// Issues the receipt of a new app installation holding `transactions` (in this order) and returns its receipt
    /// data.
    ///
    /// - Parameters:
    ///   - environment: `production` receipts verify at the production endpoint, `sandbox` ones at the sandbox
    ///     endpoint; `xcode` receipts verify nowhere (21003).
    ///   - bundleID: The receipt's `bundle_id`; the emulator's ``bundleID`` by default.
    public func issueReceipt(
        environment: AppStoreEnvironment, bundleID: String? = nil, transactions: [SandboxReceiptTransaction]
    ) -> String {
        let (data, text) = Self.randomReceipt()
        let createdAt = now()
        state.withLockedValue { state in
            let installation = state.nextInstallation
            state.nextInstallation += 1
            state.installations[installation] = Installation(
                environment: environment, bundleID: bundleID ?? self.bundleID, transactions: transactions,
                firstReceiptDate: createdAt, latestReceipt: text
            )
            state.receipts[data] = IssuedReceipt(installation: installation, transactionCount: transactions.count, createdAt: createdAt)
        }
        return text
    }

    /// Adds `transaction` (a renewal, or a new purchase) to the installation `receiptData` belongs to, and returns the
    /// installation's new receipt, which also holds it in `receipt.in_app`. Returns `nil` when `receiptData` was not
    /// issued here. Older receipts of the installation keep verifying, and show a new subscription transaction in
    /// `latest_receipt_info`.
    @discardableResult
    public func appendTransaction(_ transaction: SandboxReceiptTransaction, toReceipt receiptData: String) -> String? {
        guard let key = Self.decodedReceipt(receiptData) else { return nil }
        let (data, text) = Self.randomReceipt()
        let createdAt = now()
        return state.withLockedValue { state -> String? in
            guard let installation = state.receipts[key]?.installation, var record = state.installations[installation] else {
                return nil
            }
            record.transactions.append(transaction)
            record.latestReceipt = text
            state.installations[installation] = record
            state.receipts[data] = IssuedReceipt(
                installation: installation, transactionCount: record.transactions.count, createdAt: createdAt)
            return text
        }
    }

    /// Marks every transaction with this id as refunded or revoked: receipts then show `cancellation_date_ms` and
    /// `cancellation_reason` for it. Returns whether any receipt held it.
    ///
    /// - Parameters:
    ///   - date: The cancellation date; the emulator's clock by default.
    ///   - reason: Apple's `cancellation_reason`: `0` other, `1` an issue in the app.
    @discardableResult
    public func cancel(transactionID: String, at date: Date? = nil, reason: Int = 0) -> Bool {
        let date = Self.rounded(date ?? now())
        return state.withLockedValue { state in
            var found = false
            for (id, var installation) in state.installations {
                for index in installation.transactions.indices where installation.transactions[index].transactionID == transactionID {
                    installation.transactions[index].cancellationDate = date
                    installation.transactions[index].cancellationReason = reason
                    found = true
                }
                state.installations[id] = installation
            }
            return found
        }
    }

    /// Sets a subscription's `auto_renew_status` in `pending_renewal_info` (on by default).
    public func setAutoRenew(_ enabled: Bool, originalTransactionID: String) {
        state.withLockedValue { state in
            if enabled {
                state.autoRenewOff.remove(originalTransactionID)
            } else {
                state.autoRenewOff.insert(originalTransactionID)
            }
        }
    }

    /// The transactions the installation of `receiptData` holds, or `nil` when it was not issued here.
    public func transactions(inReceipt receiptData: String) -> [SandboxReceiptTransaction]? {
        guard let key = Self.decodedReceipt(receiptData) else { return nil }
        return state.withLockedValue { state in
            state.receipts[key].flatMap { state.installations[$0.installation]?.transactions }
        }
    }

    // MARK: - Inspection and faults

    /// Every `verifyReceipt` request received, oldest first.
    public func verifications() -> [SandboxReceiptVerification] {
        state.withLockedValue { $0.log }
    }

    /// Forgets the logged requests.
    public func resetVerifications() {
        state.withLockedValue { $0.log.removeAll() }
    }

    /// Makes the next `count` requests (at either endpoint) fail with `failure` instead of being verified.
    public func failNextVerifications(with failure: SandboxReceiptFailure, count: Int = 1) {
        state.withLockedValue { $0.failures += Array(repeating: failure, count: max(0, count)) }
    }

    // MARK: - Routes

    /// Mounts Apple's endpoints, `POST app-store/verifyReceipt/production` and `POST app-store/verifyReceipt/sandbox`
    /// (bodies up to 4 MiB), and the control API on `routes`.
    ///
    /// The control API (JSON, snake_case, ISO-8601 dates) is for clients that cannot call this class, such as an app
    /// under development talking to `chorus sandbox`:
    /// - `POST app-store/receipts` `{"environment": "Production"|"Sandbox"|"Xcode" (Sandbox by default), "bundle_id", "transactions": [T]}`
    ///   issues a receipt (201 `{"receipt_data", "environment", "bundle_id", "transactions"}`);
    /// - `POST app-store/receipts/transactions` `{"receipt_data", "transaction": T}` adds a renewal or purchase to the
    ///   receipt's installation (201, the grown receipt in the same shape; 404 for an unknown receipt);
    /// - `POST app-store/receipts/refunds` `{"transaction_id", "reason", "cancellation_date"}` refunds a transaction
    ///   (200 `{"transaction_id", "cancelled": true}`; 404 when no receipt holds it);
    /// - `GET app-store/receipts/verifications` lists ``verifications()``; `DELETE` forgets them.
    ///
    /// A transaction `T` is `{"product_id"}` plus, all optional: `transaction_id` (a fresh numeric id by default),
    /// `original_transaction_id`, `purchase_date` (now by default; for a renewal of a subscription the installation
    /// holds, its latest expiry), `expires_date` or `period_seconds` (a renewal repeats its subscription's period),
    /// `quantity` and `subscription` (whether it has an expiry, by default).
    public func register(on routes: any RoutesBuilder) {
        let verifyReceipt = routes.grouped("app-store", "verifyReceipt")
        verifyReceipt.on(.POST, "production", body: .collect(maxSize: "4mb")) { request async -> Response in
            self.handle(request, endpoint: .production)
        }
        verifyReceipt.on(.POST, "sandbox", body: .collect(maxSize: "4mb")) { request async -> Response in
            self.handle(request, endpoint: .sandbox)
        }
        let control = routes.grouped("app-store", "receipts")
        control.post { request async -> Response in
            self.controlIssue(request)
        }
        control.post("transactions") { request async -> Response in
            self.controlAppend(request)
        }
        control.post("refunds") { request async -> Response in
            self.controlRefund(request)
        }
        control.get("verifications") { _ async -> Response in
            SandboxJSON.response(["verifications": self.verifications()])
        }
        control.delete("verifications") { _ async -> Response in
            self.resetVerifications()
            return Response(status: .noContent)
        }
    }

    /// A fresh numeric transaction id, unique within this emulator.
    public func nextTransactionID() -> String {
        state.withLockedValue { state in
            defer { state.nextTransactionID += 1 }
            return String(state.nextTransactionID)
        }
    }

    private func handle(_ request: Request, endpoint: AppStoreEnvironment) -> Response {
        let receivedAt = now()
        let body = request.body.data.map { Data($0.readableBytesView) } ?? Data()
        let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        let password = object?["password"] as? String
        let receiptText = object?["receipt-data"] as? String
        let excludeOld = (object?["exclude-old-transactions"] as? Bool) ?? false

        let failure = state.withLockedValue { $0.failures.isEmpty ? nil : $0.failures.removeFirst() }
        let response: Response
        let status: Int?
        var receiptEnvironment: AppStoreEnvironment?
        switch failure {
        case .status(let code)?:
            status = code
            response = Self.json(Answer(status: code, isRetryable: (21100...21199).contains(code) ? true : nil))
        case .httpStatus(let code)?:
            status = nil
            response = Self.html(status: HTTPResponseStatus(statusCode: code))
        case .notJSON?:
            status = nil
            response = Self.html(status: .ok)
        case nil:
            let answer = verify(
                object: object, receiptText: receiptText, password: password, excludeOld: excludeOld, endpoint: endpoint,
                requestDate: receivedAt)
            status = answer.answer.status
            receiptEnvironment = answer.receiptEnvironment
            response = Self.json(answer.answer)
        }
        state.withLockedValue { state in
            state.log.append(
                SandboxReceiptVerification(
                    id: state.nextLogID, endpoint: endpoint, status: status, httpStatus: Int(response.status.code),
                    receiptEnvironment: receiptEnvironment, passwordProvided: password != nil, receivedAt: receivedAt
                )
            )
            state.nextLogID += 1
        }
        return response
    }

    private func verify(
        object: [String: Any]?, receiptText: String?, password: String?, excludeOld: Bool, endpoint: AppStoreEnvironment,
        requestDate: Date
    ) -> (answer: Answer, receiptEnvironment: AppStoreEnvironment?) {
        guard object != nil else { return (Answer(status: 21000), nil) }
        guard let receiptText, let key = Self.decodedReceipt(receiptText) else { return (Answer(status: 21002), nil) }
        let found = state.withLockedValue { state -> (IssuedReceipt, Installation, Set<String>)? in
            guard let issued = state.receipts[key], let installation = state.installations[issued.installation] else { return nil }
            return (issued, installation, state.autoRenewOff)
        }
        guard case let (issued, installation, autoRenewOff)? = found else { return (Answer(status: 21003), nil) }
        let environment = installation.environment
        switch (environment, endpoint) {
        case (.xcode, _):
            return (Answer(status: 21003), environment)
        case (.sandbox, .production):
            return (Answer(status: 21007), environment)
        case (.production, .sandbox):
            return (Answer(status: 21008), environment)
        default:
            break
        }
        if let sharedSecret {
            let holdsSubscriptions = installation.transactions.contains(where: \.isSubscription)
            if let password, password != sharedSecret { return (Answer(status: 21004), environment) }
            if password == nil && holdsSubscriptions { return (Answer(status: 21004), environment) }
        }
        return (
            answer(for: installation, issued: issued, autoRenewOff: autoRenewOff, excludeOld: excludeOld, requestDate: requestDate),
            environment
        )
    }

    private func answer(
        for installation: Installation, issued: IssuedReceipt, autoRenewOff: Set<String>, excludeOld: Bool, requestDate: Date
    ) -> Answer {
        let all = installation.transactions
        let originalPurchaseDates = Dictionary(all.map { ($0.transactionID, $0.purchaseDate) }, uniquingKeysWith: { first, _ in first })
        func entry(_ transaction: SandboxReceiptTransaction, inLatest: Bool) -> TransactionJSON {
            TransactionJSON(
                transaction, originalPurchaseDate: originalPurchaseDates[transaction.originalTransactionID] ?? transaction.purchaseDate,
                inLatestReceiptInfo: inLatest
            )
        }
        let held = Array(all.prefix(issued.transactionCount))
        var subscriptions = all.filter(\.isSubscription)
        var latestByChain: [String: SandboxReceiptTransaction] = [:]
        var chains: [String] = []
        for transaction in subscriptions {
            let chain = transaction.originalTransactionID
            if let current = latestByChain[chain] {
                if (transaction.expiresDate ?? .distantPast) >= (current.expiresDate ?? .distantPast) { latestByChain[chain] = transaction }
            } else {
                latestByChain[chain] = transaction
                chains.append(chain)
            }
        }
        if excludeOld {
            subscriptions = chains.compactMap { latestByChain[$0] }
        }
        let renewals = chains.compactMap { chain -> PendingRenewalJSON? in
            guard let latest = latestByChain[chain] else { return nil }
            let autoRenews = !autoRenewOff.contains(chain)
            let expired = (latest.expiresDate ?? .distantFuture) < requestDate
            return PendingRenewalJSON(
                autoRenewProductID: latest.productID, productID: latest.productID, originalTransactionID: chain,
                autoRenewStatus: autoRenews ? "1" : "0", isInBillingRetryPeriod: expired ? "0" : nil,
                expirationIntent: expired && !autoRenews ? "1" : nil
            )
        }
        let isSandbox = installation.environment == .sandbox
        let receipt = ReceiptJSON(
            receiptType: isSandbox ? "ProductionSandbox" : "Production",
            adamID: isSandbox ? 0 : 1_234_567_890,
            appItemID: isSandbox ? 0 : 1_234_567_890,
            bundleID: installation.bundleID,
            applicationVersion: "1",
            downloadID: isSandbox ? 0 : 90_000_000_000_001,
            versionExternalIdentifier: isSandbox ? 0 : 850_000_001,
            receiptCreationDate: DateFields(issued.createdAt),
            requestDate: DateFields(requestDate),
            originalPurchaseDate: DateFields(installation.firstReceiptDate),
            originalApplicationVersion: isSandbox ? "1.0" : "1",
            inApp: held.map { entry($0, inLatest: false) }
        )
        return Answer(
            status: 0,
            environment: isSandbox ? "Sandbox" : "Production",
            receipt: receipt,
            latestReceiptInfo: subscriptions.isEmpty ? nil : subscriptions.map { entry($0, inLatest: true) },
            pendingRenewalInfo: renewals.isEmpty ? nil : renewals,
            latestReceipt: installation.latestReceipt
        )
    }

    // MARK: - Control API

    private func controlIssue(_ request: Request) -> Response {
        guard let body = try? Self.controlDecoder.decode(IssueBody.self, from: Data((request.body.string ?? "").utf8)) else {
            return SandboxJSON.detail(
                "Body must be {\"environment\": \"Production\"|\"Sandbox\"|\"Xcode\", \"bundle_id\": ..., "
                    + "\"transactions\": [{\"product_id\": ..., ...}]}.",
                status: .badRequest
            )
        }
        let environment = body.environment ?? .sandbox
        var transactions: [SandboxReceiptTransaction] = []
        for item in body.transactions ?? [] {
            transactions.append(resolve(item, after: transactions))
        }
        let receipt = issueReceipt(environment: environment, bundleID: body.bundleID, transactions: transactions)
        return SandboxJSON.response(
            ControlReceipt(receiptData: receipt, environment: environment, bundleID: body.bundleID ?? bundleID, transactions: transactions),
            status: .created
        )
    }

    private func controlAppend(_ request: Request) -> Response {
        guard let body = try? Self.controlDecoder.decode(AppendBody.self, from: Data((request.body.string ?? "").utf8)) else {
            return SandboxJSON.detail(
                "Body must be {\"receipt_data\": ..., \"transaction\": {\"product_id\": ..., ...}}.", status: .badRequest)
        }
        guard let held = transactions(inReceipt: body.receiptData) else {
            return SandboxJSON.detail("Unknown receipt_data.", status: .notFound)
        }
        let transaction = resolve(body.transaction, after: held)
        guard let grown = appendTransaction(transaction, toReceipt: body.receiptData),
            let key = Self.decodedReceipt(grown),
            let installation = state.withLockedValue({ state in state.receipts[key].flatMap { state.installations[$0.installation] } })
        else {
            return SandboxJSON.detail("Unknown receipt_data.", status: .notFound)
        }
        return SandboxJSON.response(
            ControlReceipt(
                receiptData: grown, environment: installation.environment, bundleID: installation.bundleID,
                transactions: installation.transactions),
            status: .created
        )
    }

    private func controlRefund(_ request: Request) -> Response {
        guard let body = try? Self.controlDecoder.decode(RefundBody.self, from: Data((request.body.string ?? "").utf8)) else {
            return SandboxJSON.detail(
                "Body must be {\"transaction_id\": ..., \"reason\": 0|1, \"cancellation_date\": ...}.", status: .badRequest)
        }
        guard cancel(transactionID: body.transactionID, at: body.cancellationDate, reason: body.reason ?? 0) else {
            return SandboxJSON.detail("No receipt holds transaction \(body.transactionID).", status: .notFound)
        }
        return SandboxJSON.response(RefundAnswer(transactionID: body.transactionID, cancelled: true))
    }

    /// Fills in a control API transaction's defaults; `earlier` are the transactions the installation already holds.
    private func resolve(_ item: TransactionBody, after earlier: [SandboxReceiptTransaction]) -> SandboxReceiptTransaction {
        let chain = item.originalTransactionID.map { original in earlier.filter { $0.originalTransactionID == original } } ?? []
        let previous = chain.filter { $0.expiresDate != nil }.max { ($0.expiresDate ?? .distantPast) < ($1.expiresDate ?? .distantPast) }
        let purchaseDate = item.purchaseDate ?? previous?.expiresDate ?? now()
        let period = item.periodSeconds ?? previous.flatMap { previous in previous.expiresDate.map { $0.timeIntervalSince(previous.purchaseDate) } }
        let expiresDate = item.expiresDate ?? period.map { purchaseDate.addingTimeInterval($0) }
        return SandboxReceiptTransaction(
            productID: item.productID, transactionID: item.transactionID ?? nextTransactionID(),
            originalTransactionID: item.originalTransactionID, purchaseDate: purchaseDate, expiresDate: expiresDate,
            quantity: item.quantity ?? 1, isSubscription: item.subscription
        )
    }

    private static var controlDecoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    struct TransactionBody: Decodable {
        let productID: String
        let transactionID: String?
        let originalTransactionID: String?
        let purchaseDate: Date?
        let expiresDate: Date?
        let periodSeconds: Double?
        let quantity: Int?
        let subscription: Bool?

        enum CodingKeys: String, CodingKey {
            case productID = "product_id"
            case transactionID = "transaction_id"
            case originalTransactionID = "original_transaction_id"
            case purchaseDate = "purchase_date"
            case expiresDate = "expires_date"
            case periodSeconds = "period_seconds"
            case quantity
            case subscription
        }
    }

    struct IssueBody: Decodable {
        let environment: AppStoreEnvironment?
        let bundleID: String?
        let transactions: [TransactionBody]?

        enum CodingKeys: String, CodingKey {
            case environment
            case bundleID = "bundle_id"
            case transactions
        }
    }

    struct AppendBody: Decodable {
        let receiptData: String
        let transaction: TransactionBody

        enum CodingKeys: String, CodingKey {
            case receiptData = "receipt_data"
            case transaction
        }
    }

    struct RefundBody: Decodable {
        let transactionID: String
        let reason: Int?
        let cancellationDate: Date?

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id"
            case reason
            case cancellationDate = "cancellation_date"
        }
    }

    struct RefundAnswer: Encodable {
        let transactionID: String
        let cancelled: Bool

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id"
            case cancelled
        }
    }

    /// A receipt and what its installation holds, as the control API answers.
    struct ControlReceipt: Encodable {
        let receiptData: String
        let environment: AppStoreEnvironment
        let bundleID: String
        let transactions: [TransactionEcho]

        init(receiptData: String, environment: AppStoreEnvironment, bundleID: String, transactions: [SandboxReceiptTransaction]) {
            self.receiptData = receiptData
            self.environment = environment
            self.bundleID = bundleID
            self.transactions = transactions.map(TransactionEcho.init)
        }

        enum CodingKeys: String, CodingKey {
            case receiptData = "receipt_data"
            case environment
            case bundleID = "bundle_id"
            case transactions
        }
    }

    struct TransactionEcho: Encodable {
        let productID: String
        let transactionID: String
        let originalTransactionID: String
        let purchaseDate: Date
        let expiresDate: Date?
        let quantity: Int
        let subscription: Bool
        let cancellationDate: Date?
        let cancellationReason: Int?

        init(_ transaction: SandboxReceiptTransaction) {
            productID = transaction.productID
            transactionID = transaction.transactionID
            originalTransactionID = transaction.originalTransactionID
            purchaseDate = transaction.purchaseDate
            expiresDate = transaction.expiresDate
            quantity = transaction.quantity
            subscription = transaction.isSubscription
            cancellationDate = transaction.cancellationDate
            cancellationReason = transaction.cancellationReason
        }

        enum CodingKeys: String, CodingKey {
            case productID = "product_id"
            case transactionID = "transaction_id"
            case originalTransactionID = "original_transaction_id"
            case purchaseDate = "purchase_date"
            case expiresDate = "expires_date"
            case quantity
            case subscription
            case cancellationDate = "cancellation_date"
            case cancellationReason = "cancellation_reason"
        }
    }

    // MARK: - Helpers

    static func rounded(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }

    static func millis(_ date: Date) -> String {
        String(Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    /// Receipt data as the emulator keys it: the decoded bytes (so line breaks or padding differences do not matter),
    /// or `nil` when it is not base64.
    static func decodedReceipt(_ text: String) -> Data? {
        let compact = text.filter { !$0.isWhitespace }
        guard !compact.isEmpty, let data = Data(base64Encoded: compact), !data.isEmpty else { return nil }
        return data
    }

    /// 512 random bytes behind a DER `SEQUENCE` header, as the PKCS#7 container of a real receipt starts.
    private static func randomReceipt() -> (Data, String) {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = [0x30, 0x82, 0x02, 0x00]
        bytes += (0..<512).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let data = Data(bytes)
        return (data, data.base64EncodedString())
    }

    private static func json(_ answer: Answer) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let data = (try? encoder.encode(answer)) ?? Data(#"{"status":21009}"#.utf8)
        var headers = HTTPHeaders()
        headers.contentType = .json
        return Response(status: .ok, headers: headers, body: .init(data: data))
    }

    private static func html(status: HTTPResponseStatus) -> Response {
        var headers = HTTPHeaders()
        headers.contentType = .html
        return Response(
            status: status, headers: headers,
            body: .init(string: "<html><body><h1>\(status.code) \(status.reasonPhrase)</h1></body></html>")
        )
    }

    // MARK: - State

    struct State {
        var nextInstallation = 1
        var installations: [Int: Installation] = [:]
        var receipts: [Data: IssuedReceipt] = [:]
        var autoRenewOff: Set<String> = []
        var failures: [SandboxReceiptFailure] = []
        var log: [SandboxReceiptVerification] = []
        var nextLogID = 1
        var nextTransactionID: UInt64 = 3_000_000_000_000_001
    }

    /// The purchases of one app installation, shared by every receipt it was issued.
    struct Installation {
        let environment: AppStoreEnvironment
        let bundleID: String
        var transactions: [SandboxReceiptTransaction]
        let firstReceiptDate: Date
        var latestReceipt: String
    }

    /// One receipt: its installation and how many of the installation's transactions it held when issued.
    struct IssuedReceipt {
        let installation: Int
        let transactionCount: Int
        let createdAt: Date
    }

    // MARK: - Wire types (Apple's verifyReceipt responseBody)

    struct Answer: Encodable {
        var status: Int
        var isRetryable: Bool?
        var environment: String?
        var receipt: ReceiptJSON?
        var latestReceiptInfo: [TransactionJSON]?
        var pendingRenewalInfo: [PendingRenewalJSON]?
        var latestReceipt: String?

        init(
            status: Int, isRetryable: Bool? = nil, environment: String? = nil, receipt: ReceiptJSON? = nil,
            latestReceiptInfo: [TransactionJSON]? = nil, pendingRenewalInfo: [PendingRenewalJSON]? = nil, latestReceipt: String? = nil
        ) {
            self.status = status
            self.isRetryable = isRetryable
            self.environment = environment
            self.receipt = receipt
            self.latestReceiptInfo = latestReceiptInfo
            self.pendingRenewalInfo = pendingRenewalInfo
            self.latestReceipt = latestReceipt
        }

        enum CodingKeys: String, CodingKey {
            case status
            case isRetryable = "is-retryable"
            case environment
            case receipt
            case latestReceiptInfo = "latest_receipt_info"
            case pendingRenewalInfo = "pending_renewal_info"
            case latestReceipt = "latest_receipt"
        }
    }

    /// A date as verifyReceipt writes it: `*_date` (`yyyy-MM-dd HH:mm:ss Etc/GMT`), `*_date_ms`, `*_date_pst`.
    struct DateFields {
        let gmt: String
        let millis: String
        let pst: String

        init(_ date: Date) {
            millis = SandboxReceiptValidator.millis(date)
            gmt = Self.format(date, zone: TimeZone(identifier: "UTC"), suffix: "Etc/GMT")
            pst = Self.format(
                date, zone: TimeZone(identifier: "America/Los_Angeles") ?? TimeZone(secondsFromGMT: -8 * 3600),
                suffix: "America/Los_Angeles")
        }

        private static func format(_ date: Date, zone: TimeZone?, suffix: String) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = zone
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
            return formatter.string(from: date) + " " + suffix
        }
    }

    struct ReceiptJSON: Encodable {
        let receiptType: String
        let adamID: Int64
        let appItemID: Int64
        let bundleID: String
        let applicationVersion: String
        let downloadID: Int64
        let versionExternalIdentifier: Int64
        let receiptCreationDate: DateFields
        let requestDate: DateFields
        let originalPurchaseDate: DateFields
        let originalApplicationVersion: String
        let inApp: [TransactionJSON]

        enum CodingKeys: String, CodingKey {
            case receiptType = "receipt_type"
            case adamID = "adam_id"
            case appItemID = "app_item_id"
            case bundleID = "bundle_id"
            case applicationVersion = "application_version"
            case downloadID = "download_id"
            case versionExternalIdentifier = "version_external_identifier"
            case receiptCreationDate = "receipt_creation_date"
            case receiptCreationDateMillis = "receipt_creation_date_ms"
            case receiptCreationDatePST = "receipt_creation_date_pst"
            case requestDate = "request_date"
            case requestDateMillis = "request_date_ms"
            case requestDatePST = "request_date_pst"
            case originalPurchaseDate = "original_purchase_date"
            case originalPurchaseDateMillis = "original_purchase_date_ms"
            case originalPurchaseDatePST = "original_purchase_date_pst"
            case originalApplicationVersion = "original_application_version"
            case inApp = "in_app"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(receiptType, forKey: .receiptType)
            try container.encode(adamID, forKey: .adamID)
            try container.encode(appItemID, forKey: .appItemID)
            try container.encode(bundleID, forKey: .bundleID)
            try container.encode(applicationVersion, forKey: .applicationVersion)
            try container.encode(downloadID, forKey: .downloadID)
            try container.encode(versionExternalIdentifier, forKey: .versionExternalIdentifier)
            try container.encode(receiptCreationDate.gmt, forKey: .receiptCreationDate)
            try container.encode(receiptCreationDate.millis, forKey: .receiptCreationDateMillis)
            try container.encode(receiptCreationDate.pst, forKey: .receiptCreationDatePST)
            try container.encode(requestDate.gmt, forKey: .requestDate)
            try container.encode(requestDate.millis, forKey: .requestDateMillis)
            try container.encode(requestDate.pst, forKey: .requestDatePST)
            try container.encode(originalPurchaseDate.gmt, forKey: .originalPurchaseDate)
            try container.encode(originalPurchaseDate.millis, forKey: .originalPurchaseDateMillis)
            try container.encode(originalPurchaseDate.pst, forKey: .originalPurchaseDatePST)
            try container.encode(originalApplicationVersion, forKey: .originalApplicationVersion)
            try container.encode(inApp, forKey: .inApp)
        }
    }

    /// One entry of `receipt.in_app` or `latest_receipt_info`; every number is a string, as Apple writes them.
    struct TransactionJSON: Encodable {
        let transaction: SandboxReceiptTransaction
        let originalPurchaseDate: Date
        let inLatestReceiptInfo: Bool

        init(_ transaction: SandboxReceiptTransaction, originalPurchaseDate: Date, inLatestReceiptInfo: Bool) {
            self.transaction = transaction
            self.originalPurchaseDate = originalPurchaseDate
            self.inLatestReceiptInfo = inLatestReceiptInfo
        }

        enum CodingKeys: String, CodingKey {
            case quantity
            case productID = "product_id"
            case transactionID = "transaction_id"
            case originalTransactionID = "original_transaction_id"
            case purchaseDate = "purchase_date"
            case purchaseDateMillis = "purchase_date_ms"
            case purchaseDatePST = "purchase_date_pst"
            case originalPurchaseDate = "original_purchase_date"
            case originalPurchaseDateMillis = "original_purchase_date_ms"
            case originalPurchaseDatePST = "original_purchase_date_pst"
            case expiresDate = "expires_date"
            case expiresDateMillis = "expires_date_ms"
            case expiresDatePST = "expires_date_pst"
            case cancellationDate = "cancellation_date"
            case cancellationDateMillis = "cancellation_date_ms"
            case cancellationDatePST = "cancellation_date_pst"
            case cancellationReason = "cancellation_reason"
            case webOrderLineItemID = "web_order_line_item_id"
            case isTrialPeriod = "is_trial_period"
            case isInIntroOfferPeriod = "is_in_intro_offer_period"
            case inAppOwnershipType = "in_app_ownership_type"
            case subscriptionGroupIdentifier = "subscription_group_identifier"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(String(transaction.quantity), forKey: .quantity)
            try container.encode(transaction.productID, forKey: .productID)
            try container.encode(transaction.transactionID, forKey: .transactionID)
            try container.encode(transaction.originalTransactionID, forKey: .originalTransactionID)
            try Self.encode(transaction.purchaseDate, in: &container, keys: (.purchaseDate, .purchaseDateMillis, .purchaseDatePST))
            try Self.encode(
                originalPurchaseDate, in: &container, keys: (.originalPurchaseDate, .originalPurchaseDateMillis, .originalPurchaseDatePST))
            if let expires = transaction.expiresDate {
                try Self.encode(expires, in: &container, keys: (.expiresDate, .expiresDateMillis, .expiresDatePST))
            }
            if let cancelled = transaction.cancellationDate {
                try Self.encode(cancelled, in: &container, keys: (.cancellationDate, .cancellationDateMillis, .cancellationDatePST))
                try container.encode(String(transaction.cancellationReason ?? 0), forKey: .cancellationReason)
            }
            if transaction.isSubscription {
                let lineItem = Int64(transaction.transactionID).map { String($0 + 1_000_000_000) } ?? transaction.transactionID
                try container.encode(lineItem, forKey: .webOrderLineItemID)
                try container.encode("false", forKey: .isInIntroOfferPeriod)
                if inLatestReceiptInfo { try container.encode("20000000", forKey: .subscriptionGroupIdentifier) }
            }
            try container.encode("false", forKey: .isTrialPeriod)
            try container.encode("PURCHASED", forKey: .inAppOwnershipType)
        }

        private static func encode(
            _ date: Date, in container: inout KeyedEncodingContainer<CodingKeys>, keys: (CodingKeys, CodingKeys, CodingKeys)
        ) throws {
            let fields = DateFields(date)
            try container.encode(fields.gmt, forKey: keys.0)
            try container.encode(fields.millis, forKey: keys.1)
            try container.encode(fields.pst, forKey: keys.2)
        }
    }

    struct PendingRenewalJSON: Encodable {
        let autoRenewProductID: String
        let productID: String
        let originalTransactionID: String
        let autoRenewStatus: String
        let isInBillingRetryPeriod: String?
        let expirationIntent: String?

        enum CodingKeys: String, CodingKey {
            case autoRenewProductID = "auto_renew_product_id"
            case productID = "product_id"
            case originalTransactionID = "original_transaction_id"
            case autoRenewStatus = "auto_renew_status"
            case isInBillingRetryPeriod = "is_in_billing_retry_period"
            case expirationIntent = "expiration_intent"
        }
    }
}
