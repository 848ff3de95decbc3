import Foundation
import Testing

@testable import ChorusAPI

// The wire format of the contract (seed 000): snake_case keys, ISO-8601 UTC dates with `Z`,
// explicit nulls where the seed shows them. The seed's JSON examples are decoded as the iOS app sends
// and receives them, and re-encoded to check that nothing is renamed, added or dropped.

/// 2024-01-15T10:30:00Z.
private let seedInstant = Date(timeIntervalSince1970: 1_705_314_600)

/// A JSON tree, to compare documents independently of key order and formatting.
private enum JSONValue: Equatable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var keys: Set<String> {
        if case .object(let members) = self { return Set(members.keys) }
        return []
    }

    /// Whether every member of `other` is here with the same value (objects compared member by member, recursively):
    /// a seed example that shows fewer members than the answer has.
    func contains(_ other: JSONValue) -> Bool {
        guard case .object(let expected) = other, case .object(let members) = self else { return self == other }
        return expected.allSatisfy { key, value in members[key].map { $0.contains(value) } ?? false }
    }

    /// Adds (or replaces) a member of an object.
    func setting(_ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var members) = self else { return self }
        members[key] = value
        return .object(members)
    }
}

private func tree(_ json: String) throws -> JSONValue {
    try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
}

private func tree(of value: some Encodable) throws -> JSONValue {
    try JSONDecoder().decode(JSONValue.self, from: ChorusJSON.makeEncoder().encode(value))
}

private func encodedString(_ value: some Encodable) throws -> String {
    String(decoding: try ChorusJSON.makeEncoder().encode(value), as: UTF8.self)
}

private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
    try ChorusJSON.makeDecoder().decode(type, from: Data(json.utf8))
}

/// Decodes `json` into `T`, re-encodes it, and returns both trees.
private func seedRoundTrip<T: Codable>(_ type: T.Type, _ json: String) throws -> (seed: JSONValue, ours: JSONValue, value: T) {
    let value = try decode(type, json)
    return (try tree(json), try tree(of: value), value)
}

private func roundTrips<T: Codable & Equatable>(_ value: T) throws -> Bool {
    try ChorusJSON.makeDecoder().decode(T.self, from: ChorusJSON.makeEncoder().encode(value)) == value
}

private struct DateBox: Codable, Equatable {
    var date: Date
}

// MARK: - Dates

@Suite("ChorusJSON dates")
struct DateCodingTests {
    @Test("dates encode as ISO-8601 UTC with Z and whole seconds")
    func encodesWholeSecondsWithZ() throws {
        #expect(try encodedString(DateBox(date: seedInstant)) == #"{"date":"2024-01-15T10:30:00Z"}"#)
        #expect(try encodedString(DateBox(date: seedInstant.addingTimeInterval(0.789))) == #"{"date":"2024-01-15T10:30:00Z"}"#)
        #expect(ChorusJSON.formatDate(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(ChorusJSON.formatDate(seedInstant) == "2024-01-15T10:30:00Z")
    }

