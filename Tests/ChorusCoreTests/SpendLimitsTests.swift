import Foundation
import Testing

@testable import ChorusCore

@Suite("Spend limits")
struct SpendLimitsTests {
    @Test("networks: IPv4 /24, IPv6 /64, mapped addresses, other prefixes, and text that is no address")
    func networks() {
        let standard = NetworkPrefix()
        #expect(standard.network(of: "203.0.113.77") == "203.0.113.0/24")
        #expect(standard.network(of: "127.0.0.1") == "127.0.0.0/24")
        #expect(standard.network(of: "2001:db8:1:2:3:4:5:6") == "2001:db8:1:2:0:0:0:0/64")
        #expect(standard.network(of: "2001:db8::1") == "2001:db8:0:0:0:0:0:0/64")
        #expect(standard.network(of: "::1") == "0:0:0:0:0:0:0:0/64")
        #expect(standard.network(of: "fe80::1%eth0") == "fe80:0:0:0:0:0:0:0/64")
        #expect(standard.network(of: "::ffff:198.51.100.9") == "198.51.100.0/24")
        #expect(standard.network(of: "unknown") == "unknown")
        for bad in ["1.2.3", "1.2.3.256", "1.2.3.4.5", "1:2:3", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9", "::ffff:1.2.3", "", "١.٢.٣.٤"] {
            #expect(standard.network(of: bad) == bad, "\(bad)")
        }
        let wide = NetworkPrefix(ipv4PrefixLength: 20, ipv6PrefixLength: 52)
        #expect(wide.network(of: "203.0.113.77") == "203.0.112.0/20")
        #expect(wide.network(of: "2001:db8:1:2fff::1") == "2001:db8:1:2000:0:0:0:0/52")
        // Lengths out of range are clamped, never trap.
        #expect(NetworkPrefix(ipv4PrefixLength: 99, ipv6PrefixLength: -4).network(of: "10.1.2.3") == "10.1.2.3/32")
    }

    @Test("Retry-After: seconds to the next UTC day and month")
    func boundaries() {
        let morning = Date(timeIntervalSince1970: 1_795_680_000)  // 2026-11-26 08:00:00 UTC
        #expect(UTCBoundary.secondsUntilNext(.day, after: morning) == 16 * 3_600)
        #expect(UTCBoundary.secondsUntilNext(.month, after: morning) == (4 * 24 + 16) * 3_600)
        let lastSecond = Date(timeIntervalSince1970: 1_798_761_599)  // 2026-12-31 23:59:59 UTC
        #expect(UTCBoundary.secondsUntilNext(.day, after: lastSecond) == 1)
        #expect(UTCBoundary.secondsUntilNext(.month, after: lastSecond) == 1)
    }

    @Test("estimates: chat at its output allowance, pictures by quality and size, huge inputs do not trap")
    func estimates() {
        let prices = PriceTable.standard
        // gpt-4.1-mini: 3,000 bytes → 1,000 + 2×8 tokens at $0.40/M, 1,200 output tokens at $1.60/M.
        #expect(prices.chatEstimateMicrodollars(model: "gpt-4.1-mini", promptBytes: 2_998, messages: 2, maxOutputTokens: 1_200) == 407 + 1_920)
        #expect(
            prices.chatEstimateMicrodollars(model: "gpt-4.1-mini", promptBytes: 0, messages: 0, maxOutputTokens: nil)
                == prices.chatCostMicrodollars(model: "gpt-4.1-mini", promptTokens: 0, completionTokens: PriceTable.defaultMaxOutputTokens))
        #expect(prices.chatEstimateMicrodollars(model: "gpt-4o", promptBytes: .max, messages: .max, maxOutputTokens: .max) > 0)
        // gpt-image-2 medium 1024×1024: 1,056 output tokens at $40/M, 8 + 10 input tokens at $5/M.
        #expect(prices.imageEstimateMicrodollars(model: "gpt-image-2", promptBytes: 30, size: "1024x1024", quality: "medium") == 42_240 + 90)
        #expect(
            prices.imageEstimateMicrodollars(model: "gpt-image-2", promptBytes: 30, size: "1536x1024", quality: "high")
                > prices.imageEstimateMicrodollars(model: "gpt-image-2", promptBytes: 30, size: "1024x1024", quality: "high"))
        #expect(prices.imageEstimateMicrodollars(model: "dall-e-3", promptBytes: 30, size: "1024x1024", quality: "standard") == 40_000)
        #expect(prices.imageEstimateMicrodollars(model: "gpt-image-2", promptBytes: 30, size: "99999999x99999999", quality: "low") > 0)
    }

    @Test("a user's operations are counted per product and UTC day")
    func operationKeys() {
        let date = Date(timeIntervalSince1970: 1_795_680_000)
        #expect(ProductLimits.userOperationsKey(.stories, at: date) == "ops:stories:2026-11-26")
        #expect(ProductLimits.userOperationsKey(.voiceMessages, at: date) == "ops:voice_messages:2026-11-26")
    }
}
