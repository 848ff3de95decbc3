import ChorusAPI
import Foundation
import Testing

@testable import ChorusServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 21: an app written from the integration guide (seed 000) must work. The guide's own Swift client code — its
/// structs and functions, copied verbatim into ``Guide`` — runs with URLSession against a real server over loopback,
/// on SQLite and PostgreSQL. Only what cannot run here is left out (StoreKit, the Keychain, SwiftUI); where the guide
/// uses a type it never defines, the stand-in says so.
@Suite("The integration guide's Swift client")
struct GuideClientTests {
    @Test(
        "register, login, usage-stats, pricing, scenarios and voices signed out, permission, make-call, history, schedule, 402",
        arguments: TestDatabase.all)
    func mainFlows(_ database: TestDatabase) async throws {
        let clock = TestClock()
        try await TestServer.run(on: database, options: .testing(clock: clock.closure)) { server in
            var app = Guide.Client(baseURL: server.baseURL)
            let email = "guide-\(UUID().uuidString.prefix(8).lowercased())@example.com"

            // Authentication: the JSON register and the form-encoded login both decode as the guide's AuthResponse.
            let registered = try await app.registerUser(email: email, password: "guide-password-123")
            #expect(registered.token_type == "bearer" && !registered.access_token.isEmpty && !registered.refresh_token.isEmpty)
            let loggedIn = try await app.loginUser(email: email, password: "guide-password-123")
            #expect(loggedIn.token_type == "bearer")
            app.authManager.setTokens(loggedIn)

            // The catalog is public: getAvailableScenarios() sends no Authorization header.
            let scenarios = try await app.getAvailableScenarios()
            #expect(scenarios.count == 23 && scenarios.first?.id == "default" && scenarios.first?.category == "entertainment")
            #expect(scenarios.contains { $0.id == "instigator" && !$0.is_family_friendly })

            let usage = try await app.getUsageStats()
            #expect(usage.app_type == "mobile_consumer" && usage.is_trial_active && usage.trial_calls_remaining == 3)
            #expect(usage.subscription_tier == nil && usage.week_start_date != nil)

            let pricing = try await app.getPricing()
            #expect(pricing.plans.map(\.id) == ["basic", "premium"] && pricing.addon.id == "addon")

            let permission = try await app.checkCallPermission()
            #expect(permission.can_make_call && permission.status == "trial_call_available")
            #expect(permission.details.app_type == "mobile_consumer" && permission.details.duration_limit == 60)

            let call = try await app.makeCall(phoneNumber: "+14155550123", scenario: "default")
            #expect(call.call_sid.hasPrefix("CA") && call.status == "initiated" && call.duration_limit == 60)
            #expect(!call.usage_stats.upgrade_recommended)

            let history = try await app.getCallHistory()
            #expect(history.count == 1 && history.first?.call_sid == call.call_sid && history.first?.scenario == "default")
            #expect(history.first?.phone_number == "+14155550123")

            let scheduled = try await app.scheduleCall(
                phoneNumber: "+14155550124", scenario: "comedian", scheduledTime: clock.now.addingTimeInterval(3600))
            #expect(scheduled.status == "scheduled" && scheduled.scenario == "comedian" && scheduled.schedule_id > 0)

            // The trial period ends: make-call's own permission check refuses first. The guide tests for
            // "trial_calls_exhausted", a status its own reference never lists (`upgrade_required` here), so it ends up
            // in permissionDenied with the server's message.
            clock.advance(days: 8)
            do {
                _ = try await app.makeCall(phoneNumber: "+14155550123", scenario: "default")
                Issue.record("make-call after the trial went through")
            } catch let error as Guide.CallError {
                guard case .permissionDenied(let message) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(!message.isEmpty)
            }
            // The 402 body itself decodes as the guide's PaymentRequiredError.
            let refused = try await app.postMakeCallDirectly(phoneNumber: "+14155550123", scenario: "default")
            #expect(refused.detail.error == "upgrade_required" && refused.detail.upgrade_options?.isEmpty == false)
            #expect(refused.detail.upgrade_options?.first?.product_id == "speech_assistant_basic_weekly")
        }
    }

