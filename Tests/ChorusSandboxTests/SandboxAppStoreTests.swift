import ChorusProviders
import ChorusSandbox
import Foundation
import Testing
import VaporTesting

@Suite("Sandbox App Store")
struct SandboxAppStoreTests {
    static let key = "sandbox-app-store-key"
    static let bundleID = "app.chorus.calls"
    static let start = Date(timeIntervalSince1970: 1_760_000_000.123)

    let store = SandboxAppStore(signingKey: Self.key, bundleID: Self.bundleID, now: { Self.start })
    let verifier = SandboxPurchaseVerifier(signingKey: Self.key, bundleID: Self.bundleID)

    @Test func issuedSubscriptionVerifies() async throws {
        let transaction = try await store.issueTransaction(productID: "calls.weekly", kind: .autoRenewable(period: 604_800))
        #expect(Int(transaction.transactionID) != nil)
        #expect(transaction.originalTransactionID == transaction.transactionID)

        let purchase = try await verifier.verifySignedTransaction(transaction.signedTransaction)
        #expect(purchase.productID == "calls.weekly")
        #expect(purchase.transactionID == transaction.transactionID)
        #expect(purchase.originalTransactionID == transaction.transactionID)
        #expect(purchase.purchaseDate == transaction.purchaseDate)
        #expect(abs(purchase.purchaseDate.timeIntervalSince(Self.start)) < 0.001)
        #expect(purchase.expiresDate == transaction.purchaseDate.addingTimeInterval(604_800))
        #expect(purchase.environment == .sandbox)
        #expect(purchase.bundleID == Self.bundleID)
    }

    @Test func signedTransactionUsesApplesFieldNames() async throws {
        let transaction = try await store.issueTransaction(productID: "calls.weekly", kind: .autoRenewable(period: 60))
        let payload = try decodePayload(transaction.signedTransaction)
        #expect(payload["transactionId"] as? String == transaction.transactionID)
        #expect(payload["originalTransactionId"] as? String == transaction.transactionID)
        #expect(payload["bundleId"] as? String == Self.bundleID)
        #expect(payload["productId"] as? String == "calls.weekly")
        #expect(payload["type"] as? String == "Auto-Renewable Subscription")
        #expect(payload["environment"] as? String == "Sandbox")
        #expect(payload["purchaseDate"] as? Int == 1_760_000_000_123)
        #expect(payload["expiresDate"] as? Int == 1_760_000_060_123)
        #expect(payload["signedDate"] is Int)
    }

    @Test func consumableHasNoExpiry() async throws {
        let transaction = try await store.issueTransaction(productID: "calls.pack10", kind: .consumable)
        let purchase = try await verifier.verifySignedTransaction(transaction.signedTransaction)
        #expect(purchase.expiresDate == nil)
        #expect(try decodePayload(transaction.signedTransaction)["type"] as? String == "Consumable")
    }

