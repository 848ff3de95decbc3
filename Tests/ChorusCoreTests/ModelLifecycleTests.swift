import ChorusCore
import Foundation
import Testing

/// Issue 22: the model lifecycle policy's date arithmetic at its boundaries (60 days, the shutdown day, UTC days).
@Suite("Model lifecycle policy")
struct ModelLifecycleTests {
    static let model = ConfiguredModel(model: "gpt-4o-mini-tts", setting: "CHORUS_VOICE_TTS_MODEL", product: "voice messages")
    static let shutdown = CalendarDay(iso: "2027-01-06")!

    static func status(today: String, listing: ModelListing = .listed(shutdownDate: shutdown)) -> ModelLifecyclePolicy.Finding.Status {
        ModelLifecyclePolicy.evaluate([model], listing: [model.model: listing], today: CalendarDay(iso: today)!)[0].status
    }

    @Test("dates parse strictly and never trap")
    func parsing() {
        #expect(CalendarDay(iso: "2027-01-06")?.description == "2027-01-06")
        #expect(CalendarDay(iso: "2028-02-29") != nil)
        for bad in ["2027-02-29", "2100-02-29", "2027-13-01", "2027-00-10", "2027-04-31", "2027-1-06", "27-01-06", "2027-01-06T00:00:00Z",
            "", "2027-01-0a", "+027-01-06", "2027-01--6", "９０２７-01-06", "99999999999999999999-01-01"] {
            #expect(CalendarDay(iso: bad) == nil, "\(bad)")
        }
        #expect(CalendarDay(iso: "2000-02-29")!.dayNumber == 11_016)
        #expect(CalendarDay(iso: "1970-01-01")!.dayNumber == 0)
        #expect(CalendarDay(utc: Date(timeIntervalSince1970: .infinity)).year >= 1970)
    }

    @Test("day numbers round-trip over four centuries")
    func roundTrip() {
        var day = CalendarDay(iso: "1900-01-01")!
        let start = day.dayNumber
        for offset in stride(from: 0, to: 146_097 * 1 + 400, by: 37) {
            let moved = CalendarDay(utc: Date(timeIntervalSince1970: TimeInterval(start + offset) * 86_400 + 43_200))
            #expect(moved.dayNumber == start + offset)
            #expect(CalendarDay(iso: moved.description) == moved)
            day = moved
        }
        #expect(day > CalendarDay(iso: "2299-01-01")!)
    }

    @Test("60 days ahead warns, 61 does not; the day before says 1 day; the shutdown day and after are shut down")
    func boundaries() {
        #expect(Self.status(today: "2026-11-07") == .shuttingDown(shutdownDate: Self.shutdown, daysLeft: 60))
        #expect(Self.status(today: "2026-11-06") == .scheduled(shutdownDate: Self.shutdown, daysLeft: 61))
        #expect(Self.status(today: "2027-01-05") == .shuttingDown(shutdownDate: Self.shutdown, daysLeft: 1))
        #expect(Self.status(today: "2027-01-06") == .shutDown(shutdownDate: Self.shutdown, daysLeft: 0))
        #expect(Self.status(today: "2027-02-01") == .shutDown(shutdownDate: Self.shutdown, daysLeft: -26))
        // Across a year end and a leap day.
        let leap = CalendarDay(iso: "2028-03-01")!
        #expect(CalendarDay(iso: "2027-12-31")!.days(until: leap) == 61)
        #expect(CalendarDay(iso: "2028-02-28")!.days(until: leap) == 2)
    }

    @Test("today is the UTC day: one second before midnight UTC is still the day before")
    func utcDay() {
        let formatter = ISO8601DateFormatter()
        let lastSecond = formatter.date(from: "2027-01-05T23:59:59Z")!
        #expect(CalendarDay(utc: lastSecond).description == "2027-01-05")
        #expect(CalendarDay(utc: lastSecond.addingTimeInterval(1)).description == "2027-01-06")
        // 2027-01-05 20:00 in New York is already the 6th in UTC: shut down.
        let newYorkEvening = formatter.date(from: "2027-01-05T20:00:00-05:00")!
        let finding = ModelLifecyclePolicy.evaluate(
            [Self.model], listing: [Self.model.model: .listed(shutdownDate: Self.shutdown)], today: CalendarDay(utc: newYorkEvening))[0]
        #expect(finding.isUnusable && finding.daysLeft == 0)
        #expect(CalendarDay(utc: Date(timeIntervalSince1970: -1)).description == "1969-12-31")
    }

    @Test("not listed is unusable like shut down; an unreadable date and no date are not")
    func listings() {
        let findings = ModelLifecyclePolicy.evaluate(
            [
                Self.model, ConfiguredModel(model: "gpt-3", setting: "CHORUS_STORIES_TEXT_MODEL", product: "stories"),
                ConfiguredModel(model: "gpt-5.5", setting: "CHORUS_VOICE_SUMMARY_MODEL", product: "voice messages"),
                ConfiguredModel(model: "odd", setting: "CHORUS_STORIES_IMAGE_MODEL", product: "stories"),
            ],
            listing: [
                Self.model.model: .listed(shutdownDate: Self.shutdown), "gpt-5.5": .listed(shutdownDate: nil),
                "odd": .listedWithUnreadableDate("soon"),
            ],
            today: CalendarDay(iso: "2026-11-26")!)
        #expect(findings.map(\.status) == [
            .shuttingDown(shutdownDate: Self.shutdown, daysLeft: 41), .notOffered, .available, .unreadableDate("soon"),
        ])
        #expect(findings.map(\.isUnusable) == [false, true, false, false])
        #expect(findings.map(\.needsAttention) == [true, true, false, true])
        #expect(findings[0].summary.contains("gpt-4o-mini-tts") && findings[0].summary.contains("CHORUS_VOICE_TTS_MODEL"))
        #expect(findings[0].summary.contains("2027-01-06") && findings[0].summary.contains("41 days"))
        #expect(findings[1].summary.contains("gpt-3") && findings[1].summary.contains("CHORUS_STORIES_TEXT_MODEL"))
    }
}
