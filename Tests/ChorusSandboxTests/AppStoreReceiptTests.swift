import AsyncHTTPClient
import ChorusProviders
import ChorusSandbox
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Testing
import Vapor

/// A ``SandboxReceiptValidator`` served on an ephemeral loopback port behind a ``SandboxRecorder`` (mounted under
/// `/sandbox`, as the sandbox server mounts its emulators), plus two stub routes: `/stub/verifyReceipt` answers
/// whatever JSON a test sets, `/stub/slow` never answers in time.
final class ReceiptHarness: Sendable {
    static let secret = "5f2a9c0e8d4b4b1f9a7c3e6d2b1a0f9e"
    static let bundleID = "app.chorus.calls"

    let validator: SandboxReceiptValidator
    let recorder: SandboxRecorder
    let application: Application
    let baseURL: URL
    private let stub: NIOLockedValueBox<String>

    private init(
        validator: SandboxReceiptValidator, recorder: SandboxRecorder, application: Application, baseURL: URL,
        stub: NIOLockedValueBox<String>
    ) {
        self.validator = validator
        self.recorder = recorder
        self.application = application
        self.baseURL = baseURL
        self.stub = stub
    }

    static func start(sharedSecret: String? = secret) async throws -> ReceiptHarness {
        let validator = SandboxReceiptValidator(sharedSecret: sharedSecret, bundleID: bundleID)
        let recorder = SandboxRecorder(redacting: validator.redactedSecrets)
        let application = try await Application.make(.testing)
        application.logger.logLevel = .notice
        validator.register(on: application.grouped("sandbox").grouped(recorder))
        let stub = NIOLockedValueBox(#"{"status": 21009}"#)
        application.post("stub", "verifyReceipt") { _ async -> Response in
            var headers = HTTPHeaders()
            headers.contentType = .json
            return Response(status: .ok, headers: headers, body: .init(string: stub.withLockedValue { $0 }))
        }
        application.post("stub", "slow") { _ async throws -> Response in
            try await Task.sleep(for: .seconds(3))
            return Response(status: .ok)
        }
        try await application.asyncBoot()
        try await application.server.start(address: .hostname("127.0.0.1", port: 0))
        let port = try #require(application.http.server.shared.localAddress?.port)
        return ReceiptHarness(
            validator: validator, recorder: recorder, application: application,
            baseURL: URL(string: "http://127.0.0.1:\(port)")!, stub: stub
        )
    }

    func shutdown() async throws {
        await application.server.shutdown()
        try await application.asyncShutdown()
    }

    var productionURL: URL { baseURL.appendingPathComponent("sandbox/app-store/verifyReceipt/production") }
    var sandboxURL: URL { baseURL.appendingPathComponent("sandbox/app-store/verifyReceipt/sandbox") }
    var stubURL: URL { baseURL.appendingPathComponent("stub/verifyReceipt") }
    var slowURL: URL { baseURL.appendingPathComponent("stub/slow") }

    /// Makes `/stub/verifyReceipt` answer `json`.
    func stubAnswer(_ json: String) {
        stub.withLockedValue { $0 = json }
    }

    func verifier(
        sharedSecret: String? = ReceiptHarness.secret,
        bundleID: String = ReceiptHarness.bundleID,
        accepting environments: Set<AppStoreEnvironment> = [.production, .sandbox],
        productionURL: URL? = nil,
        sandboxURL: URL? = nil,
        timeout: TimeAmount = .seconds(30),
        logger: Logger? = nil
    ) -> AppStoreReceiptVerifier {
        var quiet = Logger(label: "test.appstore.receipt")
        quiet.logLevel = .critical
        return AppStoreReceiptVerifier(
            httpClient: .shared, productionURL: productionURL ?? self.productionURL, sandboxURL: sandboxURL ?? self.sandboxURL,
            sharedSecret: sharedSecret, bundleID: bundleID, acceptedEnvironments: environments, timeout: timeout,
            logger: logger ?? quiet
        )
    }

    /// Posts `body` to `url` and returns the JSON object answered.
    func post(_ body: String, to url: URL) async throws -> [String: Any] {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 1 << 22)
        let object = try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))
        return try #require(object as? [String: Any])
    }

    /// GETs `url` and returns the JSON object answered.
    func get(_ url: URL) async throws -> [String: Any] {
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 1 << 22)
        let object = try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))
        return try #require(object as? [String: Any])
    }
}

