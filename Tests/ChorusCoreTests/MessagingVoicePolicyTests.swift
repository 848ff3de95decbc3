import Foundation
import Testing

@testable import ChorusCore

/// 2025-06-03T15:05:00Z.
private let june2025 = Date(timeIntervalSince1970: 1_748_963_100)
/// 2025-01-01T00:30:00Z: still 31 December in New York.
private let newYear2025 = Date(timeIntervalSince1970: 1_735_691_400)
private let day: TimeInterval = 86_400

@Suite("Voice data policy")
struct VoiceDataPolicyTests {
    @Test("ages from a birth year are the lowest possible: year − birth year − 1")
    func ages() {
        #expect(VoiceDataPolicy.minimumAge(birthYear: 2007, now: june2025) == 17)
        #expect(VoiceDataPolicy.minimumAge(birthYear: 2006, now: june2025) == 18)
        #expect(VoiceDataPolicy.minimumAge(birthYear: 2006, now: newYear2025) == 18)
        #expect(VoiceDataPolicy.minimumAge(birthYear: 2006, now: newYear2025.addingTimeInterval(-3_600)) == 17)
    }

    @Test("cloning needs a birth year proving 18 or more")
    func cloning() {
        #expect(VoiceDataPolicy.canCloneVoice(birthYear: 1984, now: june2025))
        #expect(VoiceDataPolicy.canCloneVoice(birthYear: 2006, now: june2025))
        #expect(!VoiceDataPolicy.canCloneVoice(birthYear: 2007, now: june2025))
        #expect(!VoiceDataPolicy.canCloneVoice(birthYear: nil, now: june2025))
    }

    @Test("voice data: never for anyone who may be under 13; unknown birth year passed the sign-up gate")
    func storage() {
        #expect(VoiceDataPolicy.mayStoreVoiceData(birthYear: 2011, now: june2025))
        #expect(!VoiceDataPolicy.mayStoreVoiceData(birthYear: 2012, now: june2025))
        #expect(!VoiceDataPolicy.mayStoreVoiceData(birthYear: 2020, now: june2025))
        #expect(!VoiceDataPolicy.mayStoreVoiceData(birthYear: 2030, now: june2025))
        #expect(VoiceDataPolicy.mayStoreVoiceData(birthYear: nil, now: june2025))
    }

    @Test("cloning samples: 30 s to 3 min, with clear reasons")
    func samples() throws {
        try VoiceDataPolicy.checkCloningSample(durationSeconds: 30)
        try VoiceDataPolicy.checkCloningSample(durationSeconds: 95.5)
        try VoiceDataPolicy.checkCloningSample(durationSeconds: 180)
        #expect(throws: VoiceSampleError.tooShort(seconds: 12.4, minimumSeconds: 30)) {
            try VoiceDataPolicy.checkCloningSample(durationSeconds: 12.4)
        }
        #expect(throws: VoiceSampleError.tooLong(seconds: 185, maximumSeconds: 180)) {
            try VoiceDataPolicy.checkCloningSample(durationSeconds: 185)
        }
        #expect(VoiceSampleError.tooShort(seconds: 12.4, minimumSeconds: 30).message == "Your sample is 12 seconds long. Record at least 30 seconds.")
        #expect(
            VoiceSampleError.tooLong(seconds: 184.2, maximumSeconds: 180).message
                == "Your sample is 3 minutes 5 seconds long. Keep it to 3 minutes or less.")
        #expect(VoiceSampleError.tooShort(seconds: 1, minimumSeconds: 60).message == "Your sample is 1 second long. Record at least 1 minute.")
    }

    @Test("retention: expiry after the chosen days, starred never, days clamped to 1…365")
    func retention() {
        let sent = june2025
        let expiry = RetentionPolicy.expiry(sentAt: sent, retentionDays: RetentionPolicy.defaultDays, starred: false)
        #expect(expiry == .at(sent.addingTimeInterval(30 * day)))
        #expect(!expiry.isExpired(now: sent.addingTimeInterval(30 * day - 1)))
        #expect(expiry.isExpired(now: sent.addingTimeInterval(30 * day)))
        let starred = RetentionPolicy.expiry(sentAt: sent, retentionDays: 1, starred: true)
        #expect(starred == .never)
        #expect(!starred.isExpired(now: sent.addingTimeInterval(10_000 * day)))
        #expect(RetentionPolicy.expiry(sentAt: sent, retentionDays: 0, starred: false) == .at(sent.addingTimeInterval(day)))
        #expect(RetentionPolicy.expiry(sentAt: sent, retentionDays: 1_000, starred: false) == .at(sent.addingTimeInterval(365 * day)))
    }
}

