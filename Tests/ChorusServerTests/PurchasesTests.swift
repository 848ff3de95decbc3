import ChorusAPI
import ChorusProviders
import ChorusSandbox
import Foundation
import SQLKit
import Testing

@testable import ChorusServer

/// Purchases and the subscription lifecycle through the sandbox App Store: ES256-signed transactions and notifications
/// verified like Apple's, legacy receipts through the verifyReceipt emulator, notifications applied from the job queue.
@Suite("Purchases and App Store notifications")
struct PurchasesTests {
    static let basic = "speech_assistant_basic_weekly"
    static let premium = "speech_assistant_premium_monthly"
    static let addon = "speech_assistant_addon_calls"

    struct Notification: Encodable {
        var notification_type: String
        var subtype: String? = nil
        var original_transaction_id: String? = nil
        var product_id: String? = nil
        var period_seconds: Int? = nil
        var grace_period_seconds: Int? = nil
    }

    /// Has the sandbox App Store sign a notification (doing what Apple does before sending it).
    static func sign(_ server: TestServer, _ notification: Notification) async throws -> String {
        let reply = try await server.request(.POST, "/sandbox/app-store/notifications", json: notification)
        #expect(reply.status == 201, "sandbox notification: \(reply.text)")
        return try #require(reply.json["signed_payload"] as? String)
    }

    /// Delivers a signed notification to the webhook as Apple does.
    static func deliver(_ server: TestServer, _ signedPayload: String) async throws -> TestServer.Reply {
        try await server.request(.POST, "/mobile/app-store/webhook", json: AppStoreNotificationRequest(signedPayload: signedPayload))
    }

    static func status(_ server: TestServer, _ token: String) async throws -> SubscriptionStatusResponse {
        try await server.request(.GET, "/mobile/subscription-status", token: token).decode(SubscriptionStatusResponse.self)
    }

    /// Signs, delivers and waits until the subscription shows `expected`.
    static func notify(
        _ server: TestServer, _ token: String, _ notification: Notification, until expected: String
    ) async throws {
        let reply = try await deliver(server, try await sign(server, notification))
        #expect(reply.status == 200, "\(notification.notification_type): \(reply.text)")
        try await server.eventually("\(notification.notification_type) → \(expected)") {
            try await status(server, token).subscriptionStatus.rawValue == expected
        }
    }

    static func userID(ofAccessToken token: String) throws -> String {
        try #require(try CompactJWS.payload(token)["sub"] as? String)
    }