func withReceiptHarness(sharedSecret: String? = ReceiptHarness.secret, _ body: (ReceiptHarness) async throws -> Void) async throws {
    let harness = try await ReceiptHarness.start(sharedSecret: sharedSecret)
    do {
        try await body(harness)
    } catch {
        try? await harness.shutdown()
        throw error
    }
    try await harness.shutdown()
}

/// Runs `body` and returns the ``PurchaseVerificationError`` it threw, or records an issue.
func purchaseError(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async -> PurchaseVerificationError? {
    do {
        try await body()
        Issue.record("expected a PurchaseVerificationError, got success", sourceLocation: sourceLocation)
    } catch let error as PurchaseVerificationError {
        return error
    } catch {
        Issue.record("expected a PurchaseVerificationError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// Keeps every log record (message and metadata, rendered as text) in memory.
struct CapturingLogHandler: LogHandler {
    let records: NIOLockedValueBox<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        records.withLockedValue { $0.append("\(event.level) \(event.message) \(merged)") }
    }
}

@Suite("App Store receipts (verifyReceipt)")
struct AppStoreReceiptTests {
    static let start = Date(timeIntervalSince1970: 1_760_000_000.123)
    static let week: TimeInterval = 604_800

    static func weekly(_ id: String, original: String? = nil, week index: Int, product: String = "calls.weekly") -> SandboxReceiptTransaction {
        let purchase = start.addingTimeInterval(Double(index) * week)
        return SandboxReceiptTransaction(
            productID: product, transactionID: id, originalTransactionID: original, purchaseDate: purchase,
            expiresDate: purchase.addingTimeInterval(week)
        )
    }

    static func pack(_ id: String, minutes: Double, quantity: Int = 1) -> SandboxReceiptTransaction {
        SandboxReceiptTransaction(
            productID: "calls.pack10", transactionID: id, purchaseDate: start.addingTimeInterval(minutes * 60), quantity: quantity)
    }

    // MARK: - Environments

    @Test func productionReceiptVerifies() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(environment: .production, transactions: [Self.weekly("1000", week: 0)])
            let result = try await harness.verifier(accepting: [.production]).verifyWithRenewalInfo(
                receiptData: receipt, productID: "calls.weekly")
            let purchase = result.purchase
            #expect(purchase.productID == "calls.weekly")
            #expect(purchase.transactionID == "1000")
            #expect(purchase.originalTransactionID == "1000")
            #expect(purchase.purchaseDate == Self.start)
            #expect(purchase.expiresDate == Self.start.addingTimeInterval(Self.week))
            #expect(purchase.environment == .production)
            #expect(purchase.bundleID == ReceiptHarness.bundleID)
            #expect(purchase.signedDate == nil)
            #expect(purchase.revocationDate == nil)
            #expect(purchase.productType == "Auto-Renewable Subscription")
            #expect(purchase.quantity == 1)
            #expect(purchase.ownershipType == "PURCHASED")
            #expect(result.renewalInfo?.willAutoRenew == true)
            #expect(result.renewalInfo?.autoRenewProductID == "calls.weekly")
            #expect(result.renewalInfo?.environment == .production)
            #expect(result.latestReceipt == receipt)

            let log = harness.validator.verifications()
            #expect(log.map(\.endpoint) == [.production])
            #expect(log.map(\.status) == [0])
            #expect(log.first?.passwordProvided == true)
        }
    }

    @Test func sandboxReceiptIsRetriedAtTheSandboxAfter21007() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(environment: .sandbox, transactions: [Self.weekly("2000", week: 0)])
            let purchase = try await harness.verifier().verify(receiptData: receipt, productID: "calls.weekly")
            #expect(purchase.environment == .sandbox)
            #expect(purchase.transactionID == "2000")

            let log = harness.validator.verifications()
            #expect(log.map(\.endpoint) == [.production, .sandbox])
            #expect(log.map(\.status) == [21007, 0])
            #expect(log.map(\.id) == [1, 2])
            #expect(log.allSatisfy { $0.receiptEnvironment == .sandbox })
            // The recorder in front of the emulator saw the same two requests, in order, without the shared secret.
            let recorded = harness.recorder.requests()
            #expect(recorded.map(\.path) == ["/sandbox/app-store/verifyReceipt/production", "/sandbox/app-store/verifyReceipt/sandbox"])
            #expect(recorded.allSatisfy { !($0.body ?? "").contains(ReceiptHarness.secret) })
            #expect(recorded.allSatisfy { ($0.body ?? "").contains(#""password":"[REDACTED]""#) })
        }
    }

    @Test func sandboxReceiptIsRefusedWhenOnlyProductionIsAccepted() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(environment: .sandbox, transactions: [Self.weekly("2100", week: 0)])
            let error = await purchaseError {
                _ = try await harness.verifier(accepting: [.production]).verify(receiptData: receipt, productID: "calls.weekly")
            }
            #expect(error == .wrongEnvironment("the receipt comes from the Sandbox environment (21007), which is not accepted"))
            // The sandbox is not even asked.
            #expect(harness.validator.verifications().map(\.endpoint) == [.production])
        }
    }

    @Test func productionReceiptIsRefusedWhenOnlySandboxIsAccepted() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(environment: .production, transactions: [Self.weekly("2200", week: 0)])
            let error = await purchaseError {
                _ = try await harness.verifier(accepting: [.sandbox]).verify(receiptData: receipt, productID: "calls.weekly")
            }
            #expect(error == .wrongEnvironment("the receipt comes from the Production environment, which is not accepted"))
        }
    }

    @Test func xcodeReceiptCannotBeAuthenticated() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(environment: .xcode, transactions: [Self.weekly("2300", week: 0)])
            let error = await purchaseError { _ = try await harness.verifier().verify(receiptData: receipt, productID: "calls.weekly") }
            #expect(error == .invalidSignature("the App Store could not authenticate the receipt (21003)"))
        }
    }

    // MARK: - Choosing the purchase

    @Test func latestExpiryWinsEvenWhenNotLast() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(
                environment: .production,
                transactions: [
                    Self.weekly("3002", original: "3000", week: 2),
                    Self.weekly("3000", week: 0),
                    Self.weekly("3001", original: "3000", week: 1),
                    Self.weekly("3100", week: 5, product: "calls.monthly"),
                ])
            let purchase = try await harness.verifier().verify(receiptData: receipt, productID: "calls.weekly")
            #expect(purchase.transactionID == "3002")
            #expect(purchase.originalTransactionID == "3000")
            #expect(purchase.expiresDate == Self.start.addingTimeInterval(3 * Self.week))
            #expect(purchase.purchaseDate == Self.start.addingTimeInterval(2 * Self.week))
        }
    }

    @Test func renewalAppendedToTheInstallationShowsInOlderReceipts() async throws {
        try await withReceiptHarness { harness in
            let first = harness.validator.issueReceipt(environment: .production, transactions: [Self.weekly("3200", week: 0)])
            let grown = try #require(
                harness.validator.appendTransaction(Self.weekly("3201", original: "3200", week: 1), toReceipt: first))
            #expect(grown != first)
            #expect(harness.validator.transactions(inReceipt: first)?.map(\.transactionID) == ["3200", "3201"])

            let result = try await harness.verifier().verifyWithRenewalInfo(receiptData: first, productID: "calls.weekly")
            #expect(result.purchase.transactionID == "3201")
            #expect(result.purchase.originalTransactionID == "3200")
            #expect(result.latestReceipt == grown)

            // The old receipt's own in_app still holds only the first purchase; latest_receipt_info has both.
            let answer = try await harness.post(Self.requestBody(first), to: harness.productionURL)
            let inApp = try #require((answer["receipt"] as? [String: Any])?["in_app"] as? [[String: Any]])
            #expect(inApp.compactMap { $0["transaction_id"] as? String } == ["3200"])
            let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
            #expect(latest.compactMap { $0["transaction_id"] as? String } == ["3200", "3201"])
            #expect(answer["latest_receipt"] as? String == grown)
        }
    }

    @Test func consumableComesFromInApp() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(
                environment: .production,
                transactions: [Self.pack("4002", minutes: 30, quantity: 3), Self.weekly("4100", week: 0), Self.pack("4001", minutes: 10)]
            )
            let result = try await harness.verifier().verifyWithRenewalInfo(receiptData: receipt, productID: "calls.pack10")
            #expect(result.purchase.transactionID == "4002")
            #expect(result.purchase.originalTransactionID == "4002")
            #expect(result.purchase.purchaseDate == Self.start.addingTimeInterval(30 * 60))
            #expect(result.purchase.expiresDate == nil)
            #expect(result.purchase.productType == nil)
            #expect(result.purchase.quantity == 3)
            #expect(result.renewalInfo == nil)
        }
    }

    @Test func consumableOnlyReceiptNeedsNoSharedSecret() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(environment: .production, transactions: [Self.pack("4200", minutes: 1)])
            let purchase = try await harness.verifier(sharedSecret: nil).verify(receiptData: receipt, productID: "calls.pack10")
            #expect(purchase.transactionID == "4200")
            #expect(harness.validator.verifications().first?.passwordProvided == false)
        }
    }

    @Test func productAbsentIsMalformed() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(environment: .production, transactions: [Self.weekly("5000", week: 0)])
            let error = await purchaseError { _ = try await harness.verifier().verify(receiptData: receipt, productID: "calls.pack10") }
            #expect(error == .malformed("the receipt holds no purchase of calls.pack10"))
        }
    }

    @Test func wrongBundleIsRefused() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(
                environment: .production, bundleID: "com.other.app", transactions: [Self.weekly("5100", week: 0)])
            let error = await purchaseError { _ = try await harness.verifier().verify(receiptData: receipt, productID: "calls.weekly") }
            #expect(error == .wrongBundle("the receipt belongs to com.other.app, not \(ReceiptHarness.bundleID)"))
        }
    }

    // MARK: - Refunds

    @Test func refundedConsumableSurfacesItsRevocation() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(environment: .production, transactions: [Self.pack("6000", minutes: 5)])
            let refundedAt = Self.start.addingTimeInterval(86_400)
            #expect(harness.validator.cancel(transactionID: "6000", at: refundedAt, reason: 1))
            let purchase = try await harness.verifier().verify(receiptData: receipt, productID: "calls.pack10")
            #expect(purchase.transactionID == "6000")
            #expect(purchase.revocationDate == refundedAt)
            #expect(purchase.revocationReason == 1)
        }
    }

    @Test func refundedRenewalIsPassedOverUnlessEveryOneIsRefunded() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(
                environment: .production, transactions: [Self.weekly("6100", week: 0), Self.weekly("6101", original: "6100", week: 1)])
            let refundedAt = Self.start.addingTimeInterval(Self.week + 3600)
            harness.validator.cancel(transactionID: "6101", at: refundedAt)

            let standing = try await harness.verifier().verify(receiptData: receipt, productID: "calls.weekly")
            #expect(standing.transactionID == "6100")
            #expect(standing.revocationDate == nil)

            harness.validator.cancel(transactionID: "6100", at: refundedAt)
            let refunded = try await harness.verifier().verify(receiptData: receipt, productID: "calls.weekly")
            #expect(refunded.transactionID == "6101")
            #expect(refunded.revocationDate == refundedAt)
            #expect(refunded.revocationReason == 0)
        }
    }

    // MARK: - Errors

    @Test func wrongSharedSecretIsAServerProblem() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(environment: .production, transactions: [Self.weekly("7000", week: 0)])
            let wrong = await purchaseError {
                _ = try await harness.verifier(sharedSecret: "not-the-secret").verify(receiptData: receipt, productID: "calls.weekly")
            }
            #expect(wrong == .unavailable("the configured shared secret was refused (21004)"))
            let missing = await purchaseError {
                _ = try await harness.verifier(sharedSecret: nil).verify(receiptData: receipt, productID: "calls.weekly")
            }
            #expect(missing == .unavailable("the configured shared secret was refused (21004)"))
            #expect(harness.validator.verifications().map(\.status) == [21004, 21004])
        }
    }

    @Test func garbledReceipts() async throws {
        try await withReceiptHarness { harness in
            let verifier = harness.verifier()
            let notBase64 = await purchaseError { _ = try await verifier.verify(receiptData: "%%% not a receipt %%%", productID: "calls.weekly") }
            #expect(notBase64 == .malformed("the App Store could not read the receipt data (21002: malformed or missing)"))

            let forged = Data((0..<256).map { UInt8($0) }).base64EncodedString()
            let unknown = await purchaseError { _ = try await verifier.verify(receiptData: forged, productID: "calls.weekly") }
            #expect(unknown == .invalidSignature("the App Store could not authenticate the receipt (21003)"))

            let empty = await purchaseError { _ = try await verifier.verify(receiptData: "  \n", productID: "calls.weekly") }
            #expect(empty == .malformed("the receipt data is empty"))
            // The empty receipt never left the server.
            #expect(harness.validator.verifications().map(\.status) == [21002, 21003])
        }
    }

    @Test func receiptWithLineBreaksStillMatches() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(environment: .production, transactions: [Self.pack("7100", minutes: 1)])
            var wrapped = ""
            for (index, character) in receipt.enumerated() {
                if index > 0 && index % 76 == 0 { wrapped += "\r\n" }
                wrapped.append(character)
            }
            let purchase = try await harness.verifier().verify(receiptData: wrapped, productID: "calls.pack10")
            #expect(purchase.transactionID == "7100")
        }
    }

    @Test(arguments: [
        (SandboxReceiptFailure.status(21005), "the App Store receipt server is temporarily unavailable (21005)"),
        (.status(21009), "the App Store had an internal data access error (21009)"),
        (.status(21150), "the App Store answered status 21150 and marked it retryable"),
        (.httpStatus(503), "the App Store production endpoint answered HTTP 503"),
        (.notJSON, "the App Store production endpoint answered something other than JSON"),
    ])
    func outagesAreUnavailable(failure: SandboxReceiptFailure, reason: String) async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(environment: .production, transactions: [Self.weekly("7200", week: 0)])
            harness.validator.failNextVerifications(with: failure)
            let error = await purchaseError { _ = try await harness.verifier().verify(receiptData: receipt, productID: "calls.weekly") }
            #expect(error == .unavailable(reason))
            // Once the outage is over the same receipt verifies.
            let purchase = try await harness.verifier().verify(receiptData: receipt, productID: "calls.weekly")
            #expect(purchase.transactionID == "7200")
        }
    }

    @Test func accountNotFoundIsMalformed() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(environment: .production, transactions: [Self.weekly("7300", week: 0)])
            harness.validator.failNextVerifications(with: .status(21010))
            let error = await purchaseError { _ = try await harness.verifier().verify(receiptData: receipt, productID: "calls.weekly") }
            #expect(error == .malformed("the App Store found no account for this receipt (21010: not found or deleted)"))
        }
    }

    @Test func productionReceiptAtTheSandboxAfter21007IsMalformed() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(environment: .production, transactions: [Self.weekly("7400", week: 0)])
            // Production claims it is a sandbox receipt; the sandbox then says it is a production one.
            harness.validator.failNextVerifications(with: .status(21007))
            let error = await purchaseError { _ = try await harness.verifier().verify(receiptData: receipt, productID: "calls.weekly") }
            #expect(
                error
                    == .malformed(
                        "the App Store sandbox endpoint called this a production receipt (21008) after production called it a sandbox receipt"
                    ))
            #expect(harness.validator.verifications().map(\.status) == [21007, 21008])
        }
    }

    @Test func unreachableAppStoreIsUnavailable() async throws {
        try await withReceiptHarness { harness in
            // Port 9 (discard) is privileged and outside the ephemeral range: nothing listens there, and no other test's
            // server can be given it (a port just bound and released could be, and answered 404 in a CI run).
            let closed = URL(string: "http://127.0.0.1:9/verifyReceipt")!

            let receipt = harness.validator.issueReceipt(environment: .production, transactions: [Self.weekly("7500", week: 0)])
            let error = await purchaseError {
                _ = try await harness.verifier(productionURL: closed, timeout: .seconds(1))
                    .verify(receiptData: receipt, productID: "calls.weekly")
            }
            guard case .unavailable(let reason)? = error else {
                Issue.record("expected unavailable, got \(String(describing: error))")
                return
            }
            #expect(reason.hasPrefix("the App Store production endpoint could not be reached"))
        }
    }

    @Test func slowAppStoreTimesOut() async throws {
        try await withReceiptHarness { harness in
            let clock = ContinuousClock()
            let started = clock.now
            let error = await purchaseError {
                _ = try await harness.verifier(productionURL: harness.slowURL, timeout: .milliseconds(300))
                    .verify(receiptData: "MIIAAA==", productID: "calls.weekly")
            }
            guard case .unavailable(let reason)? = error else {
                Issue.record("expected unavailable, got \(String(describing: error))")
                return
            }
            // The reason shows the 300 ms timeout fired (the stub answers after 3 s, with a body that is not JSON). The
            // bound only catches a verifier that waits for the stub or retries without end: a loaded 2-core machine
            // once took 4.3 s here.
            #expect(reason.hasPrefix("the App Store production endpoint could not be reached"))
            #expect(clock.now - started < .seconds(15))
        }
    }

    @Test func neitherTheReceiptNorTheSecretIsLogged() async throws {
        try await withReceiptHarness { harness in
            let records = NIOLockedValueBox<[String]>([])
            let logger = Logger(label: "test.capture") { _ in CapturingLogHandler(records: records) }
            let sandbox = harness.validator.issueReceipt(environment: .sandbox, transactions: [Self.weekly("7600", week: 0)])
            let production = harness.validator.issueReceipt(environment: .production, transactions: [Self.pack("7601", minutes: 1)])
            _ = try await harness.verifier(logger: logger).verify(receiptData: sandbox, productID: "calls.weekly")
            _ = try await harness.verifier(logger: logger).verify(receiptData: production, productID: "calls.pack10")
            _ = await purchaseError {
                _ = try await harness.verifier(sharedSecret: "wrong-secret-value", logger: logger)
                    .verify(receiptData: sandbox, productID: "calls.weekly")
            }
            _ = await purchaseError {
                _ = try await harness.verifier(logger: logger).verify(receiptData: production, productID: "calls.absent")
            }
            let lines = records.withLockedValue { $0 }
            #expect(lines.contains { $0.contains("appstore.receipt.verified") && $0.contains("7600") })
            #expect(lines.contains { $0.contains("21004") })
            for line in lines {
                #expect(!line.contains(ReceiptHarness.secret))
                #expect(!line.contains("wrong-secret-value"))
                #expect(!line.contains(String(sandbox.prefix(40))))
                #expect(!line.contains(String(production.prefix(40))))
            }
        }
    }

    // MARK: - Reading Apple's answer

    @Test func datesComeFromTheMillisecondFieldsAndNumbersMayBeStringsOrNumbers() async throws {
        try await withReceiptHarness { harness in
            harness.stubAnswer(
                #"""
                {"status": 0, "environment": "Production",
                 "receipt": {"bundle_id": "app.chorus.calls", "application_version": "7",
                   "in_app": [{"product_id": "calls.weekly", "transaction_id": "900", "quantity": 1,
                               "purchase_date": "2001-01-01 00:00:00 Etc/GMT", "purchase_date_ms": 1760000000123,
                               "expires_date": "2001-01-08 00:00:00 Etc/GMT", "expires_date_ms": "1760604800123"}]},
                 "latest_receipt_info": [
                   {"product_id": "calls.weekly", "transaction_id": "901", "original_transaction_id": "900",
                    "purchase_date": "2001-01-08 00:00:00 Etc/GMT", "purchase_date_ms": "1760604800123",
                    "expires_date_ms": "1761209600123", "quantity": "1", "cancellation_date_ms": "1760700000000",
                    "cancellation_reason": "1"},
                   {"product_id": "calls.other", "transaction_id": "x", "quantity": {"odd": true}}],
                 "pending_renewal_info": [{"original_transaction_id": "900", "product_id": "calls.weekly",
                   "auto_renew_product_id": "calls.monthly", "auto_renew_status": "0", "expiration_intent": "1",
                   "is_in_billing_retry_period": "1", "grace_period_expires_date_ms": "1760700000000"}]}
                """#)
            let result = try await harness.verifier(productionURL: harness.stubURL)
                .verifyWithRenewalInfo(receiptData: "MIIAAA==", productID: "calls.weekly")
            // 901 is refunded, so the standing 900 (from in_app, with a numeric purchase_date_ms) is chosen.
            #expect(result.purchase.transactionID == "900")
            #expect(result.purchase.originalTransactionID == "900")
            #expect(result.purchase.purchaseDate == Date(timeIntervalSince1970: 1_760_000_000.123))
            #expect(result.purchase.expiresDate == Date(timeIntervalSince1970: 1_760_604_800.123))
            #expect(result.purchase.revocationDate == nil)
            let renewal = try #require(result.renewalInfo)
            #expect(renewal.willAutoRenew == false)
            #expect(renewal.autoRenewProductID == "calls.monthly")
            #expect(renewal.expirationIntent == 1)
            #expect(renewal.isInBillingRetryPeriod == true)
            #expect(renewal.gracePeriodExpiresDate == Date(timeIntervalSince1970: 1_760_700_000))
        }
    }

    @Test func unknownEnvironmentAndMissingReceiptAreMalformed() async throws {
        try await withReceiptHarness { harness in
            let verifier = harness.verifier(productionURL: harness.stubURL)
            harness.stubAnswer(#"{"status": 0, "environment": "Staging", "receipt": {"bundle_id": "app.chorus.calls", "in_app": []}}"#)
            let unknown = await purchaseError { _ = try await verifier.verify(receiptData: "MIIAAA==", productID: "calls.weekly") }
            #expect(unknown == .malformed("the App Store answered an unknown environment Staging"))

            harness.stubAnswer(#"{"status": 0, "environment": "Production"}"#)
            let missing = await purchaseError { _ = try await verifier.verify(receiptData: "MIIAAA==", productID: "calls.weekly") }
            #expect(missing == .malformed("the App Store's answer holds no receipt"))

            harness.stubAnswer(#"{"status": 21001}"#)
            let odd = await purchaseError { _ = try await verifier.verify(receiptData: "MIIAAA==", productID: "calls.weekly") }
            #expect(odd == .malformed("the App Store answered the unknown status 21001"))
        }
    }

    // MARK: - The emulator's wire format

    static func requestBody(_ receipt: String, password: String? = ReceiptHarness.secret) -> String {
        let passwordMember = password.map { #","password":"\#($0)""# } ?? ""
        return #"{"receipt-data":"\#(receipt)"\#(passwordMember),"exclude-old-transactions":false}"#
    }

    @Test func emulatorAnswersApplesShape() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(
                environment: .sandbox, transactions: [Self.weekly("8000", week: 0), Self.pack("8100", minutes: 3, quantity: 2)])
            harness.validator.setAutoRenew(false, originalTransactionID: "8000")
            let answer = try await harness.post(Self.requestBody(receipt), to: harness.sandboxURL)
            #expect(answer["status"] as? Int == 0)
            #expect(answer["environment"] as? String == "Sandbox")
            #expect(answer["latest_receipt"] as? String == receipt)

            let body = try #require(answer["receipt"] as? [String: Any])
            #expect(body["bundle_id"] as? String == ReceiptHarness.bundleID)
            #expect(body["receipt_type"] as? String == "ProductionSandbox")
            #expect(body["application_version"] is String)
            #expect(body["request_date_ms"] is String)
            let inApp = try #require(body["in_app"] as? [[String: Any]])
            #expect(inApp.count == 2)
            let pack = try #require(inApp.first { $0["product_id"] as? String == "calls.pack10" })
            #expect(pack["quantity"] as? String == "2")
            #expect(pack["purchase_date_ms"] as? String == "1760000180123")
            #expect(pack["purchase_date"] as? String == "2025-10-09 08:56:20 Etc/GMT")
            #expect(pack["expires_date_ms"] == nil)

            let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
            #expect(latest.compactMap { $0["product_id"] as? String } == ["calls.weekly"])
            let weekly = try #require(latest.first)
            #expect(weekly["transaction_id"] as? String == "8000")
            #expect(weekly["original_transaction_id"] as? String == "8000")
            #expect(weekly["expires_date_ms"] as? String == "1760604800123")
            #expect(weekly["purchase_date_ms"] as? String == "1760000000123")
            #expect(weekly["quantity"] as? String == "1")
            #expect(weekly["cancellation_date_ms"] == nil)

            let renewals = try #require(answer["pending_renewal_info"] as? [[String: Any]])
            #expect(renewals.count == 1)
            #expect(renewals.first?["auto_renew_status"] as? String == "0")
            #expect(renewals.first?["auto_renew_product_id"] as? String == "calls.weekly")
            #expect(renewals.first?["original_transaction_id"] as? String == "8000")
        }
    }

    @Test func emulatorStatusCodes() async throws {
        try await withReceiptHarness { harness in
            let production = harness.validator.issueReceipt(environment: .production, transactions: [Self.weekly("8200", week: 0)])
            let sandbox = harness.validator.issueReceipt(environment: .sandbox, transactions: [Self.weekly("8300", week: 0)])
            func status(_ body: String, at url: URL) async throws -> Int? {
                try await harness.post(body, to: url)["status"] as? Int
            }
            #expect(try await status("not json", at: harness.productionURL) == 21000)
            #expect(try await status(#"{"password":"x"}"#, at: harness.productionURL) == 21002)
            #expect(try await status(Self.requestBody("***"), at: harness.productionURL) == 21002)
            #expect(try await status(Self.requestBody("AAAA"), at: harness.productionURL) == 21003)
            #expect(try await status(Self.requestBody(sandbox), at: harness.productionURL) == 21007)
            #expect(try await status(Self.requestBody(production), at: harness.sandboxURL) == 21008)
            #expect(try await status(Self.requestBody(production, password: "wrong"), at: harness.productionURL) == 21004)
            #expect(try await status(Self.requestBody(production, password: nil), at: harness.productionURL) == 21004)
            #expect(try await status(Self.requestBody(production), at: harness.productionURL) == 0)
            #expect(try await status(Self.requestBody(sandbox), at: harness.sandboxURL) == 0)

            harness.validator.failNextVerifications(with: .status(21100))
            let retryable = try await harness.post(Self.requestBody(production), to: harness.productionURL)
            #expect(retryable["status"] as? Int == 21100)
            #expect(retryable["is-retryable"] as? Bool == true)

            // Neither the emulator's log nor the recorder keeps the shared secret.
            #expect(harness.recorder.requests().allSatisfy { !($0.body ?? "").contains(ReceiptHarness.secret) })
            let log = try JSONEncoder().encode(harness.validator.verifications())
            #expect(!String(decoding: log, as: UTF8.self).contains(ReceiptHarness.secret))
        }
    }

    @Test func controlAPIIssuesRenewsAndRefunds() async throws {
        try await withReceiptHarness { harness in
            let receipts = harness.baseURL.appendingPathComponent("sandbox/app-store/receipts")
            let issued = try await harness.post(
                #"{"environment": "Sandbox", "transactions": [{"product_id": "calls.weekly", "purchase_date": "2025-10-09T08:53:20Z", "#
                    + #""period_seconds": 604800}]}"#,
                to: receipts)
            let first = try #require(issued["receipt_data"] as? String)
            #expect(issued["environment"] as? String == "Sandbox")
            #expect(issued["bundle_id"] as? String == ReceiptHarness.bundleID)
            let original = try #require((issued["transactions"] as? [[String: Any]])?.first?["transaction_id"] as? String)

            // A renewal: its purchase date defaults to the previous expiry and its period repeats.
            let renewed = try await harness.post(
                #"{"receipt_data": "\#(first)", "transaction": {"product_id": "calls.weekly", "original_transaction_id": "\#(original)"}}"#,
                to: receipts.appendingPathComponent("transactions"))
            let grown = try #require(renewed["receipt_data"] as? String)
            let held = try #require(renewed["transactions"] as? [[String: Any]])
            #expect(held.count == 2)
            #expect(held.last?["purchase_date"] as? String == "2025-10-16T08:53:20Z")
            #expect(held.last?["expires_date"] as? String == "2025-10-23T08:53:20Z")
            let renewal = try #require(held.last?["transaction_id"] as? String)

            let purchase = try await harness.verifier().verify(receiptData: first, productID: "calls.weekly")
            #expect(purchase.transactionID == renewal)
            #expect(purchase.originalTransactionID == original)
            #expect(purchase.environment == .sandbox)
            #expect(purchase.expiresDate == Date(timeIntervalSince1970: 1_761_209_600))

            let refund = try await harness.post(
                #"{"transaction_id": "\#(renewal)", "reason": 1, "cancellation_date": "2025-10-17T00:00:00Z"}"#,
                to: receipts.appendingPathComponent("refunds"))
            #expect(refund["cancelled"] as? Bool == true)
            let afterRefund = try await harness.verifier().verify(receiptData: grown, productID: "calls.weekly")
            #expect(afterRefund.transactionID == original)

            let unknown = try await harness.post(#"{"transaction_id": "nope"}"#, to: receipts.appendingPathComponent("refunds"))
            #expect(unknown["detail"] as? String == "No receipt holds transaction nope.")
            let listed = try await harness.get(receipts.appendingPathComponent("verifications"))
            #expect((listed["verifications"] as? [[String: Any]])?.compactMap { $0["status"] as? Int } == [21007, 0, 21007, 0])
        }
    }

    @Test func emulatorWithoutSecretAcceptsAnyPassword() async throws {
        try await withReceiptHarness(sharedSecret: nil) { harness in
            let receipt = harness.validator.issueReceipt(environment: .production, transactions: [Self.weekly("8400", week: 0)])
            let purchase = try await harness.verifier(sharedSecret: "anything").verify(receiptData: receipt, productID: "calls.weekly")
            #expect(purchase.transactionID == "8400")
            #expect(harness.validator.redactedSecrets.isEmpty)
        }
    }

    @Test func excludeOldTransactionsKeepsTheLatestRenewal() async throws {
        try await withReceiptHarness { harness in
            let receipt = harness.validator.issueReceipt(
                environment: .production,
                transactions: [Self.weekly("8501", original: "8500", week: 1), Self.weekly("8500", week: 0)])
            let body = #"{"receipt-data":"\#(receipt)","password":"\#(ReceiptHarness.secret)","exclude-old-transactions":true}"#
            let answer = try await harness.post(body, to: harness.productionURL)
            let latest = try #require(answer["latest_receipt_info"] as? [[String: Any]])
            #expect(latest.compactMap { $0["transaction_id"] as? String } == ["8501"])
        }
    }
}
