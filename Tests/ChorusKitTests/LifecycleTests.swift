import ChorusKit
import Foundation
import Testing

#if canImport(Observation)
import Observation
#endif

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 5's lifecycle, through the SDK only, against a real server: trial, refusal, purchase, calls again.
@Suite("ChorusKit lifecycle (live server)")
struct LifecycleTests {
    @Test("register → trial calls → paymentRequired(trial_exhausted) → buy Basic → calls again → schedule, cancel → history")
    func lifecycle() async throws {
        try await LiveServer.run { server in
            let chorus = server.client()
            try await chorus.auth.register(email: LiveServer.newEmail("lifecycle"), password: "correct horse battery")

            // Trial.
            let usage = try await chorus.calls.usageStats()
            #expect(usage.isTrialActive && usage.trialCallsRemaining == 3 && usage.plan == nil && !usage.isSubscribed)
            let scenarios = try await chorus.calls.scenarios()
            #expect(scenarios.count == 23 && scenarios.first?.id == "default")
            #expect(scenarios.allSatisfy { $0.category.isKnown })
            let scenario = try #require(scenarios.first { $0.id != "default" })

            var placed: [PlacedCall] = []
            for index in 0..<3 {
                placed.append(try await chorus.calls.makeCall(to: "+1415555020\(index)", scenario: scenario.id))
            }
            #expect(placed.map(\.remaining.thisWeek) == [2, 1, 0])

            // The fourth call is refused, with what to buy.
            let refused = await #expect(throws: ChorusError.self) { try await chorus.calls.makeCall(to: "+14155550209") }
            guard case .paymentRequired(let refusal) = refused else {
                Issue.record("expected paymentRequired, got \(String(describing: refused))")
                return
            }
            #expect(refusal.reason == .trialExhausted)
            #expect(refusal.upgradeOptions.map(\.kind) == [.plan(.basic), .plan(.premium)])
            let basicOffer = try #require(refusal.upgradeOptions.first)
            #expect(basicOffer.productID == "speech_assistant_basic_weekly")
            let permission = try await chorus.calls.callPermission()
            #expect(!permission.canMakeCall && permission.status == .trialExhausted && permission.upgradeOptions == refusal.upgradeOptions)
            #expect(try await chorus.purchases.subscriptionStatus().state == .none)

            // Buy Basic: the sandbox App Store signs the transaction StoreKit 2 would hand the app.
            let signed = try await Self.sandboxSignedTransaction(server.baseURL, productID: basicOffer.productID)
            let result = try await chorus.purchases.purchase(signedTransaction: signed, productID: basicOffer.productID)
            #expect(result.isSubscribed && result.plan == .basic && result.callsRemainingThisWeek == 5)

            let subscription = try await chorus.purchases.subscriptionStatus()
            #expect(subscription.state == .active && subscription.plan == .basic && subscription.isSubscribed)
            #expect(subscription.billingCycle == .weekly && subscription.productID == basicOffer.productID)
            #expect(subscription.willRenew == true && subscription.nextPaymentDate != nil)

            // Calls are allowed again, charged to the plan.
            let allowed = try await chorus.calls.callPermission()
            #expect(allowed.canMakeCall && allowed.status == .basicCallAvailable && allowed.callsRemaining == 5)
            #expect(allowed.upgradeOptions.isEmpty)
            let paid = try await chorus.calls.makeCall(to: "+14155550210", scenario: scenario.id)
            #expect(paid.remaining.thisWeek == 4)
            let afterPurchase = try await chorus.calls.usageStats()
            #expect(afterPurchase.isSubscribed && afterPurchase.plan == .basic && afterPurchase.callsMadeTotal == 4)

            // Schedule a call, see it listed, cancel it.
            let time = Date().addingTimeInterval(3_600)
            let scheduled = try await chorus.calls.scheduleCall(to: "+14155550211", scenario: scenario.id, at: time)
            #expect(scheduled.status == .scheduled && scheduled.scenarioID == scenario.id && scheduled.callSid == nil)
            #expect(abs(scheduled.scheduledTime.timeIntervalSince(time)) < 1)
            #expect(try await chorus.calls.scheduledCalls().map(\.id) == [scheduled.id])
            let cancelled = try await chorus.calls.cancelScheduledCall(id: scheduled.id)
            #expect(cancelled.id == scheduled.id && cancelled.status == .cancelled)
            #expect(try await chorus.calls.scheduledCalls().first?.status == .cancelled)
            let missing = await #expect(throws: ChorusError.self) { try await chorus.calls.cancelScheduledCall(id: scheduled.id + 1_000) }
            guard case .notFound = missing else {
                Issue.record("expected notFound, got \(String(describing: missing))")
                return
            }

            // History, newest first, and one call in detail.
            let history = try await chorus.calls.callHistory(limit: 10)
            #expect(history.totalCalls == 4)
            #expect(history.calls.map(\.sid) == ([paid] + placed.reversed()).map(\.sid))
            #expect(history.calls.allSatisfy { $0.scenarioID == scenario.id && $0.durationLimit == 60 })
            let detail = try await chorus.calls.call(sid: paid.sid)
            #expect(detail.call.sid == paid.sid && detail.call.phoneNumber == "+14155550210")
            #expect(detail.transcriptDeletedAt == nil)
            let unknownCall = await #expect(throws: ChorusError.self) { try await chorus.calls.call(sid: "CA0000") }
            guard case .notFound = unknownCall else {
                Issue.record("expected notFound, got \(String(describing: unknownCall))")
                return
            }
        }
    }