    @Test("the catalog without a token, with a valid one (custom scenarios follow), with a bad one (401)", arguments: TestDatabase.all)
    func publicCatalog(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let anonymous = try await server.request(.GET, "/mobile/scenarios")
            #expect(anonymous.status == 200, "\(anonymous.text)")
            let builtIn = try anonymous.decode(ScenariosResponse.self).scenarios
            #expect(builtIn.count == 23 && !builtIn.contains { $0.category == .custom })
            let voices = try await server.request(.GET, "/mobile/voices")
            #expect(voices.status == 200)
            #expect(try !voices.decode(VoicesResponse.self).voices.isEmpty)

            // A subscriber's custom scenario is listed after the built-in ones, for that subscriber only.
            let token = try await server.register().accessToken
            try await server.buy(token, productID: "speech_assistant_basic_weekly")
            let created = try await server.request(
                .POST, "/mobile/custom-scenarios", token: token,
                json: CreateCustomScenarioRequest(
                    name: "Pirate Captain", persona: "A cheerful pirate captain who talks about treasure maps and the sea.", voice: "ash"))
            #expect(created.status == 201, "\(created.text)")
            let custom = try created.decode(CustomScenarioDTO.self)
            let signedIn = try await server.request(.GET, "/mobile/scenarios", token: token).decode(ScenariosResponse.self).scenarios
            #expect(signedIn.count == 24 && Array(signedIn.prefix(23)) == builtIn)
            let entry = try #require(signedIn.last)
            #expect(entry.id == custom.id && entry.name == "Pirate Captain" && entry.category == .custom && entry.voice == "ash")
            #expect(entry.description == custom.persona && !entry.isFamilyFriendly && entry.contentWarning == nil)
            let other = try await server.register().accessToken
            #expect(try await server.request(.GET, "/mobile/scenarios", token: other).decode(ScenariosResponse.self).scenarios == builtIn)

            // A token that does not hold is refused, so an app notices its session ended.
            for path in ["/mobile/scenarios", "/mobile/voices"] {
                let bad = try await server.request(.GET, path, token: "not-a-token")
                #expect(bad.status == 401, "\(path): \(bad.text)")
                let malformed = try await server.request(.GET, path, headers: [("Authorization", "Basic abc")])
                #expect(malformed.status == 401, "\(path): \(malformed.text)")
            }
        }
    }

    @Test("signed-out catalog requests are rate limited per client IP", arguments: [TestDatabase.sqlite])
    func anonymousRateLimit(_ database: TestDatabase) async throws {
        // Fixed one-minute windows: the clock starts one second into one, so the four requests share it.
        let options = ChorusApp.Options.testing(clock: SharedRateLimitTests.alignedClock().closure)
        try await TestServer.run(on: database, environment: ["CHORUS_RATE_LIMITS": "user=3/60"], options: options) { server in
            for _ in 0..<3 { #expect(try await server.request(.GET, "/mobile/voices").status == 200) }
            let limited = try await server.request(.GET, "/mobile/scenarios")
            #expect(limited.status == 429, "\(limited.text)")
            #expect(limited.headers.first(name: "Retry-After") != nil)
            // A signed-in caller is counted per user, not per address.
            let token = try await server.register().accessToken
            #expect(try await server.request(.GET, "/mobile/scenarios", token: token).status == 200)
        }
    }

    @Test("purchase-subscription and upgrade-subscription decode with the guide's PurchaseResponse and UpgradeResponse", arguments: TestDatabase.all)
    func purchases(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            var app = Guide.Client(baseURL: server.baseURL)
            let email = "buyer-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            app.authManager.setTokens(try await app.registerUser(email: email, password: "guide-password-123"))

            // The guide sends the legacy receipt (receipt_data, is_sandbox, product_id) and decodes PurchaseResponse.
            let receipt = try await server.sandboxTransaction(productID: "speech_assistant_basic_weekly").receiptData
            let purchase = try await app.sendPurchase(
                productID: "speech_assistant_basic_weekly", receiptString: receipt, isSandbox: true)
            #expect(purchase.success && purchase.message == "Purchase processed successfully!")
            #expect(purchase.usage_stats.is_subscribed && purchase.usage_stats.subscription_tier == "mobile_basic")
            #expect(purchase.usage_stats.app_type == "mobile_consumer" && purchase.usage_stats.trial_calls_remaining == 3)
            // Everything usage-stats says, with the endpoint reference's remaining calls beside it.
            let usage = try await app.getUsageStats()
            #expect(purchase.usage_stats.subscription_tier == usage.subscription_tier)
            #expect(purchase.usage_stats.calls_made_total == usage.calls_made_total)
            #expect(purchase.usage_stats.week_start_date == usage.week_start_date)
            #expect(purchase.usage_stats.addon_calls_remaining == usage.addon_calls_remaining)
            let raw = try await server.request(
                .POST, "/mobile/purchase-subscription", token: app.authManager.accessToken ?? "",
                json: PurchaseRequest(
                    receiptData: try await server.sandboxTransaction(productID: "speech_assistant_addon_calls", consumable: true).receiptData,
                    isSandbox: true, productID: "speech_assistant_addon_calls"))
            #expect(raw.status == 200, "\(raw.text)")
            let stats = try #require(raw.json["usage_stats"] as? [String: Any])
            let permission = try await app.checkCallPermission()
            #expect(stats["calls_remaining_this_week"] as? Int == permission.details.calls_remaining_this_week)
            #expect(stats["calls_remaining_this_month"] as? Int == permission.details.calls_remaining_this_month)
            #expect(stats["addon_calls_remaining"] as? Int == 5 && stats.count == 19)

            // A receipt the App Store refuses: the guide's 400 branch decodes the error's `detail`.
            do {
                _ = try await app.sendPurchase(productID: "speech_assistant_basic_weekly", receiptString: "bm90IGEgcmVjZWlwdA==", isSandbox: true)
                Issue.record("a bad receipt was accepted")
            } catch let error as Guide.SubscriptionError {
                guard case .backendError(let detail) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(detail.hasPrefix("Receipt validation failed"))
            }

            // The legacy upgrade decodes as the guide's UpgradeResponse, whose usage_stats is the full UsageStats too.
            var legacy = Guide.Client(baseURL: server.baseURL)
            legacy.authManager.setTokens(try await legacy.registerUser(email: "legacy-" + email, password: "guide-password-123"))
            let weekly = try await server.sandboxTransaction(productID: "speech_assistant_weekly").receiptData
            let upgrade = try await legacy.sendUpgrade(receiptString: weekly, isSandbox: true, tier: "mobile_weekly")
            #expect(upgrade.success && upgrade.subscription_tier == "mobile_weekly")
            #expect(upgrade.usage_stats.is_subscribed && upgrade.usage_stats.subscription_tier == "mobile_weekly")
            #expect(upgrade.usage_stats.trial_calls_remaining == 3 && upgrade.usage_stats.app_type == "mobile_consumer")
        }
    }
}

