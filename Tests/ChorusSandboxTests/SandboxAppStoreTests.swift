import ChorusProviders
import ChorusSandbox
import Foundation
import Testing
import VaporTesting

@Suite("Sandbox App Store")
struct SandboxAppStoreTests {
    static let bundleID = "app.chorus.calls"
    static let start = Date(timeIntervalSince1970: 1_760_000_000.123)

    let store: SandboxAppStore
    let verifier: AppStoreSignedDataVerifier

    init() throws {
        store = try SandboxAppStore.ephemeral(bundleID: Self.bundleID, now: { Self.start })
        verifier = AppStoreSignedDataVerifier(
            rootCertificates: [store.authority.rootCertificate], bundleID: Self.bundleID, appAppleID: nil, acceptedEnvironments: [.sandbox])
    }

    @Test("a subscription is signed like Apple's: ES256, three certificates, Apple's field names")
    func issuedSubscriptionVerifies() async throws {
        let token = UUID()
        let transaction = try store.issueTransaction(productID: "calls.weekly", kind: .autoRenewable(period: 604_800), appAccountToken: token)
        #expect(transaction.originalTransactionID == transaction.transactionID)
        let purchase = try await verifier.verifyTransaction(transaction.signedTransaction)
        #expect(purchase.productID == "calls.weekly" && purchase.transactionID == transaction.transactionID)
        #expect(abs(purchase.purchaseDate.timeIntervalSince(Self.start)) < 0.001)
        #expect(purchase.expiresDate == transaction.purchaseDate.addingTimeInterval(604_800))
        #expect(purchase.environment == .sandbox && purchase.bundleID == Self.bundleID && purchase.appAccountToken == token)

        let header = try decodeSegment(transaction.signedTransaction, 0)
        #expect(header["alg"] as? String == "ES256" && (header["x5c"] as? [String])?.count == 3)
        let payload = try decodePayload(transaction.signedTransaction)
        #expect(payload["type"] as? String == "Auto-Renewable Subscription")
        #expect(payload["purchaseDate"] as? Int == 1_760_000_000_123)
        #expect(payload["expiresDate"] as? Int == 1_760_604_800_123)
        #expect(store.receipts.transactions(inReceipt: transaction.receiptData)?.first?.transactionID == transaction.transactionID)
    }

    @Test("consumables have no expiry; a foreign bundle or a production-only verifier is refused")
    func consumableAndRefusals() async throws {
        let pack = try store.issueTransaction(productID: "calls.pack10", kind: .consumable)
        #expect(try await verifier.verifyTransaction(pack.signedTransaction).expiresDate == nil)
        let production = AppStoreSignedDataVerifier(
            rootCertificates: [store.authority.rootCertificate], bundleID: Self.bundleID, appAppleID: nil, acceptedEnvironments: [.production])
        await #expect(throws: PurchaseVerificationError.self) { try await production.verifyTransaction(pack.signedTransaction) }
        let foreign = try store.issueTransaction(productID: "calls.pack10", kind: .consumable, bundleID: "com.example.other")
        do {
            _ = try await verifier.verifyTransaction(foreign.signedTransaction)
            Issue.record("a foreign bundle verified")
        } catch let error as PurchaseVerificationError {
            guard case .wrongBundle = error else { throw error }
        }
        let apple = AppStoreSignedDataVerifier(bundleID: Self.bundleID, appAppleID: nil, acceptedEnvironments: [.sandbox])
        await #expect(throws: PurchaseVerificationError.self) { try await apple.verifyTransaction(pack.signedTransaction) }
    }

    @Test("renewals continue the chain from the previous expiry, keep the account token and grow the receipt")
    func renewalChain() async throws {
        let token = UUID()
        let first = try store.issueTransaction(productID: "calls.weekly", kind: .autoRenewable(period: 604_800), appAccountToken: token)
        let renewal = try store.issueTransaction(
            productID: "calls.weekly", kind: .autoRenewable(period: 604_800), originalTransactionID: first.transactionID)
        #expect(renewal.originalTransactionID == first.transactionID && renewal.purchaseDate == first.expiresDate)
        let verified = try await verifier.verifyTransaction(renewal.signedTransaction)
        #expect(verified.appAccountToken == token && verified.originalTransactionID == first.transactionID)
        #expect(store.receipts.transactions(inReceipt: renewal.receiptData)?.map(\.transactionID) == [first.transactionID, renewal.transactionID])
        #expect(store.latestTransaction(originalTransactionID: first.transactionID)?.transactionID == renewal.transactionID)
    }

