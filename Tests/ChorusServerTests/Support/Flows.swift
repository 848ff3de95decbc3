import ChorusAPI
import Foundation
import Testing

/// Steps of the product used by many tests, each one real HTTP against the server and its sandbox.
extension TestServer {
    func usage(_ token: String) async throws -> UsageStatsResponse {
        let reply = try await request(.GET, "/mobile/usage-stats", token: token, headers: [("X-App-Type", "mobile")])
        #expect(reply.status == 200, "usage-stats: \(reply.text)")
        return try reply.decode(UsageStatsResponse.self)
    }

    func permission(_ token: String) async throws -> CallPermissionResponse {
        let reply = try await request(.POST, "/mobile/check-call-permission", token: token)
        #expect(reply.status == 200, "check-call-permission: \(reply.text)")
        return try reply.decode(CallPermissionResponse.self)
    }

    func makeCall(
        _ token: String, to number: String = "+14155550100", scenario: String = "default", headers: [(String, String)] = []
    )
        async throws -> Reply
    {
        try await request(.POST, "/mobile/make-call", token: token, json: MakeCallRequest(phoneNumber: number, scenario: scenario), headers: headers)
    }

    /// Buys `productID` through the sandbox App Store and posts it to purchase-subscription.
    @discardableResult
    func buy(_ token: String, productID: String, consumable: Bool = false, periodSeconds: Int = 7 * 86_400) async throws -> PurchaseResponse {
        let transaction = try await sandboxTransaction(productID: productID, consumable: consumable, periodSeconds: periodSeconds)
        let reply = try await request(
            .POST, "/mobile/purchase-subscription", token: token,
            json: PurchaseRequest(productID: productID, signedTransaction: transaction.signedTransaction)
        )
        #expect(reply.status == 200, "purchase: \(reply.text)")
        return try reply.decode(PurchaseResponse.self)
    }

    struct SandboxPurchase: Decodable {
        var transactionID: String
        var originalTransactionID: String
        var signedTransaction: String
        var receiptData: String

        enum CodingKeys: String, CodingKey {
            case transactionID = "transaction_id"
            case originalTransactionID = "original_transaction_id"
            case signedTransaction = "signed_transaction"
            case receiptData = "receipt_data"
        }
    }

    func sandboxTransaction(productID: String, consumable: Bool = false, periodSeconds: Int = 7 * 86_400) async throws -> SandboxPurchase {
        struct Body: Encodable {
            var product_id: String
            var kind: String
            var period_seconds: Int?
        }
        let reply = try await request(
            .POST, "/sandbox/app-store/purchases",
            json: Body(product_id: productID, kind: consumable ? "consumable" : "auto_renewable", period_seconds: consumable ? nil : periodSeconds)
        )
        #expect(reply.status == 201, "sandbox purchase: \(reply.text)")
        return try reply.decode(SandboxPurchase.self)
    }

    /// Tells the sandbox Twilio how the callee at `number` behaves.
    func setCallee(_ number: String, behavior: String, talkSeconds: Double? = nil, callbacks: Bool? = nil) async throws {
        struct Body: Encodable {
            var behavior: String
            var talk_seconds: Double?
            var callbacks: Bool?
        }
        let encoded = number.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? number
        let reply = try await request(
            .PUT, "/sandbox/callees/\(encoded)", json: Body(behavior: behavior, talk_seconds: talkSeconds, callbacks: callbacks))
        #expect((200..<300).contains(reply.status), "set callee: \(reply.text)")
    }

    func history(_ token: String, limit: Int = 100) async throws -> CallHistoryResponse {
        let reply = try await request(.GET, "/mobile/call-history?limit=\(limit)", token: token)
        #expect(reply.status == 200, "history: \(reply.text)")
        return try reply.decode(CallHistoryResponse.self)
    }

    /// Waits until the call `sid` reaches a terminal status and, if it was answered, its media bridge has reported
    /// (the bridge's ended reason refines the status callback's), and returns it.
    func waitForEnd(_ token: String, sid: String) async throws -> CallHistoryItem {
        var detail: CallDetailResponse?
        try await eventually(timeout: .seconds(30), "call \(sid) ends") {
            let reply = try await request(.GET, "/mobile/calls/\(sid)", token: token)
            detail = try reply.decode(CallDetailResponse.self)
            guard let detail, detail.call.endedReason != nil else { return false }
            return detail.answeredAt == nil || detail.latency != nil
        }
        return detail!.call
    }
}