/// The integration guide's client code (seed 000, "Authentication Flow" to "Additional Features"), verbatim but for
/// the parts marked. Namespaced so its names (`PurchaseResponse`, `UsageStats`...) do not shadow ChorusAPI's.
enum Guide {
    // MARK: Authentication Flow

    struct RegisterRequest: Codable {
        let email: String
        let password: String
    }

    struct AuthResponse: Codable {
        let access_token: String
        let refresh_token: String
        let token_type: String
    }

    /// The guide's AuthManager without ObservableObject and the Keychain.
    struct AuthManager {
        var isAuthenticated = false
        var accessToken: String?
        var refreshToken: String?

        mutating func setTokens(_ response: AuthResponse) {
            self.accessToken = response.access_token
            self.refreshToken = response.refresh_token
            self.isAuthenticated = true
        }

        func getAuthHeaders() -> [String: String] {
            guard let token = accessToken else { return [:] }
            return [
                "Authorization": "Bearer \(token)",
                "X-App-Type": "mobile",
                "User-Agent": "Speech-Assistant-Mobile-iOS/1.0",
            ]
        }
    }

    // MARK: Usage & Trial Management

    struct UsageStats: Codable {
        let app_type: String
        let is_trial_active: Bool
        let trial_calls_remaining: Int
        let trial_calls_used: Int
        let calls_made_today: Int
        let calls_made_this_week: Int
        let calls_made_this_month: Int
        let calls_made_total: Int
        let is_subscribed: Bool
        let subscription_tier: String?
        let upgrade_recommended: Bool
        let total_call_duration_this_week: Int?
        let total_call_duration_this_month: Int?
        let addon_calls_remaining: Int?
        let addon_calls_expiry: String?
        let week_start_date: String?
        let month_start_date: String?
    }