@Suite("Voice usage policy")
struct VoiceUsagePolicyTests {
    private let policy = VoiceUsagePolicy()

    @Test("monthly voice messages: 100 on the free tier, unlimited when paid; the PRD's texts")
    func limits() {
        #expect(policy.dailyGenerationsPerUser == 50)
        #expect(policy.monthlyVoiceMessageLimit(tier: .free) == 100)
        #expect(policy.monthlyVoiceMessageLimit(tier: .paid) == nil)
        #expect(VoiceUsagePolicy.overQuotaMessage(limit: 100) == "You've reached your monthly voice limit (100 messages). Upgrade for unlimited.")
        #expect(VoiceUsagePolicy.dailyLimitMessage(limit: 50).contains("50 voice generations"))
    }

    @Test("counter keys and budget periods are UTC days and months")
    func periods() {
        // 2026-11-30 23:30 UTC is still November in UTC (it is December 1 in Tokyo).
        let late = Date(timeIntervalSince1970: 1_796_081_400)
        #expect(VoiceUsagePolicy.dailyGenerationsKey(at: late) == "speech:2026-11-30")
        #expect(VoiceUsagePolicy.monthlyVoiceMessagesKey(at: late) == "voice_messages:2026-11")
        #expect(VoiceUsagePolicy.period(late.addingTimeInterval(3_600), monthly: true) == "2026-12")
    }

    @Test("price table: defaults from the research notes, rounded up to micro-dollars, unknown models at the highest price")
    func prices() {
        let prices = PriceTable.standard
        // tts-1 at $15 per 1M characters: 1,000 characters cost 1.5 cents.
        #expect(prices.speechCostMicrodollars(model: "tts-1", characters: 1_000) == 15_000)
        // A 50-character message in a cloned voice (ElevenLabs multilingual, $0.12 per 1k): 0.6 cents.
        #expect(prices.speechCostMicrodollars(model: "eleven_multilingual_v2", characters: 50) == 6_000)
        #expect(prices.speechCostMicrodollars(model: "tts-1", characters: 1) == 15)
        #expect(prices.speechCostMicrodollars(model: "some-new-tts", characters: 1_000) == 120_000)
        // whisper-1: $0.006 a minute, so a 30 s message is 0.3 cents; gpt-transcribe $0.0045.
        #expect(prices.transcriptionCostMicrodollars(model: "whisper-1", seconds: 30) == 3_000)
        #expect(prices.transcriptionCostMicrodollars(model: "gpt-transcribe", seconds: 60) == 4_500)
        // A summary: 2,000 prompt and 300 completion tokens on gpt-4o-mini.
        #expect(prices.chatCostMicrodollars(model: "gpt-4o-mini", promptTokens: 2_000, completionTokens: 300) == 480)
        #expect(prices.chatCostMicrodollars(model: "unknown", promptTokens: 1_000_000, completionTokens: 0) == 2_500_000)
        var custom = prices
        custom.speechUSDPerMillionCharacters["tts-1"] = 20
        #expect(custom.speechCostMicrodollars(model: "tts-1", characters: 1_000) == 20_000)
        let empty = PriceTable(speechUSDPerMillionCharacters: [:], transcriptionUSDPerMinute: [:], chatUSDPerMillionTokens: [:])
        #expect(empty.speechCostMicrodollars(model: "tts-1", characters: 1_000) == 0)
    }
}