    @Test("lifecycle: purchase → renewal → grace period → billing retry → resubscribe → refund", arguments: TestDatabase.all)
    func lifecycle(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, options: .testing(clock: clock.closure)) { server in
            let token = try await server.register().accessToken
            #expect(try await Self.status(server, token).subscriptionStatus == "none")
            let purchase = try await server.sandboxTransaction(productID: Self.basic)
            let bought = try await server.request(
                .POST, "/mobile/purchase-subscription", token: token,
                json: PurchaseRequest(productID: Self.basic, signedTransaction: purchase.signedTransaction))
            #expect(bought.status == 200, "\(bought.text)")
            #expect(try bought.decode(PurchaseResponse.self).usageStats.isSubscribed)
            var status = try await Self.status(server, token)
            #expect(status.subscriptionStatus == "active" && status.isSubscribed && status.willRenew == true)
            #expect(status.subscriptionTier == "mobile_basic" && status.appStoreTransactionID == purchase.transactionID)
            let firstEnd = try #require(status.subscriptionEndDate)
            #expect(try await server.permission(token).canMakeCall)

            let original = purchase.originalTransactionID
            // Renewal at the end of the week: the period moves on by a week.
            clock.advance(days: 6.9)
            try await Self.notify(server, token, Notification(notification_type: "DID_RENEW", original_transaction_id: original), until: "active")
            try await server.eventually("the renewal is applied") {
                try await Self.status(server, token).subscriptionEndDate == firstEnd.addingTimeInterval(7 * 86_400)
            }
            status = try await Self.status(server, token)
            #expect(status.appStoreTransactionID != purchase.transactionID)

            // The next renewal fails: Apple's billing grace period keeps the plan for 3 days.
            clock.advance(days: 7.2)
            #expect(try await Self.status(server, token).subscriptionStatus == "expired")
            try await Self.notify(
                server, token,
                Notification(
                    notification_type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", original_transaction_id: original,
                    grace_period_seconds: 3 * 86_400),
                until: "grace_period")
            status = try await Self.status(server, token)
            #expect(status.isSubscribed && status.gracePeriodExpiresDate != nil)
            #expect(try await server.permission(token).canMakeCall)

            // The grace period ends unpaid: no calls, whether or not Apple's GRACE_PERIOD_EXPIRED arrives.
            clock.advance(days: 3.5)
            #expect(try await Self.status(server, token).subscriptionStatus == "billing_retry")
            #expect(try await !server.permission(token).canMakeCall)
            try await Self.notify(
                server, token, Notification(notification_type: "GRACE_PERIOD_EXPIRED", original_transaction_id: original), until: "billing_retry")
            #expect(try await !server.permission(token).canMakeCall)

            // The user resubscribes: a new period starts now.
            try await Self.notify(
                server, token, Notification(notification_type: "SUBSCRIBED", subtype: "RESUBSCRIBE", original_transaction_id: original),
                until: "active")
            #expect(try await server.permission(token).canMakeCall)

            // Apple refunds it: access ends at once.
            try await Self.notify(server, token, Notification(notification_type: "REFUND", original_transaction_id: original), until: "revoked")
            #expect(try await !server.permission(token).canMakeCall)
            #expect(try await !Self.status(server, token).isSubscribed)
        }
    }

    /// Issue 21: Apple tries to renew up to a day before the paid period ends, so DID_FAIL_TO_RENEW/GRACE_PERIOD can
    /// come while it still runs. `subscription_end_date` stays the paid period's end throughout; the grace period's end
    /// is `grace_period_expires_date`, from the notification on until access ends.
    @Test("a failed renewal with a grace period keeps the paid end date; the grace end has its own member", arguments: TestDatabase.all)
    func gracePeriodDates(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, options: .testing(clock: clock.closure)) { server in
            let token = try await server.register().accessToken
            _ = try await server.buy(token, productID: Self.basic)
            var status = try await Self.status(server, token)
            let paidEnd = try #require(status.subscriptionEndDate)
            let original = try #require(status.appStoreTransactionID)
            #expect(status.gracePeriodExpiresDate == nil)

            // The renewal fails half a day before the period ends, with a 3-day grace period.
            clock.advance(days: 6.5)
            let reply = try await Self.deliver(
                server,
                try await Self.sign(
                    server,
                    Notification(
                        notification_type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", original_transaction_id: original,
                        grace_period_seconds: 3 * 86_400)))
            #expect(reply.status == 200, "\(reply.text)")
            try await server.eventually("the grace period is recorded") { try await Self.status(server, token).gracePeriodExpiresDate != nil }
            status = try await Self.status(server, token)
            #expect(status.subscriptionStatus == "active" && status.isSubscribed)
            #expect(status.subscriptionEndDate == paidEnd)
            #expect(status.gracePeriodExpiresDate == paidEnd.addingTimeInterval(3 * 86_400))
            let raw = try await server.request(.GET, "/mobile/subscription-status", token: token).json
            #expect(raw["grace_period_expires_date"] as? String != nil)

            // The paid period is over: in the grace period, the end date is still the paid one.
            clock.advance(days: 1)
            status = try await Self.status(server, token)
            #expect(status.subscriptionStatus == "grace_period" && status.isSubscribed)
            #expect(status.subscriptionEndDate == paidEnd)
            #expect(status.gracePeriodExpiresDate == paidEnd.addingTimeInterval(3 * 86_400))
            #expect(try await server.permission(token).canMakeCall)

            // The grace period is over: no access and no grace end any more; the end date is the last paid period's.
            clock.advance(days: 3)
            status = try await Self.status(server, token)
            #expect(status.subscriptionStatus == "billing_retry" && !status.isSubscribed)
            #expect(status.subscriptionEndDate == paidEnd && status.gracePeriodExpiresDate == nil)
        }
    }

    @Test("auto-renew off is cancelled with access; an upgrade is premium at once; a downgrade waits for the renewal", arguments: TestDatabase.all)
    func renewalPreferences(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let purchase = try await server.buy(token, productID: Self.basic)
            #expect(purchase.usageStats.isSubscribed)
            let original = try #require(try await Self.status(server, token).appStoreTransactionID)
            try await Self.notify(
                server, token,
                Notification(notification_type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", original_transaction_id: original),
                until: "cancelled")
            #expect(try await Self.status(server, token).willRenew == false)
            #expect(try await server.permission(token).canMakeCall)

            try await Self.notify(
                server, token,
                Notification(
                    notification_type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", original_transaction_id: original, product_id: Self.premium,
                    period_seconds: 30 * 86_400),
                until: "cancelled")
            try await server.eventually("premium at once") { try await Self.status(server, token).subscriptionTier == "mobile_premium" }
            let permission = try await server.permission(token)
            // Premium's 30 calls this month, plus the 3 trial calls still unused.
            #expect(permission.details.callsRemainingThisMonth == 33, "\(permission)")

            try await Self.notify(
                server, token,
                Notification(
                    notification_type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", original_transaction_id: original, product_id: Self.basic),
                until: "cancelled")
            try await server.eventually("the downgrade is pending") {
                try await Self.status(server, token).renewsToProductID == Self.basic
            }
            #expect(try await Self.status(server, token).subscriptionTier == "mobile_premium")
        }
    }

    @Test("an add-on pack refunded loses its unused calls; a reversed refund gives them back", arguments: TestDatabase.all)
    func addonRefund(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let pack = try await server.sandboxTransaction(productID: Self.addon, consumable: true)
            let reply = try await server.request(
                .POST, "/mobile/purchase-subscription", token: token,
                json: PurchaseRequest(productID: Self.addon, signedTransaction: pack.signedTransaction))
            #expect(reply.status == 200)
            #expect(try await server.usage(token).addonCallsRemaining == 5)
            #expect(
                try await Self.deliver(
                    server, Self.sign(server, Notification(notification_type: "REFUND", original_transaction_id: pack.originalTransactionID))
                ).status == 200)
            try await server.eventually("the pack is emptied") { try await server.usage(token).addonCallsRemaining == 0 }
            #expect(
                try await Self.deliver(
                    server, Self.sign(server, Notification(notification_type: "REFUND_REVERSED", original_transaction_id: pack.originalTransactionID))
                ).status == 200)
            try await server.eventually("the pack is back") { try await server.usage(token).addonCallsRemaining == 5 }
        }
    }

    @Test("20 concurrent deliveries of one notification are stored and applied once", arguments: TestDatabase.all)
    func concurrentDeliveries(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            try await server.buy(token, productID: Self.basic)
            let original = try #require(try await Self.status(server, token).appStoreTransactionID)
            let signed = try await Self.sign(server, Notification(notification_type: "DID_RENEW", original_transaction_id: original))
            let messages = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let reply = try await Self.deliver(server, signed)
                        #expect(reply.status == 200)
                        return reply.json["message"] as? String ?? reply.text
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(messages.filter { $0 == "Notification received" }.count == 1)
            #expect(messages.filter { $0 == "Notification already received" }.count == 19)
            let sql = server.app.db as! any SQLDatabase
            try await server.eventually("the notification is applied") {
                try await sql.raw("SELECT outcome FROM app_store_notifications").all().map { try $0.decode(column: "outcome", as: String.self) }
                    == ["updated"]
            }
            // One job was queued and completed (completed jobs are deleted, just after the outcome is recorded): nothing
            // is left to apply it again.
            try await server.eventually("the notification's job is completed and deleted") {
                try await sql.raw("SELECT COUNT(*) AS n FROM jobs WHERE kind = 'apply_app_store_notification'").first()?
                    .decode(column: "n", as: Int.self) == 0
            }
            let renewals = try await sql.raw(
                "SELECT COUNT(*) AS n FROM app_store_transactions WHERE original_transaction_id = \(bind: original)"
            ).first()
            #expect(try renewals?.decode(column: "n", as: Int.self) == 2)
        }
    }

    @Test("a renewal signed before a later expiry, delivered after it, does not resurrect the subscription", arguments: TestDatabase.all)
    func outOfOrder(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, options: .testing(clock: clock.closure)) { server in
            let token = try await server.register().accessToken
            try await server.buy(token, productID: Self.basic)
            let original = try #require(try await Self.status(server, token).appStoreTransactionID)
            clock.advance(days: 6.9)
            let renewal = try await Self.sign(server, Notification(notification_type: "DID_RENEW", original_transaction_id: original))
            clock.advance(days: 0.01)
            let expiry = try await Self.sign(
                server, Notification(notification_type: "EXPIRED", subtype: "VOLUNTARY", original_transaction_id: original))
            #expect(try await Self.deliver(server, expiry).status == 200)
            try await server.eventually("expired") { try await Self.status(server, token).subscriptionStatus == "expired" }
            #expect(try await Self.deliver(server, renewal).status == 200)
            let sql = server.app.db as! any SQLDatabase
            try await server.eventually("the late renewal is processed") {
                try await sql.raw("SELECT outcome FROM app_store_notifications WHERE notification_type = 'DID_RENEW'").first()?
                    .decode(column: "outcome", as: String.self) == "stale"
            }
            let status = try await Self.status(server, token)
            #expect(status.subscriptionStatus == "expired" && !status.isSubscribed)
        }
    }

    @Test("unsigned, badly signed, foreign and wrong-environment notifications are refused and change nothing", arguments: TestDatabase.all)
    func rejectedNotifications(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            try await server.buy(token, productID: Self.basic)
            let original = try #require(try await Self.status(server, token).appStoreTransactionID)
            let genuine = try await Self.sign(server, Notification(notification_type: "EXPIRED", original_transaction_id: original))
            let parts = genuine.split(separator: ".").map(String.init)
            let unsigned = [CompactJWS.base64URL(Data(#"{"alg":"none"}"#.utf8)), parts[1], ""].joined(separator: ".")
            let tampered = [parts[0], parts[1], String(parts[2].reversed())].joined(separator: ".")

            // Signed by a CA the server does not trust, and by the trusted one for Production or another app.
            let stranger = try SandboxAppStore.ephemeral(bundleID: server.configuration.appStore.bundleID)
            let strangers = try stranger.signNotification(type: "TEST", subtype: nil, transaction: nil)
            let authority = try AppStoreTestAuthority.loadOrCreate(directory: server.configuration.dataDirectory)
            let production = SandboxAppStore(
                authority: authority, receipts: SandboxReceiptValidator(sharedSecret: nil, bundleID: "x"),
                bundleID: server.configuration.appStore.bundleID, environment: .production)
            let productionTest = try production.signNotification(type: "TEST", subtype: nil, transaction: nil)
            let foreignStore = SandboxAppStore(
                authority: authority, receipts: SandboxReceiptValidator(sharedSecret: nil, bundleID: "x"), bundleID: "com.example.other")
            let foreign = try foreignStore.signNotification(type: "TEST", subtype: nil, transaction: nil)

            for (name, payload, reason) in [
                ("unsigned", unsigned, "ES256"), ("tampered", tampered, "signature"), ("untrusted CA", strangers, "certificate"),
                ("production", productionTest, "Production"), ("foreign bundle", foreign, "com.example.other"),
            ] {
                let reply = try await Self.deliver(server, payload)
                #expect(reply.status == 400, "\(name): \(reply.text)")
                #expect(reply.detail?.contains(reason) == true, "\(name): \(reply.detail ?? "")")
            }
            let sql = server.app.db as! any SQLDatabase
            let stored = try await sql.raw("SELECT COUNT(*) AS n FROM app_store_notifications").first()
            #expect(try stored?.decode(column: "n", as: Int.self) == 0)
            #expect(try await Self.status(server, token).subscriptionStatus == "active")
        }
    }

    @Test("purchase refusals: product mismatch, unknown product, another account's purchase, refunded, replayed", arguments: TestDatabase.all)
    func purchaseRefusals(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await server.register().accessToken
            let bob = try await server.register().accessToken
            let pack = try await server.sandboxTransaction(productID: Self.addon, consumable: true)
            func post(_ token: String, _ productID: String, _ jws: String) async throws -> TestServer.Reply {
                try await server.request(
                    .POST, "/mobile/purchase-subscription", token: token, json: PurchaseRequest(productID: productID, signedTransaction: jws))
            }
            var reply = try await post(alice, Self.basic, pack.signedTransaction)
            #expect(reply.status == 400 && reply.detail == "Product ID mismatch")
            reply = try await post(alice, "speech_assistant_lifetime", pack.signedTransaction)
            #expect(reply.status == 400 && reply.detail == "Invalid product ID")
            reply = try await post(alice, Self.addon, "not.a.jws")
            #expect(reply.status == 400 && reply.detail?.hasPrefix("Receipt validation failed:") == true)

            struct ForAccount: Encodable {
                var product_id: String
                var kind = "consumable"
                var app_account_token: String
            }
            let alicesID = try Self.userID(ofAccessToken: alice)
            let forAlice = try await server.request(
                .POST, "/sandbox/app-store/purchases", json: ForAccount(product_id: Self.addon, app_account_token: alicesID))
            let alicesPack = try #require(forAlice.json["signed_transaction"] as? String)
            reply = try await post(bob, Self.addon, alicesPack)
            #expect(reply.status == 400 && reply.detail == "This purchase was made for another account")
            #expect(try await post(alice, Self.addon, alicesPack).status == 200)
            reply = try await post(alice, Self.addon, alicesPack)
            #expect(reply.status == 400 && reply.detail == "This transaction has already been processed")

            // A refunded transaction is refused.
            let refunded = try await Self.sign(server, Notification(notification_type: "REFUND", original_transaction_id: pack.originalTransactionID))
            let data = try #require(try CompactJWS.payload(refunded)["data"] as? [String: Any])
            reply = try await post(bob, Self.addon, try #require(data["signedTransactionInfo"] as? String))
            #expect(reply.status == 400 && reply.detail == "This transaction has been refunded or revoked")
            #expect(try await server.usage(bob).addonCallsRemaining == 0)
        }
    }

    @Test(
        "a notification that arrives before the app's post binds the subscription to appAccountToken; the app's post still succeeds once",
        arguments: TestDatabase.all)
    func notificationBeforePurchase(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            struct ForAccount: Encodable {
                var product_id = PurchasesTests.basic
                var kind = "auto_renewable"
                var period_seconds = 7 * 86_400
                var app_account_token: String
            }
            let bought = try await server.request(
                .POST, "/sandbox/app-store/purchases", json: ForAccount(app_account_token: try Self.userID(ofAccessToken: token)))
            let original = try #require(bought.json["original_transaction_id"] as? String)
            let firstJWS = try #require(bought.json["signed_transaction"] as? String)
            // Apple renews and notifies before the app has told the server anything.
            let renewal = try await Self.sign(server, Notification(notification_type: "DID_RENEW", original_transaction_id: original))
            #expect(try await Self.deliver(server, renewal).status == 200)
            try await server.eventually("the subscription exists for the user") {
                try await Self.status(server, token).subscriptionStatus == "active"
            }
            let renewalJWS = try #require((try CompactJWS.payload(renewal)["data"] as? [String: Any])?["signedTransactionInfo"] as? String)
            func post(_ jws: String) async throws -> TestServer.Reply {
                try await server.request(
                    .POST, "/mobile/purchase-subscription", token: token, json: PurchaseRequest(productID: Self.basic, signedTransaction: jws))
            }
            #expect(try await post(renewalJWS).status == 200)
            #expect(try await post(firstJWS).status == 200)
            let again = try await post(renewalJWS)
            #expect(again.status == 400 && again.detail == "This transaction has already been processed")
            let other = try await server.register().accessToken
            let stolen = try await server.request(
                .POST, "/mobile/purchase-subscription", token: other, json: PurchaseRequest(productID: Self.basic, signedTransaction: renewalJWS))
            #expect(stolen.status == 400)
        }
    }

    @Test("legacy receipts: verified production first, then sandbox on 21007; the seed's upgrade-subscription", arguments: TestDatabase.all)
    func legacyReceipts(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            let transaction = try await server.sandboxTransaction(productID: Self.basic)
            #expect(try await server.request(.DELETE, "/sandbox/app-store/receipts/verifications").status == 204)
            let reply = try await server.request(
                .POST, "/mobile/purchase-subscription", token: token,
                json: PurchaseRequest(receiptData: transaction.receiptData, isSandbox: false, productID: Self.basic))
            #expect(reply.status == 200, "\(reply.text)")
            let log = try await server.request(.GET, "/sandbox/app-store/receipts/verifications").json["verifications"] as? [[String: Any]] ?? []
            #expect(log.map { $0["endpoint"] as? String } == ["Production", "Sandbox"])
            #expect(log.map { $0["status"] as? Int } == [21007, 0])

            // The seed's legacy request: a weekly plan bought as `speech_assistant_weekly`.
            let other = try await server.register().accessToken
            let legacy = try await server.sandboxTransaction(productID: "speech_assistant_weekly")
            let upgrade = try await server.request(
                .POST, "/mobile/upgrade-subscription", token: other,
                json: UpgradeSubscriptionRequest(receiptData: legacy.receiptData, isSandbox: true, subscriptionTier: "mobile_weekly"))
            #expect(upgrade.status == 200, "\(upgrade.text)")
            let answer = try upgrade.decode(UpgradeSubscriptionResponse.self)
            #expect(answer.message == "Successfully upgraded to weekly subscription!" && answer.usageStats.isSubscribed)
            #expect(try await Self.status(server, other).subscriptionTier == "mobile_basic")
        }
    }

    @Test("the App Store unreachable: 503 with Retry-After, nothing changes", arguments: [TestDatabase.sqlite])
    func appStoreUnreachable(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { apple in
            // Another server stands in for an App Store that answers 404 to everything.
            let down = apple.baseURL + "/verifyReceipt-down"
            try await TestServer.run(
                on: database, environment: ["CHORUS_APPLE_VERIFY_RECEIPT_URL": down, "CHORUS_APPLE_VERIFY_RECEIPT_SANDBOX_URL": down]
            ) { server in
                let token = try await server.register().accessToken
                let transaction = try await server.sandboxTransaction(productID: Self.basic)
                let reply = try await server.request(
                    .POST, "/mobile/purchase-subscription", token: token,
                    json: PurchaseRequest(receiptData: transaction.receiptData, isSandbox: true, productID: Self.basic))
                #expect(reply.status == 503, "\(reply.text)")
                #expect(reply.headers.first(name: "Retry-After") == "30")
                #expect(try await Self.status(server, token).subscriptionStatus == "none")
                // The StoreKit 2 path needs no network: it still works.
                let signed = try await server.request(
                    .POST, "/mobile/purchase-subscription", token: token,
                    json: PurchaseRequest(productID: Self.basic, signedTransaction: transaction.signedTransaction))
                #expect(signed.status == 200)
            }
        }
    }
}