    struct PricingInfo: Codable {
        let plans: [PricingPlan]
        let addon: AddonPlan
    }

    struct PricingPlan: Codable {
        let id: String
        let name: String
        let price: String
        let billing: String
        let calls: String
        let duration_limit: String
        let features: [String]
    }

    struct AddonPlan: Codable {
        let id: String
        let name: String
        let price: String
        let calls: String
        let expires: String
        let description: String
    }

    struct CallPermission: Codable {
        let can_make_call: Bool
        let status: String
        let details: CallPermissionDetails
    }

    struct CallPermissionDetails: Codable {
        let calls_remaining_this_week: Int?
        let calls_remaining_this_month: Int?
        let duration_limit: Int?
        let addon_calls_remaining: Int?
        let trial_ends: String?
        let app_type: String?
        let message: String?
        let upgrade_options: [UpgradeOption]?
    }

    struct UpgradeOption: Codable {
        let plan: String
        let price: String
        let calls: String
        let product_id: String
    }

    // MARK: Making Calls

    struct Scenario: Codable, Identifiable {
        let id: String
        let name: String
        let description: String
        let icon: String
        let category: String  // New field for frontend categorization
        let is_family_friendly: Bool  // New field for content filtering
    }

    struct ScenariosResponse: Codable {
        let scenarios: [Scenario]
    }

    struct MakeCallRequest: Codable {
        let phone_number: String
        let scenario: String
    }

    struct CallResponse: Codable {
        let call_sid: String
        let status: String
        let duration_limit: Int
        let usage_stats: UsageStatsUpdate
    }

    struct UsageStatsUpdate: Codable {
        let calls_remaining_this_week: Int?
        let calls_remaining_this_month: Int?
        let addon_calls_remaining: Int?
        let upgrade_recommended: Bool
    }

    enum CallError: Error, LocalizedError {
        case trialExhausted
        case permissionDenied(String)
        case paymentRequired(PaymentRequiredError)
        case networkError(any Error)
    }

    struct PaymentRequiredError: Codable {
        let detail: PaymentDetail
    }

    struct PaymentDetail: Codable {
        let error: String
        let message: String
        let upgrade_options: [UpgradeOption]?
        let timestamp: String?
    }

    // MARK: Subscription Management

    struct UpgradeRequest: Codable {
        let receipt_data: String  // Base64 encoded receipt data
        let is_sandbox: Bool  // Whether this is a sandbox receipt
        let subscription_tier: String
    }

    struct UpgradeResponse: Codable {
        let success: Bool
        let message: String
        let subscription_tier: String
        let usage_stats: UsageStats
    }

    struct PurchaseRequest: Codable {
        let receipt_data: String
        let is_sandbox: Bool
        let product_id: String
    }

    struct PurchaseResponse: Codable {
        let success: Bool
        let message: String
        let usage_stats: UsageStats
    }

    enum SubscriptionError: Error, LocalizedError {
        case productNotFound
        case userCancelled
        case unverifiedTransaction
        case backendError(String)
        case serverError
    }

    struct PurchaseError: Codable {
        let detail: String
    }

    /// The guide decodes its 400 as `UpgradeError`, which it never defines; its `PurchaseError` has the shape.
    typealias UpgradeError = PurchaseError

    // MARK: Additional Features

    struct CallHistoryResponse: Codable {
        let call_history: [CallHistoryItem]
        let total_calls: Int
    }

    struct CallHistoryItem: Codable, Identifiable {
        let id: Int
        let phone_number: String
        let scenario: String
        let status: String
        let created_at: String
        let call_sid: String
    }

    /// Used but not defined by the guide; the members of the endpoint reference's schedule-call request.
    struct ScheduleCallRequest: Codable {
        let phone_number: String
        let scenario: String
        let scheduled_time: String
    }

    /// Used but not defined by the guide; the members of the endpoint reference's schedule-call answer.
    struct ScheduledCallResponse: Codable {
        let schedule_id: Int
        let phone_number: String
        let scenario: String
        let scheduled_time: String
        let status: String
    }

