import ChorusKit
import Foundation
import Testing

/// The SDK's model types: every server string set is an open value (ChorusAPI's, under the SDK's name) whose known
/// values are static members and anything else is kept as is with `isKnown` false (`PlanTier`: `unknown("…")`), so a
/// value added by a newer server never fails to decode in an older app.
@Suite("ChorusKit model types")
struct ModelTests {
    private func decode<T: Decodable>(_ type: T.Type, _ json: String) throws -> T {
        try ChorusJSON.makeDecoder().decode(T.self, from: Data(json.utf8))
    }

    @Test("known raw values round-trip through their named values")
    func knownValues() {
        func check<E: RawRepresentable & Equatable>(_ cases: [E], _ raws: [String], sourceLocation: SourceLocation = #_sourceLocation)
        where E.RawValue == String {
            #expect(cases.map(\.rawValue) == raws, sourceLocation: sourceLocation)
            #expect(raws.map { E(rawValue: $0) } == cases, sourceLocation: sourceLocation)
        }
        check([PlanTier.basic, .premium], ["basic", "premium"])
        check([BillingCycle.weekly, .monthly], ["weekly", "monthly"])
        check(
            [
                CallPermission.Status.trialCallAvailable, .basicCallAvailable, .premiumCallAvailable, .addOnCallAvailable, .trialExhausted,
                .weeklyLimitReached, .monthlyLimitReached, .upgradeRequired,
            ],
            [
                "trial_call_available", "basic_call_available", "premium_call_available", "addon_call_available", "trial_exhausted",
                "weekly_limit_reached", "monthly_limit_reached", "upgrade_required",
            ])
        check(
            [Call.Status.initiated, .queued, .ringing, .inProgress, .completed, .busy, .noAnswer, .failed, .canceled],
            ["initiated", "queued", "ringing", "in-progress", "completed", "busy", "no-answer", "failed", "canceled"])
        check(
            [
                Call.EndReason.completed, .maxDuration, .calleeHangup, .busy, .noAnswer, .failed, .canceled, .failedToStart, .errorOpenAI,
                .errorStream,
            ],
            [
                "completed", "max_duration", "callee_hangup", "busy", "no_answer", "failed", "canceled", "failed_to_start", "error_openai",
                "error_stream",
            ])
        check(
            [SubscriptionStatus.State.active, .cancelled, .gracePeriod, .billingRetry, .expired, .revoked, .none],
            ["active", "cancelled", "grace_period", "billing_retry", "expired", "revoked", "none"])
        check(
            [ScheduledCall.Status.scheduled, .placing, .placed, .refused, .failed, .cancelled],
            ["scheduled", "placing", "placed", "refused", "failed", "cancelled"])
        check(
            [Scenario.Category.entertainment, .professional, .emergency, .romantic, .family, .motivational, .celebration],
            ["entertainment", "professional", "emergency", "romantic", "family", "motivational", "celebration"])
        check([Voice.Gender.male, .female], ["male", "female"])
        check([Voice.Accent.american, .british], ["american", "british"])
        check(
            [Voice.Personality.warmEngaging, .energeticUpbeat, .gentleSupportive, .professionalNeutral],
            ["warm_engaging", "energetic_upbeat", "gentle_supportive", "professional_neutral"])
        check([CallDetail.TranscriptLine.Speaker.assistant, .callee], ["assistant", "callee"])
        check([Usage.AppType.mobileConsumer, .webBusiness], ["mobile_consumer", "web_business"])
        // The usage and subscription answers name plans with a `mobile_` prefix (and `mobile_weekly` for legacy Basic).
        #expect(["mobile_basic", "mobile_weekly", "mobile_premium"].map(PlanTier.init(rawValue:)) == [.basic, .basic, .premium])
    }

    @Test("unknown raw values are kept as the server's text and are not known")
    func unknownValues() {
        #expect(PlanTier(rawValue: "mobile_family") == .unknown("mobile_family"))
        #expect(PlanTier.unknown("mobile_family").rawValue == "mobile_family")
        #expect(BillingCycle(rawValue: "every 10 days") == "every 10 days" && !BillingCycle(rawValue: "every 10 days").isKnown)
        #expect(CallPermission.Status(rawValue: "daily_limit_reached") == "daily_limit_reached")
        #expect(CallPermission.Status(known: "daily_limit_reached") == nil)
        // The call's status and end reason are ChorusAPI's open values: an unknown one is kept as is, not known.
        #expect(Call.Status(rawValue: "voicemail").rawValue == "voicemail" && !Call.Status(rawValue: "voicemail").isKnown)
        #expect(Call.EndReason(rawValue: "error_network").rawValue == "error_network" && !Call.EndReason(rawValue: "error_network").isKnown)
        #expect(Call.EndReason(rawValue: "opted_out") == .optedOut && Call.EndReason.optedOut.rawValue == "opted_out")
        #expect(SubscriptionStatus.State(rawValue: "paused") == "paused" && !SubscriptionStatus.State(rawValue: "paused").isKnown)
        #expect(ScheduledCall.Status(rawValue: "postponed").rawValue == "postponed" && !ScheduledCall.Status(rawValue: "postponed").isKnown)
        #expect(Scenario.Category(rawValue: "holiday") == "holiday" && !Scenario.Category(rawValue: "holiday").isKnown)
        #expect(Voice.Gender(rawValue: "neutral") == "neutral" && !Voice.Gender(rawValue: "neutral").isKnown)
        #expect(Voice.Accent(rawValue: "australian") == "australian" && !Voice.Accent(rawValue: "australian").isKnown)
        #expect(Voice.Personality(rawValue: "calm") == "calm" && !Voice.Personality(rawValue: "calm").isKnown)
        #expect(CallDetail.TranscriptLine.Speaker(rawValue: "system") == "system" && !CallDetail.TranscriptLine.Speaker(rawValue: "system").isKnown)
        #expect(Usage.AppType(rawValue: "partner_api") == "partner_api" && !Usage.AppType(rawValue: "partner_api").isKnown)
        #expect(Call.Status(rawValue: "IN-PROGRESS") != .inProgress && !Call.Status(rawValue: "IN-PROGRESS").isKnown, "values are matched exactly")
        #expect(Call.Status(rawValue: "voicemail").description == "voicemail" && !Call.Status(rawValue: "voicemail").isFinal)
    }

    @Test("answers with values a newer server might send decode into unknown values")
    func answersWithNewValues() throws {
        let usage = Usage(
            try decode(
                UsageStatsResponse.self,
                #"""
                {"app_type":"partner_api","is_trial_active":false,"trial_calls_remaining":0,"trial_calls_used":3,
                 "calls_made_today":1,"calls_made_this_week":2,"calls_made_this_month":9,"calls_made_total":12,
                 "is_subscribed":true,"subscription_tier":"mobile_family","upgrade_recommended":false,
                 "total_call_duration_this_week":90,"total_call_duration_this_month":540,"addon_calls_remaining":4,
                 "addon_calls_expiry":"2024-02-14T10:30:00Z","week_start_date":"2024-01-15T00:00:00Z",
                 "month_start_date":"2024-01-01T00:00:00Z"}
                """#))
        #expect(usage.appType == "partner_api" && !usage.appType.isKnown && usage.plan == .unknown("mobile_family"))
        #expect(usage.talkTimeThisWeek == 90 && usage.addOnCallsRemaining == 4)
        #expect(usage.addOnCallsExpiry == ChorusJSON.parseDate("2024-02-14T10:30:00Z"))

        let permission = CallPermission(
            try decode(
                CallPermissionResponse.self,
                #"""
                {"can_make_call":false,"status":"daily_limit_reached","details":{"message":"Come back tomorrow",
                 "upgrade_options":[{"plan":"family","price":"$9.99","calls":"10/week","product_id":"family_weekly"},
                                    {"plan":"addon","price":"$4.99","calls":"10 additional","product_id":"addon_calls"}]}}
                """#))
        #expect(permission.status == "daily_limit_reached" && !permission.status.isKnown && permission.callsRemaining == 0)
        #expect(permission.upgradeOptions.map(\.kind) == [.plan(.unknown("family")), .addOnPack])
        #expect(permission.message == "Come back tomorrow" && permission.durationLimit == nil)

        let detail = CallDetail(
            try decode(
                CallDetailResponse.self,
                #"""
                {"id":7,"phone_number":"+14155550100","scenario":"default","status":"voicemail",
                 "created_at":"2024-01-15T10:30:00Z","call_sid":"CA1","duration_seconds":42,"ended_reason":"error_network",
                 "duration_limit":60,"answered_at":"2024-01-15T10:30:05Z","ended_at":"2024-01-15T10:30:47Z",
                 "transcript":[{"speaker":"assistant","text":"Hi!","at_ms":1500,"interrupted":false},
                               {"speaker":"system","text":"…","at_ms":2000,"interrupted":true}],
                 "transcript_deleted_at":null,"latency":{"first_audio_ms":820,"turn_p50_ms":640,"turn_p90_ms":null,"turns":3},
                 "barge_ins":1}
                """#))
        #expect(detail.id == "CA1" && detail.call.status == "voicemail" && detail.call.endedReason == "error_network")
        #expect(detail.call.duration == 42 && detail.call.durationLimit == 60)
        #expect(detail.transcript?.map(\.speaker) == [.assistant, "system"] && detail.transcript?.last?.speaker.isKnown == false)
        #expect(detail.transcript?.first?.offset == 1.5)
        #expect(detail.latency?.firstAudio == 0.82 && detail.latency?.turnMedian == 0.64 && detail.latency?.turnP90 == nil)

        let subscription = SubscriptionStatus(
            try decode(
                SubscriptionStatusResponse.self,
                #"""
                {"subscription_tier":"mobile_premium","subscription_status":"paused","is_subscribed":false,
                 "subscription_start_date":null,"subscription_end_date":null,"next_payment_date":null,
                 "billing_cycle":"every 10 days","app_store_transaction_id":null,"app_store_product_id":null}
                """#))
        #expect(subscription.state == "paused" && !subscription.state.isKnown && subscription.plan == .premium)
        #expect(subscription.billingCycle == "every 10 days" && subscription.billingCycle?.isKnown == false && subscription.willRenew == nil)

        let scheduled = ScheduledCall(
            try decode(
                ScheduledCallDTO.self,
                #"{"schedule_id":5,"phone_number":"+14155550100","scenario":"default","scheduled_time":"2024-01-15T14:30:00Z","status":"postponed"}"#
            ))
        #expect(scheduled.id == 5 && scheduled.status == "postponed" && !scheduled.status.isKnown && scheduled.callSid == nil)

        let scenario = Scenario(
            try decode(
                ScenarioDTO.self,
                #"{"id":"x","name":"X","description":"d","icon":"🎄","category":"holiday","is_family_friendly":true,"voice":"alloy","content_warning":null}"#
            ))
        #expect(scenario.category == "holiday" && !scenario.category.isKnown && scenario.voiceID == "alloy")

        let voice = Voice(
            try decode(
                VoiceDTO.self,
                #"{"id":"v","display_name":"V","gender":"neutral","accent":"australian","personality":"calm","description":"d"}"#))
        #expect(voice.gender == "neutral" && voice.accent == "australian" && voice.personality == "calm")
        #expect(!voice.gender.isKnown && !voice.accent.isKnown && !voice.personality.isKnown)
    }

    @Test("pricing: plans by tier, billing cycles, the add-on pack")
    func pricing() throws {
        let pricing = Pricing(
            try decode(
                PricingResponse.self,
                #"""
                {"plans":[{"id":"basic","name":"Basic Plan","price":"$4.99","billing":"weekly","calls":"5 calls per week",
                           "duration_limit":"1 minute per call","features":["a"],"product_id":"speech_assistant_basic_weekly"},
                          {"id":"premium","name":"Premium Plan","price":"$25.00","billing":"monthly","calls":"30 calls per month",
                           "duration_limit":"2 minutes per call","features":["b"],"product_id":"speech_assistant_premium_monthly"}],
                 "addon":{"id":"addon","name":"Additional Calls","price":"$4.99","calls":"10 additional calls","expires":"30 days",
                          "description":"d","product_id":"speech_assistant_addon_calls"}}
                """#))
        #expect(pricing.plans.map(\.tier) == [.basic, .premium])
        #expect(pricing.plan(.premium)?.billing == .monthly && pricing.plan(.premium)?.id == "speech_assistant_premium_monthly")
        #expect(pricing.plan(.unknown("family")) == nil)
        #expect(pricing.addOnPack.productID == "speech_assistant_addon_calls")
    }
}
