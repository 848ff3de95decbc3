import Foundation
import Testing

@testable import ChorusCore

/// Conversions and sums of numbers from outside (issue 16): what used to trap is clamped or refused.
@Suite("Numbers from outside: domain")
struct CoreNumericInputTests {
    @Test("clampingRounded: NaN, infinities, 2^63 and the bounds of each width never trap")
    func clampingRounded() {
        #expect(Int64(clampingRounded: .nan) == 0)
        #expect(Int64(clampingRounded: .infinity) == .max)
        #expect(Int64(clampingRounded: -.infinity) == .min)
        #expect(Int64(clampingRounded: 1e300) == .max)
        // Double(Int64.max) is 2^63, one past the largest Int64: the bare init traps on it.
        #expect(Int64(clampingRounded: Double(Int64.max)) == .max)
        #expect(Int64(clampingRounded: Double(Int64.min)) == .min)
        #expect(Int(clampingRounded: 2.5) == 3 && Int(clampingRounded: -2.5) == -3)
        #expect(Int(clampingRounded: 2.5, .down) == 2 && Int(clampingRounded: 2.1, .up) == 3 && Int(clampingRounded: -2.9, .towardZero) == -2)
        #expect(UInt8(clampingRounded: 255.4) == 255 && UInt8(clampingRounded: 255.6) == 255 && UInt8(clampingRounded: -1) == 0)
        #expect(Int32(clampingRounded: 2_147_483_647.4) == .max && Int32(clampingRounded: 3e9) == .max)
        #expect(UInt64(clampingRounded: 1.9e19) == .max)
    }

    @Test("clamped sums saturate at the bounds")
    func clampedSums() {
        #expect(Int64.max.addingClamped(1) == .max)
        #expect(Int64.min.addingClamped(-1) == .min)
        #expect(Int64(40).addingClamped(2) == 42)
        #expect([Int64.max, Int64.max, 5].clampedSum { $0 } == .max)
        #expect([Int64.max, -5].clampedSum { $0 } == Int64.max - 5)
        #expect([Int64]().clampedSum { $0 } == 0)
    }

    @Test("a provider reporting absurd usage gets a clamped cost, not a trap")
    func absurdUsageCosts() {
        let prices = PriceTable.standard
        // Int.max tokens at $12.50 per million: 1.2e20 micro-dollars, past Int64 — this trapped in microdollars.
        #expect(prices.costMicrodollars(of: .chat, model: "gpt-4o", consumption: Consumption(inputTokens: .max, outputTokens: .max)) == .max)
        // At $0.75 per million it still fits: 6.9e18 micro-dollars, computed as it is.
        #expect(
            prices.costMicrodollars(of: .chat, model: "gpt-4o-mini", consumption: Consumption(inputTokens: .max, outputTokens: .max))
                == 6_917_529_027_641_081_856)
        #expect(prices.costMicrodollars(of: .speech, model: "tts-1", consumption: Consumption(characters: .max)) == .max)
        #expect(prices.costMicrodollars(of: .transcription, model: "whisper-1", consumption: Consumption(audioSeconds: 1e300)) == .max)
        #expect(prices.costMicrodollars(of: .transcription, model: "whisper-1", consumption: Consumption(audioSeconds: .infinity)) == .max)
        #expect(prices.costMicrodollars(of: .image, model: "dall-e-3", consumption: Consumption(images: .max)) == .max)
        // Input plus output tokens of Int.max each: the sum that decides whether tokens were reported trapped.
        #expect(
            prices.costMicrodollars(of: .image, model: "gpt-image-1.5", consumption: Consumption(inputTokens: .max, outputTokens: .max, images: 1))
                == .max)
        // Negative counts stay free, and ordinary figures keep their exact prices.
        #expect(prices.costMicrodollars(of: .chat, model: "gpt-4o-mini", consumption: Consumption(inputTokens: .min, outputTokens: .min)) == 0)
        #expect(prices.costMicrodollars(of: .chat, model: "gpt-4o-mini", consumption: Consumption(inputTokens: 2_000, outputTokens: 300)) == 480)
    }

    @Test("a voice sample's length message holds for any duration (1e300 s trapped converting to Int)")
    func sampleLengthMessages() {
        let huge = VoiceSampleError.tooLong(seconds: 1e300, maximumSeconds: 120).message
        #expect(huge.hasPrefix("Your sample is ") && huge.hasSuffix("Keep it to 2 minutes or less."))
        #expect(VoiceSampleError.tooLong(seconds: .infinity, maximumSeconds: 120).message.hasPrefix("Your sample is "))
        #expect(VoiceSampleError.tooShort(seconds: 12.7, minimumSeconds: 30).message == "Your sample is 12 seconds long. Record at least 30 seconds.")
    }

    @Test("a WAV clip claiming a sample rate past 384 kHz is unreadable instead of resampled without bound")
    func absurdSampleRate() throws {
        func wav(rate: UInt32) -> Data {
            func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
            func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
            let data: [UInt8] = Array(repeating: 0, count: 64)
            let fmt = Array("fmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(rate) + le32(rate &* 2) + le16(2) + le16(16)
            let body = Array("WAVE".utf8) + fmt + Array("data".utf8) + le32(UInt32(data.count)) + data
            return Data(Array("RIFF".utf8) + le32(UInt32(body.count)) + body)
        }
        // 4,294,967,295 Hz: the 300 ms gap alone would be 1.3 billion samples.
        #expect(throws: WAVSplicerError.self) {
            try WAVSplicer.splice([WAVClip(messageID: "a", sender: "x", wav: wav(rate: 8_000)), WAVClip(messageID: "b", sender: "y", wav: wav(rate: .max))])
        }
        let spliced = try WAVSplicer.splice([WAVClip(messageID: "a", sender: "x", wav: wav(rate: 384_000))])
        #expect(spliced.sampleRate == 384_000)
    }
}