    /// The guide's free functions, with `baseURL` and `authManager` as the app's state.
    struct Client {
        let baseURL: String
        var authManager = AuthManager()

        func registerUser(email: String, password: String) async throws -> AuthResponse {
            let url = URL(string: "\(baseURL)/auth/register")!
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.setValue("mobile", forHTTPHeaderField: "X-App-Type")  // Important!
            request.setValue("Speech-Assistant-Mobile-iOS/1.0", forHTTPHeaderField: "User-Agent")

            let registerData = RegisterRequest(email: email, password: password)
            request.httpBody = try JSONEncoder().encode(registerData)

            let (data, _) = try await URLSession.shared.data(for: request)
            return try JSONDecoder().decode(AuthResponse.self, from: data)
        }

        func loginUser(email: String, password: String) async throws -> AuthResponse {
            let url = URL(string: "\(baseURL)/auth/login")!
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            request.setValue("mobile", forHTTPHeaderField: "X-App-Type")

            let body = "username=\(email)&password=\(password)"
            request.httpBody = body.data(using: .utf8)

            let (data, _) = try await URLSession.shared.data(for: request)
            return try JSONDecoder().decode(AuthResponse.self, from: data)
        }

        func getUsageStats() async throws -> UsageStats {
            let url = URL(string: "\(baseURL)/mobile/usage-stats")!
            var request = URLRequest(url: url)
            request.httpMethod = "GET"

            // Add auth headers
            authManager.getAuthHeaders().forEach { key, value in
                request.setValue(value, forHTTPHeaderField: key)
            }

            let (data, _) = try await URLSession.shared.data(for: request)
            return try JSONDecoder().decode(UsageStats.self, from: data)
        }

        /// The guide defines `PricingInfo` without a function; this is `getUsageStats()` for `GET /mobile/pricing`.
        func getPricing() async throws -> PricingInfo {
            let url = URL(string: "\(baseURL)/mobile/pricing")!
            var request = URLRequest(url: url)
            request.httpMethod = "GET"
            authManager.getAuthHeaders().forEach { key, value in
                request.setValue(value, forHTTPHeaderField: key)
            }
            let (data, _) = try await URLSession.shared.data(for: request)
            return try JSONDecoder().decode(PricingInfo.self, from: data)
        }

        func checkCallPermission() async throws -> CallPermission {
            let url = URL(string: "\(baseURL)/mobile/check-call-permission")!
            var request = URLRequest(url: url)
            request.httpMethod = "POST"

            authManager.getAuthHeaders().forEach { key, value in
                request.setValue(value, forHTTPHeaderField: key)
            }

            let (data, _) = try await URLSession.shared.data(for: request)
            return try JSONDecoder().decode(CallPermission.self, from: data)
        }

        func getAvailableScenarios() async throws -> [Scenario] {
            let url = URL(string: "\(baseURL)/mobile/scenarios")!
            var request = URLRequest(url: url)
            request.httpMethod = "GET"

            let (data, _) = try await URLSession.shared.data(for: request)
            let response = try JSONDecoder().decode(ScenariosResponse.self, from: data)
            return response.scenarios
        }

        func makeCall(phoneNumber: String, scenario: String) async throws -> CallResponse {
            // First check permission
            let permission = try await checkCallPermission()

            if !permission.can_make_call {
                if permission.status == "trial_calls_exhausted" {
                    // Show upgrade prompt
                    throw CallError.trialExhausted
                } else {
                    throw CallError.permissionDenied(permission.details.message ?? "Cannot make call")
                }
            }

            let url = URL(string: "\(baseURL)/mobile/make-call")!
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")

            authManager.getAuthHeaders().forEach { key, value in
                request.setValue(value, forHTTPHeaderField: key)
            }

            let callData = MakeCallRequest(phone_number: phoneNumber, scenario: scenario)
            request.httpBody = try JSONEncoder().encode(callData)

            let (data, response) = try await URLSession.shared.data(for: request)

            // Handle payment required (402) status
            if let httpResponse = response as? HTTPURLResponse, httpResponse.statusCode == 402 {
                let errorData = try JSONDecoder().decode(PaymentRequiredError.self, from: data)
                throw CallError.paymentRequired(errorData)
            }

            return try JSONDecoder().decode(CallResponse.self, from: data)
        }