    @Test func receiptReturnsTheLatestPurchaseOfTheProduct() async throws {
        let first = try await store.issueTransaction(productID: "calls.weekly", kind: .autoRenewable(period: 604_800))
        let renewal = try await store.issueTransaction(
            productID: "calls.weekly", kind: .autoRenewable(period: 604_800),
            purchaseDate: Self.start.addingTimeInterval(604_800), originalTransactionID: first.transactionID
        )
        #expect(renewal.originalTransactionID == first.transactionID)
        let purchase = try await verifier.verifyReceipt(renewal.receiptData, productID: "calls.weekly")
        #expect(purchase.transactionID == renewal.transactionID)
        #expect(purchase.originalTransactionID == first.transactionID)

        await #expect(throws: PurchaseVerificationError.self) {
            try await verifier.verifyReceipt(renewal.receiptData, productID: "calls.monthly")
        }
        do {
            _ = try await verifier.verifyReceipt(first.receiptData, productID: "calls.monthly")
            Issue.record("expected malformed")
        } catch let PurchaseVerificationError.malformed(message) {
            #expect(message.contains("calls.monthly"))
        }
        await #expect(throws: PurchaseVerificationError.malformed("The receipt is not valid base64-encoded receipt data.")) {
            try await verifier.verifyReceipt("not a receipt", productID: "calls.weekly")
        }
    }

    @Test func notificationVerifies() async throws {
        let transaction = try await store.issueTransaction(productID: "calls.weekly", kind: .autoRenewable(period: 604_800))
        let uuid = UUID()
        let signed = try await store.signNotification(
            type: "DID_RENEW", subtype: nil, transaction: transaction, notificationUUID: uuid
        )
        let notification = try await verifier.verifyNotification(signed)
        #expect(notification.notificationType == "DID_RENEW")
        #expect(notification.subtype == nil)
        #expect(notification.notificationUUID == uuid.uuidString.lowercased())
        #expect(abs((notification.signedDate?.timeIntervalSince(Self.start) ?? 99)) < 0.001)
        #expect(notification.transaction?.transactionID == transaction.transactionID)

        let payload = try decodePayload(signed)
        let data = try #require(payload["data"] as? [String: Any])
        #expect(data["signedTransactionInfo"] as? String == transaction.signedTransaction)
        #expect(data["bundleId"] as? String == Self.bundleID)
        #expect(data["environment"] as? String == "Sandbox")

        let bare = try await store.signNotification(type: "TEST", subtype: nil, transaction: nil)
        #expect(try await verifier.verifyNotification(bare).transaction == nil)
    }

    @Test func tamperedJWSIsRejected() async throws {
        let transaction = try await store.issueTransaction(productID: "calls.weekly", kind: .autoRenewable(period: 604_800))
        let parts = transaction.signedTransaction.split(separator: ".").map(String.init)
        var payload = try decodePayload(transaction.signedTransaction)
        payload["productId"] = "calls.yearly"
        let forged = [parts[0], base64URL(try JSONSerialization.data(withJSONObject: payload)), parts[2]].joined(separator: ".")
        await #expect(throws: PurchaseVerificationError.invalidSignature("The JWS signature does not verify.")) {
            try await verifier.verifySignedTransaction(forged)
        }

        let otherKey = SandboxPurchaseVerifier(signingKey: "another-key", bundleID: Self.bundleID)
        await #expect(throws: PurchaseVerificationError.invalidSignature("The JWS signature does not verify.")) {
            try await otherKey.verifySignedTransaction(transaction.signedTransaction)
        }

        let unsigned = [base64URL(Data(#"{"alg":"none"}"#.utf8)), parts[1], ""].joined(separator: ".")
        await #expect(throws: PurchaseVerificationError.self) {
            try await verifier.verifySignedTransaction(unsigned)
        }
        await #expect(throws: PurchaseVerificationError.malformed("Not a compact JWS.")) {
            try await verifier.verifySignedTransaction("garbage")
        }
    }

    @Test func wrongBundleIsRejected() async throws {
        let transaction = try await store.issueTransaction(
            productID: "calls.weekly", kind: .autoRenewable(period: 604_800), bundleID: "com.example.other"
        )
        await #expect(throws: PurchaseVerificationError.self) {
            try await verifier.verifySignedTransaction(transaction.signedTransaction)
        }
        do {
            _ = try await verifier.verifySignedTransaction(transaction.signedTransaction)
        } catch let error as PurchaseVerificationError {
            guard case .wrongBundle = error else {
                Issue.record("expected wrongBundle, got \(error)")
                return
            }
        }
        let notification = try await store.signNotification(type: "SUBSCRIBED", subtype: "INITIAL_BUY", transaction: transaction)
        await #expect(throws: PurchaseVerificationError.self) {
            try await verifier.verifyNotification(notification)
        }
    }

    @Test func productionOnlyVerifierRejectsSandbox() async throws {
        let production = SandboxPurchaseVerifier(signingKey: Self.key, bundleID: Self.bundleID, acceptedEnvironments: [.production])
        let transaction = try await store.issueTransaction(productID: "calls.pack10", kind: .consumable)
        await #expect(throws: PurchaseVerificationError.wrongEnvironment("Environment Sandbox is not accepted.")) {
            try await production.verifySignedTransaction(transaction.signedTransaction)
        }
    }

    @Test func controlEndpointsIssuePurchasesAndNotifications() async throws {
        let services = SandboxServices(
            twilio: SandboxTwilio(accountSID: "AC1", authToken: "sandbox-token-for-app-store-tests", httpClient: .shared),
            appStore: SandboxAppStore(signingKey: Self.key, bundleID: Self.bundleID)
        )
        try await withApp(configure: { app in services.register(on: app.grouped("sandbox")) }) { app in
            var issued: [String: Any] = [:]
            try await app.testing().test(
                .POST, "sandbox/app-store/purchases",
                beforeRequest: { request in
                    request.headers.contentType = .json
                    request.body = ByteBuffer(string: #"{"product_id":"calls.weekly","kind":"auto_renewable","period_seconds":604800}"#)
                },
                afterResponse: { response in
                    #expect(response.status == .created)
                    issued = try #require(try JSONSerialization.jsonObject(with: Data(response.body.string.utf8)) as? [String: Any])
                }
            )
            let signed = try #require(issued["signed_transaction"] as? String)
            let receipt = try #require(issued["receipt_data"] as? String)
            let original = try #require(issued["original_transaction_id"] as? String)
            #expect(issued["transaction_id"] as? String == original)
            #expect(try await verifier.verifySignedTransaction(signed).productID == "calls.weekly")
            #expect(try await verifier.verifyReceipt(receipt, productID: "calls.weekly").originalTransactionID == original)

            var signedPayload = ""
            try await app.testing().test(
                .POST, "sandbox/app-store/notifications",
                beforeRequest: { request in
                    request.headers.contentType = .json
                    request.body = ByteBuffer(
                        string: #"{"notification_type":"DID_RENEW","subtype":null,"original_transaction_id":"\#(original)","#
                            + #""product_id":"calls.weekly","period_seconds":604800}"#
                    )
                },
                afterResponse: { response in
                    #expect(response.status == .created)
                    let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body.string.utf8)) as? [String: Any])
                    signedPayload = try #require(json["signed_payload"] as? String)
                }
            )
            let notification = try await verifier.verifyNotification(signedPayload)
            #expect(notification.notificationType == "DID_RENEW")
            let renewal = try #require(notification.transaction)
            #expect(renewal.originalTransactionID == original)
            #expect(renewal.transactionID != original)

            try await app.testing().test(
                .POST, "sandbox/app-store/purchases",
                beforeRequest: { request in
                    request.headers.contentType = .json
                    request.body = ByteBuffer(string: #"{"product_id":"x","kind":"lifetime"}"#)
                },
                afterResponse: { response in
                    #expect(response.status == .badRequest)
                    #expect(response.body.string.contains("detail"))
                }
            )
            try await app.testing().test(.GET, "sandbox/requests") { response in
                #expect(response.body.string.contains("/sandbox/app-store/purchases"))
            }
        }
    }
}

func decodePayload(_ jws: String) throws -> [String: Any] {
    let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
    var base64 = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    let data = try #require(Data(base64Encoded: base64))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}