    @Test("custom scenarios need a plan; with one: create, list, call with it, delete")
    func customScenarios() async throws {
        try await LiveServer.run { server in
            let chorus = server.client()
            try await chorus.auth.register(email: LiveServer.newEmail("custom"), password: "correct horse battery")
            let persona = "You are Captain Redbeard, a jolly pirate calling to recruit the callee for a treasure hunt."
            let voice = try #require(try await chorus.calls.voices().first)

            let refused = await #expect(throws: ChorusError.self) {
                try await chorus.calls.createCustomScenario(name: "Pirate", persona: persona, voiceID: voice.id)
            }
            guard case .paymentRequired(let refusal) = refused else {
                Issue.record("expected paymentRequired, got \(String(describing: refused))")
                return
            }
            #expect(refusal.reason == "subscription_required" && !refusal.reason.isKnown && !refusal.upgradeOptions.isEmpty)

            let product = "speech_assistant_premium_monthly"
            let signed = try await Self.sandboxSignedTransaction(server.baseURL, productID: product, periodSeconds: 2_592_000)
            #expect(try await chorus.purchases.purchase(signedTransaction: signed, productID: product).plan == .premium)

            let created = try await chorus.calls.createCustomScenario(name: "Pirate", persona: persona, voiceID: voice.id)
            #expect(created.id.hasPrefix("custom_") && created.name == "Pirate" && created.voiceID == voice.id)
            #expect(!created.leavesVoicemailMessage)
            let messenger = try await chorus.calls.createCustomScenario(
                name: "Pirate who leaves messages", persona: persona, voiceID: voice.id, leavesVoicemailMessage: true)
            #expect(messenger.leavesVoicemailMessage)
            #expect(try await chorus.calls.customScenarios() == [created, messenger])
            let call = try await chorus.calls.makeCall(to: "+14155550300", scenario: created.id)
            #expect(try await chorus.calls.callHistory().calls.first?.sid == call.sid)

            let invalid = await #expect(throws: ChorusError.self) {
                try await chorus.calls.createCustomScenario(name: "Short", persona: "too short", voiceID: "nobody")
            }
            guard case .validation(let fields) = invalid else {
                Issue.record("expected validation, got \(String(describing: invalid))")
                return
            }
            #expect(Set(fields.map(\.field)) == ["persona", "voice"])