        /// `makeCall` without its permission check, to reach the 402 branch.
        func postMakeCallDirectly(phoneNumber: String, scenario: String) async throws -> PaymentRequiredError {
            let url = URL(string: "\(baseURL)/mobile/make-call")!
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            authManager.getAuthHeaders().forEach { key, value in
                request.setValue(value, forHTTPHeaderField: key)
            }
            request.httpBody = try JSONEncoder().encode(MakeCallRequest(phone_number: phoneNumber, scenario: scenario))
            let (data, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 402)
            return try JSONDecoder().decode(PaymentRequiredError.self, from: data)
        }

        /// The guide's `purchaseSubscription(productID:transaction:)` with the receipt passed in (StoreKit's
        /// `AppStore.receiptData()` and `transaction.environment` are not available here).
        func sendPurchase(productID: String, receiptString: String, isSandbox: Bool) async throws -> PurchaseResponse {
            let url = URL(string: "\(baseURL)/mobile/purchase-subscription")!
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")

            authManager.getAuthHeaders().forEach { key, value in
                request.setValue(value, forHTTPHeaderField: key)
            }

            let purchaseData = PurchaseRequest(
                receipt_data: receiptString,
                is_sandbox: isSandbox,
                product_id: productID
            )
            request.httpBody = try JSONEncoder().encode(purchaseData)

            let (data, response) = try await URLSession.shared.data(for: request)

            // Handle potential errors
            if let httpResponse = response as? HTTPURLResponse {
                switch httpResponse.statusCode {
                case 400:
                    let errorData = try JSONDecoder().decode(UpgradeError.self, from: data)
                    throw SubscriptionError.backendError(errorData.detail)
                case 500:
                    throw SubscriptionError.serverError
                default:
                    break
                }
            }

            return try JSONDecoder().decode(PurchaseResponse.self, from: data)
        }

        /// The guide defines `UpgradeRequest`/`UpgradeResponse` without a function; `sendPurchase` for the legacy
        /// `POST /mobile/upgrade-subscription`.
        func sendUpgrade(receiptString: String, isSandbox: Bool, tier: String) async throws -> UpgradeResponse {
            let url = URL(string: "\(baseURL)/mobile/upgrade-subscription")!
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            authManager.getAuthHeaders().forEach { key, value in
                request.setValue(value, forHTTPHeaderField: key)
            }
            request.httpBody = try JSONEncoder().encode(
                UpgradeRequest(receipt_data: receiptString, is_sandbox: isSandbox, subscription_tier: tier))
            let (data, _) = try await URLSession.shared.data(for: request)
            return try JSONDecoder().decode(UpgradeResponse.self, from: data)
        }

        func getCallHistory(limit: Int = 10) async throws -> [CallHistoryItem] {
            let url = URL(string: "\(baseURL)/mobile/call-history?limit=\(limit)")!
            var request = URLRequest(url: url)
            request.httpMethod = "GET"

            authManager.getAuthHeaders().forEach { key, value in
                request.setValue(value, forHTTPHeaderField: key)
            }

            let (data, _) = try await URLSession.shared.data(for: request)
            let response = try JSONDecoder().decode(CallHistoryResponse.self, from: data)
            return response.call_history
        }

        func scheduleCall(phoneNumber: String, scenario: String, scheduledTime: Date) async throws -> ScheduledCallResponse {
            let url = URL(string: "\(baseURL)/mobile/schedule-call")!
            var request = URLRequest(url: url)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")

            authManager.getAuthHeaders().forEach { key, value in
                request.setValue(value, forHTTPHeaderField: key)
            }

            let formatter = ISO8601DateFormatter()
            let scheduleData = ScheduleCallRequest(
                phone_number: phoneNumber,
                scenario: scenario,
                scheduled_time: formatter.string(from: scheduledTime)
            )
            request.httpBody = try JSONEncoder().encode(scheduleData)

            let (data, _) = try await URLSession.shared.data(for: request)
            return try JSONDecoder().decode(ScheduledCallResponse.self, from: data)
        }
    }
}
