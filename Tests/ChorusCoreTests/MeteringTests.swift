import Foundation
import Testing

@testable import ChorusCore

@Suite("Metering: prices, overrides, budgets")
struct MeteringTests {
    let prices = PriceTable.standard

    @Test("each operation is priced in its own unit")
    func operationCosts() {
        #expect(prices.costMicrodollars(of: .chat, model: "gpt-4o-mini", consumption: Consumption(inputTokens: 2_000, outputTokens: 300)) == 480)
        #expect(prices.costMicrodollars(of: .speech, model: "tts-1", consumption: Consumption(characters: 1_000)) == 15_000)
        #expect(prices.costMicrodollars(of: .transcription, model: "whisper-1", consumption: Consumption(audioSeconds: 30)) == 3_000)
        // Token-billed images: 50 text tokens in, 4,160 image tokens out at $5 / $40 per 1M.
        #expect(
            prices.costMicrodollars(of: .image, model: "gpt-image-1.5", consumption: Consumption(inputTokens: 50, outputTokens: 4_160, images: 1))
                == 166_650)
        // Without token usage, per picture: DALL-E 3 standard $0.04.
        #expect(prices.costMicrodollars(of: .image, model: "dall-e-3", consumption: Consumption(images: 2)) == 80_000)
        #expect(prices.costMicrodollars(of: .moderation, model: "omni-moderation-latest", consumption: Consumption(inputTokens: 900)) == 0)
        #expect(prices.costMicrodollars(of: .voiceClone, model: "instant_voice_cloning", consumption: Consumption()) == 0)
    }

    @Test("overrides change listed models, add new ones and keep the rest")
    func overrides() throws {
        let json = Data(
            #"""
            {"chat_usd_per_million_tokens": {"gpt-5-mini": {"input": 0.25, "output": 2}, "gpt-4o-mini": {"input": 1, "output": 1}},
             "image_usd_per_image": {"dall-e-3": 0.08}}
            """#.utf8)
        let table = prices.applying(try PriceTable.Overrides.decode(json: json))
        #expect(table.chatCostMicrodollars(model: "gpt-5-mini", promptTokens: 1_000_000, completionTokens: 1_000_000) == 2_250_000)
        #expect(table.chatCostMicrodollars(model: "gpt-4o-mini", promptTokens: 1_000_000, completionTokens: 0) == 1_000_000)
        #expect(table.chatCostMicrodollars(model: "gpt-4o", promptTokens: 1_000_000, completionTokens: 0) == 2_500_000)
        #expect(table.imageCostMicrodollars(model: "dall-e-3", images: 1, inputTokens: nil, outputTokens: nil) == 80_000)
        #expect(table.speechUSDPerMillionCharacters == prices.speechUSDPerMillionCharacters)
    }

    @Test(
        "a bad override names the price",
        arguments: [
            (#"{"speech_usd_per_million_characters": {"tts-1": -1}}"#, "speech_usd_per_million_characters.tts-1"),
            (#"{"chat_usd_per_million_tokens": {"m": {"input": 1, "output": -0.5}}}"#, "chat_usd_per_million_tokens.m.output"),
        ])
    func badOverride(json: String, name: String) {
        #expect(throws: PriceTableError.invalidPrice(name)) { try PriceTable.Overrides.decode(json: Data(json.utf8)) }
    }

    @Test("malformed override files are decoding errors")
    func malformedOverride() {
        #expect(throws: DecodingError.self) { try PriceTable.Overrides.decode(json: Data(#"{"image_usd_per_image": {"x": "cheap"}}"#.utf8)) }
    }

    @Test("a budget refuses new work once reached, or when the estimate would pass it")
    func budgets() {
        let budget = FeatureBudget(dailyMicrodollars: 1_000_000, monthlyMicrodollars: 20_000_000)
        #expect(budget.exceeded(spentToday: 0, spentThisMonth: 0) == nil)
        #expect(budget.exceeded(spentToday: 999_999, spentThisMonth: 999_999) == nil)
        #expect(budget.exceeded(spentToday: 1_000_000, spentThisMonth: 1_000_000) == .day)
        #expect(budget.exceeded(spentToday: 900_000, spentThisMonth: 900_000, estimate: 200_000) == .day)
        #expect(budget.exceeded(spentToday: 0, spentThisMonth: 20_000_000) == .month)
        #expect(FeatureBudget.unlimited.exceeded(spentToday: .max / 2, spentThisMonth: .max / 2, estimate: 1) == nil)
        #expect(FeatureBudget(dailyMicrodollars: 0, monthlyMicrodollars: nil).exceeded(spentToday: 0, spentThisMonth: 0) == .day)
    }
}