    @Test("decoder accepts Z, offsets (converted to UTC) and fractional seconds")
    func decodesVariants() throws {
        let cases: [(String, Date)] = [
            ("2024-01-15T10:30:00Z", seedInstant),
            ("2024-01-15T12:30:00+02:00", seedInstant),
            ("2024-01-15T05:30:00-05:00", seedInstant),
            ("2024-01-16T00:00:00+13:30", seedInstant),
            ("2024-01-15T10:30:00.250Z", seedInstant.addingTimeInterval(0.25)),
            ("2024-01-15T12:30:00.5+02:00", seedInstant.addingTimeInterval(0.5)),
        ]
        for (text, expected) in cases {
            let box = try decode(DateBox.self, #"{"date":"\#(text)"}"#)
            #expect(abs(box.date.timeIntervalSince(expected)) < 0.001, "\(text)")
            let parsed = try #require(ChorusJSON.parseDate(text))
            #expect(abs(parsed.timeIntervalSince(expected)) < 0.001, "\(text)")
        }
        // An offset date re-encodes in UTC with Z.
        let shifted = try decode(DateBox.self, #"{"date":"2024-01-15T12:30:00+02:00"}"#)
        #expect(try encodedString(shifted) == #"{"date":"2024-01-15T10:30:00Z"}"#)
    }

    @Test("garbage dates are a DecodingError", arguments: ["not a date", "", "2024-13-45T99:00:00Z", "yesterday", "1705314600"])
    func rejectsGarbage(_ text: String) {
        #expect(throws: DecodingError.self) {
            try decode(DateBox.self, #"{"date":"\#(text)"}"#)
        }
        #expect(ChorusJSON.parseDate(text) == nil)
    }

    @Test("a number where a date belongs is a DecodingError")
    func rejectsNumber() {
        #expect(throws: DecodingError.self) {
            try decode(DateBox.self, #"{"date":1705314600}"#)
        }
    }
}

// MARK: - Shapes

@Suite("DTO shapes")
struct DTOShapeTests {
    static let usageStats = UsageStatsResponse(
        appType: "mobile_consumer", isTrialActive: true, trialCallsRemaining: 2, trialCallsUsed: 1, callsMadeToday: 1,
        callsMadeThisWeek: 1, callsMadeThisMonth: 1, callsMadeTotal: 1, isSubscribed: false, subscriptionTier: nil,
        upgradeRecommended: false, totalCallDurationThisWeek: 45, totalCallDurationThisMonth: 45, addonCallsRemaining: 0,
        addonCallsExpiry: nil, weekStartDate: seedInstant, monthStartDate: seedInstant
    )

    @Test("usage-stats encodes all 17 keys, nil ones as JSON null")
    func usageStatsKeys() throws {
        let json = try tree(of: Self.usageStats)
        #expect(
            json.keys == [
                "app_type", "is_trial_active", "trial_calls_remaining", "trial_calls_used", "calls_made_today",
                "calls_made_this_week", "calls_made_this_month", "calls_made_total", "is_subscribed", "subscription_tier",
                "upgrade_recommended", "total_call_duration_this_week", "total_call_duration_this_month",
                "addon_calls_remaining", "addon_calls_expiry", "week_start_date", "month_start_date",
            ])
        #expect(json.keys.count == 17)
        #expect(json["subscription_tier"] == .null)
        #expect(json["addon_calls_expiry"] == .null)
        #expect(json["week_start_date"] == .string("2024-01-15T10:30:00Z"))
        let text = try encodedString(Self.usageStats)
        #expect(text.contains(#""subscription_tier":null"#))
        #expect(text.contains(#""addon_calls_expiry":null"#))

        var subscribed = Self.usageStats
        subscribed.subscriptionTier = "mobile_premium"
        subscribed.addonCallsExpiry = seedInstant.addingTimeInterval(30 * 86_400)
        let filled = try tree(of: subscribed)
        #expect(filled["subscription_tier"] == .string("mobile_premium"))
        #expect(filled["addon_calls_expiry"] == .string("2024-02-14T10:30:00Z"))
    }

    @Test("a scenario encodes content_warning: null")
    func scenarioContentWarningNull() throws {
        let scenario = ScenarioDTO(
            id: "default", name: "Friendly Chat", description: "A casual, friendly conversation", icon: "💬",
            category: "entertainment", isFamilyFriendly: true, voice: "alloy", contentWarning: nil
        )
        let json = try tree(of: scenario)
        #expect(json.keys == ["id", "name", "description", "icon", "category", "is_family_friendly", "voice", "content_warning"])
        #expect(json["content_warning"] == .null)
        #expect(json["icon"] == .string("💬"))
        #expect(try encodedString(scenario).contains(#""content_warning":null"#))
        var warned = scenario
        warned.contentWarning = "May need age restrictions"
        #expect(try tree(of: warned)["content_warning"] == .string("May need age restrictions"))
        #expect(try roundTrips(ScenariosResponse(scenarios: [scenario, warned])))
    }

    @Test("permission details leave out keys that do not apply")
    func permissionDetailsOmitNil() throws {
        let details = CallPermissionDetails(callsRemainingThisWeek: 4, durationLimit: 60, appType: "mobile_consumer", message: "m")
        #expect(try tree(of: details).keys == ["calls_remaining_this_week", "duration_limit", "app_type", "message"])
        #expect(!(try encodedString(details)).contains("null"))
        #expect(try tree(of: CallPermissionDetails()).keys.isEmpty)

        let full = CallPermissionDetails(
            callsRemainingThisWeek: 0, callsRemainingThisMonth: 0, durationLimit: 60, addonCallsRemaining: 0,
            trialEnds: seedInstant, appType: "mobile_consumer", message: "m",
            upgradeOptions: [UpgradeOption(plan: "basic", price: "$4.99", calls: "5/week", productID: "p")]
        )
        let json = try tree(of: full)
        #expect(
            json.keys == [
                "calls_remaining_this_week", "calls_remaining_this_month", "duration_limit", "addon_calls_remaining",
                "trial_ends", "app_type", "message", "upgrade_options",
            ])
        #expect(json["trial_ends"] == .string("2024-01-15T10:30:00Z"))
    }