    @Test("notifications carry the latest transaction and the renewal information Apple would send")
    func notificationsCarryRenewalInfo() async throws {
        let first = try store.issueTransaction(productID: "calls.weekly", kind: .autoRenewable(period: 604_800))
        let uuid = UUID()
        let renewed = try await verifier.verifyNotification(
            store.signNotification(type: "DID_RENEW", subtype: nil, transaction: first, notificationUUID: uuid))
        #expect(renewed.notificationUUID == uuid.uuidString.lowercased() && renewed.notificationType == "DID_RENEW")
        #expect(renewed.transaction?.transactionID == first.transactionID && renewed.status == 1)
        #expect(renewed.renewalInfo?.willAutoRenew == true && renewed.renewalInfo?.originalTransactionID == first.transactionID)

        func notify(_ body: String) async throws -> VerifiedNotification {
            try await verifier.verifyNotification(
                store.signNotification(for: JSONDecoder().decode(SandboxNotificationOrder.self, from: Data(body.utf8))))
        }
        let original = first.transactionID
        let grace = try await notify(
            #"{"notification_type":"DID_FAIL_TO_RENEW","subtype":"GRACE_PERIOD","original_transaction_id":"\#(original)","grace_period_seconds":86400}"#
        )
        #expect(grace.status == 4 && grace.renewalInfo?.isInBillingRetryPeriod == true)
        #expect(grace.renewalInfo?.gracePeriodExpiresDate == first.expiresDate?.addingTimeInterval(86_400))
        let off = try await notify(
            #"{"notification_type":"DID_CHANGE_RENEWAL_STATUS","subtype":"AUTO_RENEW_DISABLED","original_transaction_id":"\#(original)"}"#)
        #expect(off.renewalInfo?.willAutoRenew == false)
        let downgrade = try await notify(
            #"{"notification_type":"DID_CHANGE_RENEWAL_PREF","subtype":"DOWNGRADE","original_transaction_id":"\#(original)","product_id":"calls.lite"}"#
        )
        #expect(downgrade.renewalInfo?.autoRenewProductID == "calls.lite" && downgrade.transaction?.productID == "calls.weekly")
        let upgrade = try await notify(
            #"{"notification_type":"DID_CHANGE_RENEWAL_PREF","subtype":"UPGRADE","original_transaction_id":"\#(original)","product_id":"calls.monthly","period_seconds":2592000}"#
        )
        #expect(upgrade.transaction?.productID == "calls.monthly" && upgrade.transaction?.originalTransactionID == original)
        let refund = try await notify(#"{"notification_type":"REFUND","original_transaction_id":"\#(original)"}"#)
        #expect(refund.transaction?.revocationDate != nil && refund.status == 5)
        let test = try await verifier.verifyNotification(store.signNotification(type: "TEST", subtype: nil, transaction: nil))
        #expect(test.transaction == nil && test.renewalInfo == nil)
    }

    @Test func controlEndpointsIssuePurchasesAndNotifications() async throws {
        let services = SandboxServices(
            twilio: SandboxTwilio(accountSID: "AC1", authToken: "sandbox-token-for-app-store-tests", httpClient: .shared),
            appStore: store
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
            #expect(try await verifier.verifyTransaction(signed).productID == "calls.weekly")
            #expect(store.receipts.transactions(inReceipt: receipt)?.map(\.originalTransactionID) == [original])

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
    try decodeSegment(jws, 1)
}

func decodeSegment(_ jws: String, _ index: Int) throws -> [String: Any] {
    let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
    var base64 = String(parts[index]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    let data = try #require(Data(base64Encoded: base64))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}