            try await chorus.calls.deleteCustomScenario(id: created.id)
            #expect(try await chorus.calls.customScenarios() == [messenger])
            let gone = await #expect(throws: ChorusError.self) { try await chorus.calls.deleteCustomScenario(id: created.id) }
            guard case .notFound = gone else {
                Issue.record("expected notFound, got \(String(describing: gone))")
                return
            }
        }
    }

    @Test("a purchase the server refuses is an api error with its reason, and nothing changes")
    func refusedPurchase() async throws {
        try await LiveServer.run { server in
            let chorus = server.client()
            try await chorus.auth.register(email: LiveServer.newEmail("refused"), password: "correct horse battery")
            let product = "speech_assistant_basic_weekly"
            let signed = try await Self.sandboxSignedTransaction(server.baseURL, productID: product)

            let garbage = await #expect(throws: ChorusError.self) {
                try await chorus.purchases.purchase(signedTransaction: "not.a.jws", productID: product)
            }
            guard case .api(400, let reason) = garbage else {
                Issue.record("expected api(400), got \(String(describing: garbage))")
                return
            }
            #expect(reason.hasPrefix("Receipt validation failed"))

            try await chorus.purchases.purchase(signedTransaction: signed, productID: product)
            let replay = await #expect(throws: ChorusError.self) {
                try await chorus.purchases.purchase(signedTransaction: signed, productID: product)
            }
            guard case .api(400, "This transaction has already been processed") = replay else {
                Issue.record("expected api(400, already processed), got \(String(describing: replay))")
                return
            }
            #expect(try await chorus.purchases.subscriptionStatus().plan == .basic)
        }
    }

    @Test("auth.accountID is the appAccountToken: a purchase made with it is accepted for this account only")
    func appAccountToken() async throws {
        try await LiveServer.run { server in
            let chorus = server.client()
            #expect(await chorus.auth.accountID == nil)
            try await chorus.auth.register(email: LiveServer.newEmail("token"), password: "correct horse battery")
            let accountID = try #require(await chorus.auth.accountID)
            let issued = try await Self.sandboxPurchase(
                server.baseURL, productID: "speech_assistant_addon_calls", kind: "consumable", appAccountToken: accountID)
            let signed = try #require(issued["signed_transaction"] as? String)

            let other = server.client()
            try await other.auth.register(email: LiveServer.newEmail("other"), password: "correct horse battery")
            #expect(await other.auth.accountID != accountID)
            let refused = await #expect(throws: ChorusError.self) {
                try await other.purchases.purchase(signedTransaction: signed, productID: "speech_assistant_addon_calls")
            }
            guard case .api(400, "This purchase was made for another account") = refused else {
                Issue.record("expected api(400, another account), got \(String(describing: refused))")
                return
            }
            try await chorus.purchases.purchase(signedTransaction: signed, productID: "speech_assistant_addon_calls")
            #expect(try await chorus.calls.usageStats().addOnCallsRemaining == 5)
            try await chorus.auth.logout()
            #expect(await chorus.auth.accountID == nil)
        }
    }

    #if canImport(Observation)
    @Test("UsageModel: loads usage and permission, counts calls down, fills the upgrade options on refusal, and is observable")
    func usageModel() async throws {
        try await LiveServer.run { server in try await Self.exerciseUsageModel(server) }
    }

    @MainActor
    private static func exerciseUsageModel(_ server: LiveServer) async throws {
        let chorus = server.client()
        try await chorus.auth.register(email: LiveServer.newEmail("model"), password: "correct horse battery")
        let model = UsageModel(client: chorus)
        #expect(model.usage == nil && !model.canMakeCall && model.callsRemaining == 0 && model.error == nil)

        let changed = Changed()
        withObservationTracking {
            _ = model.callsRemaining
        } onChange: {
            changed.fire()
        }
        await model.refresh()
        #expect(changed.fired, "reading a property and refreshing notifies the observer")
        #expect(model.canMakeCall && model.callsRemaining == 3 && model.usage?.isTrialActive == true)
        #expect(model.upgradeOptions.isEmpty && !model.isUpgradeRecommended && !model.isLoading)

        for index in 0..<3 {
            let call = try await model.makeCall(to: "+1415555040\(index)")
            #expect(model.callsRemaining == 2 - index && call.remaining.thisWeek == 2 - index)
        }
        #expect(!model.canMakeCall && model.permission?.status == .trialExhausted)
        let refused = await #expect(throws: ChorusError.self) { try await model.makeCall(to: "+14155550409") }
        guard case .paymentRequired = refused else {
            Issue.record("expected paymentRequired, got \(String(describing: refused))")
            return
        }
        #expect(model.isUpgradeRecommended && model.upgradeOptions.map(\.kind) == [.plan(.basic), .plan(.premium)])

        try await chorus.auth.logout()
        await model.refresh()
        guard case .signedOut = model.error as? ChorusError else {
            Issue.record("expected signedOut, got \(String(describing: model.error))")
            return
        }
        #expect(model.usage?.callsMadeTotal == 3, "a failed refresh keeps the last values")
    }

    /// Records an Observation change notification (delivered on any thread).
    private final class Changed: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        var fired: Bool { lock.withLock { value } }
        func fire() { lock.withLock { value = true } }
    }
    #endif

    @Test("a legacy receipt buys the add-on pack: add-on calls after the trial")
    func legacyReceipt() async throws {
        try await LiveServer.run { server in
            let chorus = server.client()
            try await chorus.auth.register(email: LiveServer.newEmail("receipt"), password: "correct horse battery")
            let product = try await chorus.calls.pricing().addOnPack.productID
            let issued = try await Self.sandboxPurchase(server.baseURL, productID: product, kind: "consumable")
            let receiptText = try #require(issued["receipt_data"] as? String)
            let receipt = try #require(Data(base64Encoded: receiptText))
            let result = try await chorus.purchases.purchase(receipt: receipt, productID: product)
            #expect(!result.isSubscribed && result.plan == nil && result.addOnCallsRemaining > 0)
            let usage = try await chorus.calls.usageStats()
            #expect(usage.addOnCallsRemaining == result.addOnCallsRemaining && usage.addOnCallsExpiry != nil)
            #expect(try await chorus.purchases.subscriptionStatus().state == .none)
        }
    }

    /// `POST /sandbox/app-store/purchases` with plain URLSession: the signed transaction StoreKit 2 would give the app.
    static func sandboxSignedTransaction(_ baseURL: URL, productID: String, periodSeconds: Int = 604_800) async throws -> String {
        let issued = try await sandboxPurchase(baseURL, productID: productID, kind: "auto_renewable", periodSeconds: periodSeconds)
        return try #require(issued["signed_transaction"] as? String)
    }

    /// `POST /sandbox/app-store/purchases`: the transaction's JSON (`signed_transaction`, `receipt_data`, ids, dates).
    static func sandboxPurchase(
        _ baseURL: URL, productID: String, kind: String, periodSeconds: Int? = nil, appAccountToken: UUID? = nil
    ) async throws -> [String: Any] {
        var request = URLRequest(url: baseURL.appendingPathComponent("sandbox/app-store/purchases"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        var body: [String: Any] = ["product_id": productID, "kind": kind]
        body["period_seconds"] = periodSeconds
        body["app_account_token"] = appAccountToken?.uuidString.lowercased()
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 201, "\(String(decoding: data, as: UTF8.self))")
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