    @Test("the 402 body is {detail: {error, message, upgrade_options: [{plan, price, calls, product_id}], timestamp}}")
    func paymentRequiredShape() throws {
        let body = PaymentRequiredResponse(
            detail: PaymentRequiredDetail(
                error: "weekly_limit_reached", message: "Weekly limit reached.",
                upgradeOptions: [UpgradeOption(plan: "premium", price: "$25.00", calls: "30/month", productID: "speech_assistant_premium_monthly")],
                timestamp: seedInstant
            )
        )
        let json = try tree(of: body)
        #expect(json.keys == ["detail"])
        let detail = try #require(json["detail"])
        #expect(detail.keys == ["error", "message", "upgrade_options", "timestamp"])
        #expect(detail["timestamp"] == .string("2024-01-15T10:30:00Z"))
        guard case .array(let options)? = detail["upgrade_options"] else {
            Issue.record("upgrade_options is not an array")
            return
        }
        #expect(options.count == 1)
        #expect(options.first?.keys == ["plan", "price", "calls", "product_id"])
        #expect(options.first?["product_id"] == .string("speech_assistant_premium_monthly"))
    }

    @Test("call-history items always carry duration_seconds and ended_reason, null until the call ends")
    func callHistoryNulls() throws {
        let item = CallHistoryItem(
            id: 1, phoneNumber: "+14155550123", scenario: "default", status: "initiated", createdAt: seedInstant,
            callSid: "CA1", durationSeconds: nil, endedReason: nil, durationLimit: 60
        )
        let json = try tree(of: item)
        #expect(
            json.keys == [
                "id", "phone_number", "scenario", "status", "created_at", "call_sid", "duration_seconds", "ended_reason",
                "duration_limit",
            ])
        #expect(json["duration_seconds"] == .null)
        #expect(json["ended_reason"] == .null)
    }

    @Test("purchase usage_stats and subscription-status encode nil fields as null")
    func purchaseNulls() throws {
        let stats = PurchaseUsageStats(usage: Self.usageStats, callsRemainingThisWeek: 0, callsRemainingThisMonth: 0)
        let statsTree = try tree(of: stats)
        #expect(statsTree["subscription_tier"] == .null && statsTree["addon_calls_expiry"] == .null)
        // Issue 21: one flat object, every usage-stats member plus the reference's two remaining-calls members.
        #expect(statsTree.keys.count == 19)
        #expect(statsTree["calls_remaining_this_week"] == .number(0) && statsTree["week_start_date"] == .string("2024-01-15T10:30:00Z"))
        let none = SubscriptionStatusResponse(
            subscriptionTier: nil, subscriptionStatus: "none", isSubscribed: false, subscriptionStartDate: nil,
            subscriptionEndDate: nil, nextPaymentDate: nil, billingCycle: nil, appStoreTransactionID: nil, appStoreProductID: nil
        )
        let json = try tree(of: none)
        #expect(json.keys.count == 12)
        for key in [
            "subscription_tier", "subscription_start_date", "subscription_end_date", "next_payment_date", "billing_cycle",
            "app_store_transaction_id", "app_store_product_id", "will_renew", "renews_to_product_id", "grace_period_expires_date",
        ] {
            #expect(json[key] == .null, "\(key)")
        }
    }

    @Test("the main DTOs round-trip")
    func roundTripsMainDTOs() throws {
        let option = UpgradeOption(plan: "basic", price: "$4.99", calls: "5/week", productID: "speech_assistant_basic_weekly")
        #expect(try roundTrips(Self.usageStats))
        var filled = Self.usageStats
        filled.subscriptionTier = "mobile_basic"
        filled.addonCallsExpiry = seedInstant.addingTimeInterval(86_400)
        #expect(try roundTrips(filled))
        #expect(
            try roundTrips(
                CallPermissionResponse(
                    canMakeCall: false, status: "trial_exhausted",
                    details: CallPermissionDetails(callsRemainingThisWeek: 0, trialEnds: seedInstant, message: "m", upgradeOptions: [option])
                )))
        #expect(
            try roundTrips(
                PaymentRequiredResponse(
                    detail: PaymentRequiredDetail(error: "trial_exhausted", message: "m", upgradeOptions: [option], timestamp: seedInstant))))
        #expect(try roundTrips(MakeCallRequest(phoneNumber: "+14155550123", scenario: "comedian")))
        #expect(
            try roundTrips(
                MakeCallResponse(
                    callSid: "CA1", status: "initiated", durationLimit: 120,
                    usageStats: CallUsageSnapshot(
                        callsRemainingThisWeek: 1, callsRemainingThisMonth: 2, addonCallsRemaining: 3, upgradeRecommended: true)
                )))
        #expect(try roundTrips(ScheduleCallRequest(phoneNumber: "+14155550123", scenario: "default", scheduledTime: seedInstant)))
        #expect(try roundTrips(ScheduleCallRequest(phoneNumber: "+14155550123")))
        let scheduled = ScheduledCallDTO(
            scheduleID: 7, phoneNumber: "+14155550123", scenario: "default", scheduledTime: seedInstant, status: "placed", callSid: "CA9",
            failureReason: nil)
        #expect(try roundTrips(scheduled))
        #expect(try roundTrips(ScheduledCallsResponse(scheduledCalls: [scheduled])))
        #expect(
            try roundTrips(
                CallHistoryResponse(
                    callHistory: [
                        CallHistoryItem(
                            id: 1, phoneNumber: "+14155550123", scenario: "default", status: "completed", createdAt: seedInstant, callSid: "CA1",
                            durationSeconds: 42, endedReason: "completed", durationLimit: 60),
                        CallHistoryItem(
                            id: 2, phoneNumber: "+14155550123", scenario: "default", status: "ringing", createdAt: seedInstant, callSid: "CA2",
                            durationSeconds: nil, endedReason: nil, durationLimit: 60),
                    ],
                    totalCalls: 12
                )))
        #expect(
            try roundTrips(
                PricingResponse(
                    plans: [
                        PricingPlan(
                            id: "basic", name: "Basic Plan", price: "$4.99", billing: "weekly", calls: "5 calls per week",
                            durationLimit: "1 minute per call", features: ["a"], productID: "p")
                    ],
                    addon: AddonPricing(
                        id: "addon", name: "Additional Calls", price: "$4.99", calls: "5 additional calls", expires: "30 days", description: "d",
                        productID: "q")
                )))
        #expect(
            try roundTrips(
                SubscriptionStatusResponse(
                    subscriptionTier: "mobile_basic", subscriptionStatus: "active", isSubscribed: true, subscriptionStartDate: seedInstant,
                    subscriptionEndDate: seedInstant.addingTimeInterval(604_800), nextPaymentDate: seedInstant.addingTimeInterval(604_800),
                    billingCycle: "weekly", appStoreTransactionID: "1", appStoreProductID: "speech_assistant_basic_weekly"
                )))
        #expect(
            try roundTrips(
                PurchaseResponse(
                    success: true, message: "ok",
                    usageStats: PurchaseUsageStats(usage: Self.usageStats, callsRemainingThisWeek: 3, callsRemainingThisMonth: 3))))
        #expect(try roundTrips(TokenResponse(accessToken: "a", refreshToken: "r", expiresIn: 900)))
        #expect(try roundTrips(ErrorResponse(detail: "Not authenticated")))
        #expect(
            try roundTrips(ValidationErrorResponse(detail: "Invalid request", errors: [FieldError(field: "phone_number", message: "must be E.164")])))
        #expect(try roundTrips(CustomScenarioDTO(id: "custom_1", name: "n", persona: "p", voice: "marin", createdAt: seedInstant)))
        #expect(
            try roundTrips(
                VoicesResponse(voices: [
                    VoiceDTO(id: "alloy", displayName: "Alloy", gender: "female", accent: "american", personality: "warm_engaging", description: "d")
                ])))
    }

    @Test("errors: {detail} without request_id unless set")
    func errorBodies() throws {
        #expect(try tree(of: ErrorResponse(detail: "Not authenticated")) == tree(#"{"detail":"Not authenticated"}"#))
        #expect(try tree(of: ErrorResponse(detail: "Internal server error", requestID: "abc")).keys == ["detail", "request_id"])
        #expect(
            try tree(of: ValidationErrorResponse(detail: "x", errors: [FieldError(field: "f", message: "m")]))
                == tree(#"{"detail":"x","errors":[{"field":"f","message":"m"}]}"#))
    }
}

