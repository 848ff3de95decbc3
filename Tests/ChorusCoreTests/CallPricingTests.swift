import Foundation
import Testing

@testable import ChorusCore

@Suite("Call pricing: realtime tokens, telephony minutes, call estimates")
struct CallPricingTests {
    let prices = PriceTable.standard

    @Test("a realtime response is priced per token kind: text and audio, cached and not, in and out")
    func realtimeTokenKinds() {
        // 10,000 in (6,000 audio; 3,000 cached, 2,000 of them audio), 3,000 out (2,400 audio), gpt-realtime-2.1:
        // 3,000 text × $4 + 1,000 cached text × $0.40 + 4,000 audio × $32 + 2,000 cached audio × $0.40 + 600 text out × $16
        // + 2,400 audio out × $64 per 1M = $0.3044.
        let consumption = Consumption(
            inputTokens: 10_000, outputTokens: 3_000, cachedInputTokens: 3_000, audioInputTokens: 6_000, cachedAudioInputTokens: 2_000,
            audioOutputTokens: 2_400)
        #expect(prices.costMicrodollars(of: .realtime, model: "gpt-realtime-2.1", consumption: consumption) == 304_400)
        // The mini model: 3,000 × $0.60 + 1,000 × $0.06 + 4,000 × $10 + 2,000 × $0.30 + 600 × $2.40 + 2,400 × $20 = $0.0919.
        #expect(prices.costMicrodollars(of: .realtime, model: "gpt-realtime-mini", consumption: consumption) == 91_900)
        // A model missing from the table is priced like the dearest one, never as free.
        #expect(prices.costMicrodollars(of: .realtime, model: "gpt-realtime-next", consumption: consumption) == 304_400)
    }

    @Test("inconsistent or absurd token counts are clamped, never negative and never a trap")
    func realtimeClamping() {
        // Audio and cached parts larger than the total: all 100 input tokens are uncached audio.
        let odd = Consumption(inputTokens: 100, outputTokens: -5, cachedInputTokens: 900, audioInputTokens: 500, audioOutputTokens: 70)
        #expect(prices.realtimeCostMicrodollars(model: "gpt-realtime-2.1", consumption: odd) == 3_200)
        let huge = Consumption(inputTokens: .max, outputTokens: .max, cachedInputTokens: .max, audioInputTokens: .max, audioOutputTokens: .max)
        #expect(prices.realtimeCostMicrodollars(model: "gpt-realtime-2.1", consumption: huge) == .max)
        #expect(prices.realtimeCostMicrodollars(model: "gpt-realtime-2.1", consumption: Consumption()) == 0)
    }

    @Test("phone minutes are billed per started minute")
    func telephonyMinutes() {
        #expect(PriceTable.billedMinutes(seconds: 0) == 0)
        #expect(PriceTable.billedMinutes(seconds: 1) == 1)
        #expect(PriceTable.billedMinutes(seconds: 60) == 1)
        #expect(PriceTable.billedMinutes(seconds: 61) == 2)
        #expect(PriceTable.billedMinutes(seconds: -3) == 0)
        #expect(PriceTable.billedMinutes(seconds: .nan) == 0)
        #expect(PriceTable.billedMinutes(seconds: .infinity) == 0)
        #expect(PriceTable.billedMinutes(seconds: 1e300) == 8_784 * 60)
        #expect(prices.costMicrodollars(of: .telephony, model: "twilio", consumption: Consumption(audioSeconds: 61)) == 28_000)
        #expect(prices.costMicrodollars(of: .telephony, model: "twilio", consumption: Consumption(audioSeconds: 60)) == 14_000)
        #expect(prices.costMicrodollars(of: .telephony, model: "twilio", consumption: Consumption(audioSeconds: 0)) == 0)
    }

    @Test("a call's estimate: the whole duration heard, half of it spoken, every minute on the phone")
    func callEstimate() {
        // 600 s: 6,000 audio tokens in × $32 + 6,000 out × $64 per 1M + 10 minutes × $0.014 = $0.716.
        #expect(prices.callEstimateMicrodollars(model: "gpt-realtime-2.1", telephonyProvider: "twilio", durationSeconds: 600) == 716_000)
        #expect(prices.callEstimateMicrodollars(model: "gpt-realtime-2.1", telephonyProvider: "twilio", durationSeconds: 180) == 214_800)
        #expect(prices.callEstimateMicrodollars(model: "gpt-realtime-2.1", telephonyProvider: "twilio", durationSeconds: -1) == 0)
        #expect(prices.callEstimateMicrodollars(model: "gpt-realtime-2.1", telephonyProvider: "twilio", durationSeconds: .max) > 0)
    }

    @Test("operators override realtime and telephony prices; a negative price is refused by name")
    func overrides() throws {
        let json = Data(
            #"{"realtime_usd_per_million_tokens": {"my-realtime": {"text_input": 1, "cached_text_input": 0, "text_output": 2, "audio_input": 3, "cached_audio_input": 0, "audio_output": 4}}, "telephony_usd_per_minute": {"twilio": 0.1}}"#
                .utf8)
        let table = prices.applying(try PriceTable.Overrides.decode(json: json))
        #expect(table.costMicrodollars(of: .telephony, model: "twilio", consumption: Consumption(audioSeconds: 90)) == 200_000)
        #expect(
            table.costMicrodollars(
                of: .realtime, model: "my-realtime", consumption: Consumption(inputTokens: 1_000_000, outputTokens: 1_000_000, audioOutputTokens: 1_000_000))
                == 5_000_000)
        #expect(table.realtimeUSDPerMillionTokens["gpt-realtime-2.1"] == .standardRealtime)
        let negative = Data(
            #"{"realtime_usd_per_million_tokens": {"m": {"text_input": 1, "cached_text_input": 0, "text_output": 2, "audio_input": 3, "cached_audio_input": 0, "audio_output": -4}}}"#
                .utf8)
        #expect(throws: PriceTableError.invalidPrice("realtime_usd_per_million_tokens.m.audio_output")) {
            try PriceTable.Overrides.decode(json: negative)
        }
        #expect(throws: PriceTableError.invalidPrice("telephony_usd_per_minute.twilio")) {
            try PriceTable.Overrides.decode(json: Data(#"{"telephony_usd_per_minute": {"twilio": -1}}"#.utf8))
        }
    }
}