// MARK: - The seed's examples

@Suite("Seed 000 examples")
struct SeedExampleTests {
    @Test("usage-stats")
    func usageStats() throws {
        let (seed, ours, value) = try seedRoundTrip(
            UsageStatsResponse.self,
            #"""
            {
              "app_type": "mobile_consumer",
              "is_trial_active": true,
              "trial_calls_remaining": 2,
              "trial_calls_used": 1,
              "calls_made_today": 1,
              "calls_made_this_week": 1,
              "calls_made_this_month": 1,
              "calls_made_total": 1,
              "is_subscribed": false,
              "subscription_tier": null,
              "upgrade_recommended": false,
              "total_call_duration_this_week": 45,
              "total_call_duration_this_month": 45,
              "addon_calls_remaining": 0,
              "addon_calls_expiry": null,
              "week_start_date": "2024-01-15T10:30:00Z",
              "month_start_date": "2024-01-15T10:30:00Z"
            }
            """#)
        #expect(ours == seed)
        #expect(value == DTOShapeTests.usageStats)
    }

    @Test("check-call-permission")
    func checkCallPermission() throws {
        let (seed, ours, value) = try seedRoundTrip(
            CallPermissionResponse.self,
            #"""
            {
              "can_make_call": true,
              "status": "basic_call_available",
              "details": {
                "calls_remaining_this_week": 4,
                "duration_limit": 60,
                "app_type": "mobile_consumer",
                "message": "You have 4 calls remaining this week"
              }
            }
            """#)
        #expect(ours == seed)
        #expect(value.canMakeCall)
        #expect(value.status == "basic_call_available")
        #expect(value.details.callsRemainingThisWeek == 4)
        #expect(value.details.durationLimit == 60)
        #expect(value.details.upgradeOptions == nil)
    }

    @Test("pricing")
    func pricing() throws {
        // The seed's pricing example has no `product_id`; our PricingPlan and AddonPricing require it (the app
        // needs it to start a StoreKit purchase), so the seed's JSON is taken with the product ids added.
        let (seed, ours, value) = try seedRoundTrip(
            PricingResponse.self,
            #"""
            {
              "plans": [
                {
                  "id": "basic",
                  "name": "Basic Plan",
                  "price": "$4.99",
                  "billing": "weekly",
                  "calls": "5 calls per week",
                  "duration_limit": "1 minute per call",
                  "features": ["Unlimited scenarios", "Call history", "Basic support"],
                  "product_id": "speech_assistant_basic_weekly"
                },
                {
                  "id": "premium",
                  "name": "Premium Plan",
                  "price": "$25.00",
                  "billing": "monthly",
                  "calls": "30 calls per month",
                  "duration_limit": "2 minutes per call",
                  "features": [
                    "All Basic features",
                    "Priority support",
                    "Advanced analytics"
                  ],
                  "product_id": "speech_assistant_premium_monthly"
                }
              ],
              "addon": {
                "id": "addon",
                "name": "Additional Calls",
                "price": "$4.99",
                "calls": "5 additional calls",
                "expires": "30 days",
                "description": "Perfect when you need a few more calls",
                "product_id": "speech_assistant_addon_calls"
              }
            }
            """#)
        #expect(ours == seed)
        #expect(value.plans.map(\.id) == ["basic", "premium"])
        #expect(value.plans[1].durationLimit == "2 minutes per call")
        #expect(value.addon.expires == "30 days")
        // Without the product ids, as the seed prints it, decoding fails loudly rather than inventing one.
        #expect(throws: DecodingError.self) {
            try decode(
                AddonPricing.self,
                #"{"id":"addon","name":"Additional Calls","price":"$4.99","calls":"5 additional calls","expires":"30 days","description":"d"}"#)
        }
    }

    @Test("make-call request and answer")
    func makeCall() throws {
        let request = try seedRoundTrip(MakeCallRequest.self, #"{"phone_number": "+1234567890", "scenario": "default"}"#)
        #expect(request.ours == request.seed)
        #expect(request.value == MakeCallRequest(phoneNumber: "+1234567890", scenario: "default"))

        let (seed, ours, value) = try seedRoundTrip(
            MakeCallResponse.self,
            #"""
            {
              "call_sid": "CA1234567890abcdef",
              "status": "initiated",
              "duration_limit": 60,
              "usage_stats": {
                "calls_remaining_this_week": 4,
                "calls_remaining_this_month": 29,
                "addon_calls_remaining": 0,
                "upgrade_recommended": false
              }
            }
            """#)
        #expect(ours == seed)
        #expect(value.callSid == "CA1234567890abcdef")
        #expect(value.durationLimit == 60)
        #expect(
            value.usageStats
                == CallUsageSnapshot(callsRemainingThisWeek: 4, callsRemainingThisMonth: 29, addonCallsRemaining: 0, upgradeRecommended: false))
    }

    @Test("the 402 body")
    func paymentRequired() throws {
        let (seed, ours, value) = try seedRoundTrip(
            PaymentRequiredResponse.self,
            #"""
            {
              "detail": {
                "error": "trial_exhausted",
                "message": "Trial calls exhausted. Upgrade to Basic ($4.99/week) for 5 calls per week!",
                "upgrade_options": [
                  {
                    "plan": "basic",
                    "price": "$4.99",
                    "calls": "5/week",
                    "product_id": "speech_assistant_basic_weekly"
                  },
                  {
                    "plan": "premium",
                    "price": "$25.00",
                    "calls": "30/month",
                    "product_id": "speech_assistant_premium_monthly"
                  }
                ],
                "timestamp": "2024-01-15T10:30:00Z"
              }
            }
            """#)
        #expect(ours == seed)
        #expect(value.detail.error == "trial_exhausted")
        #expect(value.detail.timestamp == seedInstant)
        #expect(
            value.detail.upgradeOptions == [
                UpgradeOption(plan: "basic", price: "$4.99", calls: "5/week", productID: "speech_assistant_basic_weekly"),
                UpgradeOption(plan: "premium", price: "$25.00", calls: "30/month", productID: "speech_assistant_premium_monthly"),
            ])
    }

    @Test("schedule-call request and answer")
    func scheduleCall() throws {
        let request = try seedRoundTrip(
            ScheduleCallRequest.self,
            #"""
            {
              "phone_number": "+1234567890",
              "scenario": "default",
              "scheduled_time": "2024-01-15T14:30:00Z"
            }
            """#)
        #expect(request.ours == request.seed)
        #expect(request.value.scheduledTime == seedInstant.addingTimeInterval(4 * 3_600))
        // scheduled_time is optional (default: one minute from now).
        #expect(try decode(ScheduleCallRequest.self, #"{"phone_number":"+1234567890","scenario":"default"}"#).scheduledTime == nil)

        // call_sid and failure_reason are ours, present only once they apply: the seed's answer is exactly ours.
        let (seed, ours, value) = try seedRoundTrip(
            ScheduledCallDTO.self,
            #"""
            {
              "schedule_id": 123,
              "phone_number": "+1234567890",
              "scenario": "default",
              "scheduled_time": "2024-01-15T14:30:00Z",
              "status": "scheduled"
            }
            """#)
        #expect(ours == seed)
        #expect(value.scheduleID == 123)
        #expect(value.status == "scheduled")
        #expect(value.callSid == nil)
    }

    @Test("call-history")
    func callHistory() throws {
        // The seed's item lacks `duration_limit`, which our CallHistoryItem requires (every call has one), and
        // `duration_seconds`/`ended_reason`, which the issue adds and which we always send (null until known).
        // The seed's JSON is taken with those three added.
        let (seed, ours, value) = try seedRoundTrip(
            CallHistoryResponse.self,
            #"""
            {
              "call_history": [
                {
                  "id": 456,
                  "phone_number": "+1234567890",
                  "scenario": "default",
                  "status": "completed",
                  "created_at": "2024-01-14T10:30:00Z",
                  "call_sid": "CA1234567890abcdef",
                  "duration_seconds": 45,
                  "ended_reason": "completed",
                  "duration_limit": 60
                }
              ],
              "total_calls": 1
            }
            """#)
        #expect(ours == seed)
        #expect(value.totalCalls == 1)
        #expect(value.callHistory.first?.createdAt == seedInstant.addingTimeInterval(-86_400))
        #expect(value.callHistory.first?.durationSeconds == 45)

        // The seed's item verbatim (no duration fields) is refused for want of duration_limit.
        #expect(throws: DecodingError.self) {
            try decode(
                CallHistoryItem.self,
                #"{"id":456,"phone_number":"+1234567890","scenario":"default","status":"completed","created_at":"2024-01-14T10:30:00Z","call_sid":"CA1234567890abcdef"}"#
            )
        }
        // duration_seconds and ended_reason may be absent or null.
        let pending = try decode(
            CallHistoryItem.self,
            #"{"id":1,"phone_number":"+1","scenario":"default","status":"ringing","created_at":"2024-01-14T10:30:00Z","call_sid":"CA1","duration_seconds":null,"duration_limit":60}"#
        )
        #expect(pending.durationSeconds == nil)
        #expect(pending.endedReason == nil)
    }

    @Test("subscription-status")
    func subscriptionStatus() throws {
        let (seed, ours, value) = try seedRoundTrip(
            SubscriptionStatusResponse.self,
            #"""
            {
              "subscription_tier": "mobile_weekly",
              "subscription_status": "active",
              "is_subscribed": true,
              "subscription_start_date": "2024-01-15T10:30:00Z",
              "subscription_end_date": "2024-01-22T10:30:00Z",
              "next_payment_date": "2024-01-22T10:30:00Z",
              "billing_cycle": "weekly",
              "app_store_transaction_id": "1000000123456789",
              "app_store_product_id": "speech_assistant_weekly"
            }
            """#)
        // Every seed field, unchanged; Chorus adds the renewal details the seed lacks (null when the seed gives none).
        guard case .object(let seedFields) = seed, case .object(var ourFields) = ours else {
            Issue.record("not objects")
            return
        }
        for extra in ["will_renew", "renews_to_product_id", "grace_period_expires_date"] {
            #expect(ourFields.removeValue(forKey: extra) == .null, "\(extra)")
        }
        #expect(ourFields == seedFields)
        #expect(value.subscriptionStartDate == seedInstant)
        #expect(value.subscriptionEndDate == seedInstant.addingTimeInterval(7 * 86_400))
        #expect(value.appStoreTransactionID == "1000000123456789")
    }

    @Test("auth bodies")
    func auth() throws {
        let register = try seedRoundTrip(RegisterRequest.self, #"{"email": "user@example.com", "password": "securepassword123"}"#)
        #expect(register.ours == register.seed)
        let refresh = try seedRoundTrip(RefreshRequest.self, #"{"refresh_token": "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9..."}"#)
        #expect(refresh.ours == refresh.seed)
        // The seed's token answer has no `expires_in`; our TokenResponse requires it (the SDK schedules refreshes
        // from it), so the example is taken with it added. Clients that ignore unknown keys are unaffected.
        let tokens = try seedRoundTrip(
            TokenResponse.self,
            #"""
            {
              "access_token": "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9...",
              "refresh_token": "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9...",
              "token_type": "bearer",
              "expires_in": 900
            }
            """#)
        #expect(tokens.ours == tokens.seed)
        #expect(tokens.value.tokenType == "bearer")
    }

    @Test("purchase bodies")
    func purchases() throws {
        let request = try seedRoundTrip(
            PurchaseRequest.self,
            #"""
            {
              "receipt_data": "base64_encoded_receipt_from_app_store",
              "is_sandbox": false,
              "product_id": "speech_assistant_basic_weekly"
            }
            """#)
        #expect(request.ours == request.seed)

        // Issue 21: the endpoint reference shows five `usage_stats` members while the guide's Swift client decodes the
        // full usage stats. Ours carry both: every member of each of the seed's examples, with the example's values.
        let seedAnswer = try tree(
            #"""
            {
              "success": true,
              "message": "Purchase processed successfully!",
              "usage_stats": {
                "subscription_tier": "mobile_basic",
                "is_subscribed": true,
                "calls_remaining_this_week": 5,
                "calls_remaining_this_month": 30,
                "addon_calls_remaining": 0
              }
            }
            """#)
        var usage = DTOShapeTests.usageStats
        usage.subscriptionTier = "mobile_basic"
        usage.isSubscribed = true
        let ours = try tree(
            of: PurchaseResponse(
                success: true, message: "Purchase processed successfully!",
                usageStats: PurchaseUsageStats(usage: usage, callsRemainingThisWeek: 5, callsRemainingThisMonth: 30)))
        #expect(ours.contains(seedAnswer))
        #expect(ours["usage_stats"]?.keys.count == 19)
        #expect(try tree(of: usage).keys.allSatisfy { ours["usage_stats"]?[$0] != nil })

        let upgrade = try seedRoundTrip(
            UpgradeSubscriptionRequest.self,
            #"""
            {
              "receipt_data": "base64_encoded_receipt_from_app_store",
              "is_sandbox": false,
              "subscription_tier": "mobile_weekly"
            }
            """#)
        #expect(upgrade.ours == upgrade.seed)

        let seedUpgraded = try tree(
            #"""
            {
              "success": true,
              "message": "Successfully upgraded to weekly subscription!",
              "subscription_tier": "mobile_weekly",
              "usage_stats": {
                "is_subscribed": true,
                "subscription_tier": "mobile_weekly",
                "trial_calls_remaining": 0
              }
            }
            """#)
        usage.subscriptionTier = "mobile_weekly"
        usage.trialCallsRemaining = 0
        let upgraded = try tree(
            of: UpgradeSubscriptionResponse(
                success: true, message: "Successfully upgraded to weekly subscription!", subscriptionTier: "mobile_weekly",
                usageStats: PurchaseUsageStats(usage: usage, callsRemainingThisWeek: 5, callsRemainingThisMonth: 5)))
        #expect(upgraded.contains(seedUpgraded))

        // The webhook body: only signedPayload is kept (the seed's unsigned fields are not trusted).
        let notification = try decode(
            AppStoreNotificationRequest.self,
            #"""
            {
              "signedPayload": "jwt_signed_payload_from_apple",
              "notificationType": "RENEWAL",
              "data": {"productId": "speech_assistant_weekly", "transactionId": "1000000123456789"}
            }
            """#)
        #expect(notification.signedPayload == "jwt_signed_payload_from_apple")
        #expect(try tree(of: notification) == tree(#"{"signedPayload":"jwt_signed_payload_from_apple"}"#))
        let ack = try seedRoundTrip(AppStoreNotificationResponse.self, #"{"status": "success", "message": "Notification processed successfully"}"#)
        #expect(ack.ours == ack.seed)
    }
}
