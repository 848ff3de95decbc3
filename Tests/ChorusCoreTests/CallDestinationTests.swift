import ChorusAPI
import Foundation
import Testing

@testable import ChorusCore

/// Issue 17: the numbering-plan rules, the destinations, the calling hours and the per-number periods.
@Suite("Call destinations")
struct CallDestinationTests {
    // MARK: Numbering plan

    /// Numbers never called, whatever the destinations: (number, code, words of the reason).
    static let refused: [(String, String, String)] = [
        // NANP: numbers that cannot exist.
        ("+1234567890", "invalid_number", "10 digits"),
        ("+10125550123", "invalid_number", "area codes never start with 0 or 1"),
        ("+11125550123", "invalid_number", "area codes never start with 0 or 1"),
        ("+14150125555", "invalid_number", "exchanges never start with 0 or 1"),
        ("+14151125555", "invalid_number", "exchanges never start with 0 or 1"),
        ("+19115550123", "invalid_number", "N11 codes such as 911"),
        ("+14115550123", "invalid_number", "N11 codes such as 411"),
        // NANP: premium-rate, service codes.
        ("+19005550123", "premium_rate_number", "900 numbers"),
        ("+12129761234", "premium_rate_number", "976 exchanges"),
        ("+14159111234", "service_number", "911 is an N11 service code"),
        ("+14152111234", "service_number", "211 is an N11 service code"),
        ("+12125551212", "service_number", "directory assistance"),
        ("+18005551212", "service_number", "directory assistance"),
        ("+17105550123", "service_number", "US government"),
        // Other countries: premium-rate, shared-cost, emergency.
        ("+449098790123", "premium_rate_number", "09 numbers are premium-rate in the United Kingdom"),
        ("+447012345678", "premium_rate_number", "070 personal"),
        ("+448445550123", "shared_cost_number", "084 numbers are shared-cost"),
        ("+448712345678", "shared_cost_number", "087 numbers"),
        ("+44999123456", "service_number", "999 is an emergency or service number"),
        ("+44112123456", "service_number", "112 is an emergency"),
        ("+4911212345678", "service_number", "112"),
        ("+4990012345678", "premium_rate_number", "0900 numbers are premium-rate in Germany"),
        ("+4918012345678", "shared_cost_number", "0180 numbers are shared-cost in Germany"),
        ("+33891234567", "premium_rate_number", "089 numbers are premium-rate in France"),
        ("+33812345678", "shared_cost_number", "081"),
        ("+34905123456", "premium_rate_number", "Spain"),
        ("+34902123456", "shared_cost_number", "Spain"),
        ("+61000123456", "service_number", "000"),
        ("+61190012345", "premium_rate_number", "Australia"),
        ("+61130012345", "shared_cost_number", "13/1300"),
        ("+31900123456", "premium_rate_number", "the Netherlands"),
        // Numbers a country's plan cannot hold.
        ("+4420712345", "invalid_number", "United Kingdom"),
        ("+3312345678", "invalid_number", "France"),
        // International codes: satellite, networks, premium, shared-cost.
        ("+88212345678", "international_service_number", "+882 is an international network number"),
        ("+88312345678", "international_service_number", "+883"),
        ("+97912345678", "premium_rate_number", "+979 is an international premium-rate number"),
        ("+80812345678", "shared_cost_number", "+808 is an international shared-cost number"),
        ("+870772123456", "international_service_number", "Inmarsat"),
        ("+881612345678", "international_service_number", "satellite"),
    ]

    @Test("numbers never called are refused with their reason", arguments: refused)
    func neverCalled(number: String, code: String, words: String) {
        guard case .refused(let refusal) = NumberingPlan.classify(number) else {
            Issue.record("\(number) was not refused: \(NumberingPlan.classify(number))")
            return
        }
        #expect(refusal.code == code, "\(number)")
        #expect(refusal.message.contains(words), "\(number): \(refusal.message)")
    }

    /// Callable numbers: (number, country, zones).
    static let callable: [(String, String, [String])] = [
        ("+12125550199", "US", ["America/New_York"]),  // 555-01XX: fictional, checked below
        ("+14155550100", "US", ["America/Los_Angeles"]),
        ("+12025550123", "US", ["America/New_York"]),
        ("+13125550123", "US", ["America/Chicago"]),
        ("+13035550123", "US", ["America/Denver"]),
        ("+16025550123", "US", ["America/Phoenix"]),
        ("+18085550123", "US", ["Pacific/Honolulu"]),
        ("+19075550123", "US", ["America/Anchorage", "America/Adak"]),
        ("+18505550123", "US", ["America/New_York", "America/Chicago"]),
        ("+19155550123", "US", ["America/Denver"]),
        ("+14165550123", "CA", ["America/Toronto"]),
        ("+16045550123", "CA", ["America/Vancouver"]),
        ("+17095550123", "CA", ["America/St_Johns", "America/Goose_Bay"]),
        ("+17875550123", "PR", ["America/Puerto_Rico"]),
        ("+18765550123", "JM", ["America/Jamaica"]),
        ("+18095550123", "DO", ["America/Santo_Domingo"]),
        ("+18005550123", "US", NANP.countries["US"]!),  // toll-free: country-wide
        ("+15005550006", "US", NANP.countries["US"]!),  // the sandbox caller ID
        ("+447700900123", "GB", ["Europe/London"]),
        ("+33612345678", "FR", ["Europe/Paris"]),
        ("+4930123456", "DE", ["Europe/Berlin"]),
        ("+34928123456", "ES", ["Atlantic/Canary"]),
        ("+34612345678", "ES", ["Europe/Madrid", "Atlantic/Canary"]),
        ("+61212345678", "AU", ["Australia/Sydney"]),
        ("+61412345678", "AU", ["Australia/Perth", "Australia/Darwin", "Australia/Adelaide", "Australia/Brisbane", "Australia/Sydney"]),
        ("+819012345678", "JP", ["Asia/Tokyo"]),
    ]

    @Test("callable numbers have their country and zones", arguments: callable)
    func callableNumbers(number: String, country: String, zones: [String]) {
        guard case .callable(let destination) = NumberingPlan.classify(number) else {
            Issue.record("\(number) was refused: \(NumberingPlan.classify(number))")
            return
        }
        #expect(destination.country == country, "\(number)")
        #expect(destination.timeZones == zones, "\(number)")
    }

    @Test("every NANP area code's country has zones, and every zone of the tables is a real IANA zone")
    func nanpTablesAreConsistent() {
        for (npa, country) in NANP.countryByAreaCode {
            #expect(NANP.countries[country] != nil, "area code \(npa) names \(country), which has no zones")
        }
        let zones = Set(NANP.countries.values.joined()).union(NANP.zonesByAreaCode.values.joined())
        for zone in zones { #expect(TimeZone(identifier: zone) != nil, "\(zone)") }
    }

    @Test("the 555 exchange is fictional; the caller ID's country is the default destination")
    func fictionalRange() {
        guard case .callable(let fictional) = NumberingPlan.classify("+14155550123") else {
            Issue.record("555-0123 was refused")
            return
        }
        #expect(fictional.fictionalReason?.contains("555-0100 to 555-0199") == true)
        guard case .callable(let other) = NumberingPlan.classify("+14155557020") else {
            Issue.record("555-7020 was refused")
            return
        }
        #expect(other.fictionalReason?.contains("not a subscriber exchange") == true)
        #expect(NumberingPlan.country(of: "+15005550006") == "US")
        #expect(NumberingPlan.country(of: "+14155550123") == "US")
        #expect(NumberingPlan.country(of: "+19005550123") == nil)
        #expect(NumberingPlan.country(of: "+447700900123") == "GB")
        #expect(NumberingPlan.country(of: "+79161234567") == nil)
        #expect(NumberingPlan.classify("+79161234567") == .unknownCountry)
        #expect(NumberingPlan.classify("+8613812345678") == .unknownCountry)
    }

    @Test("every zone of the table exists in the time-zone database")
    func zonesExist() {
        let missing = NumberingPlan.allTimeZones.filter { TimeZone(identifier: $0) == nil }
        #expect(missing.isEmpty, "\(missing.sorted())")
        #expect(NumberingPlan.allTimeZones.count > 40)
    }

    @Test("malformed input is refused, never trapped on")
    func malformed() {
        for text in ["", "+", "1234567890", "+1415555012٣", "+12345", "+1234567890123456", "+44 20 7946 0000", "+٤٤2079460000"] {
            guard case .refused(let refusal) = NumberingPlan.classify(text) else {
                Issue.record("\(text) was not refused")
                continue
            }
            #expect(refusal.code == "invalid_number")
        }
    }

    // MARK: Destinations

    @Test("destinations: the allowed countries, fictional numbers only with sandbox telephony")
    func destinations() {
        let live = CallDestinationPolicy(allowedCountries: ["US"], allowsFictionalNumbers: false, hours: nil)
        let sandbox = CallDestinationPolicy(allowedCountries: ["US", "CA"], allowsFictionalNumbers: true, hours: nil)
        #expect((try? live.destination(of: "+12026661234").get())?.country == "US")
        #expect(live.destination(of: "+14162223333") == .failure(.destinationNotAllowed(country: "CA")))
        #expect(CallRefusal.destinationNotAllowed(country: "CA").message == "Calls to Canada (CA) are not available on this service.")
        #expect(CallRefusal.destinationNotAllowed(country: "CA").code == "destination_not_allowed")
        #expect((try? sandbox.destination(of: "+14162223333").get())?.country == "CA")
        #expect(live.destination(of: "+447700900123") == .failure(.destinationNotAllowed(country: "GB")))
        #expect(live.destination(of: "+79161234567") == .failure(.destinationNotAllowed(country: nil)))
        #expect(
            CallRefusal.destinationNotAllowed(country: nil).message == "Calls to this country are not available on this service.")
        guard case .failure(let fictional) = live.destination(of: "+14155550123") else {
            Issue.record("a fictional number was allowed with live telephony")
            return
        }
        #expect(fictional.code == "fictional_number")
        #expect(fictional.message.contains("only with the sandbox telephony"))
        #expect((try? sandbox.destination(of: "+14155550123").get())?.country == "US")
        // Never-called numbers stay refused whatever the list.
        let everywhere = CallDestinationPolicy(
            allowedCountries: NumberingPlan.supportedCountries, allowsFictionalNumbers: true, hours: nil)
        for (number, code, _) in Self.refused {
            guard case .failure(let refusal) = everywhere.destination(of: number) else {
                Issue.record("\(number) was allowed")
                continue
            }
            #expect(refusal.code == code)
        }
    }

    // MARK: Calling hours

    static func utc(_ text: String) -> Date { ChorusJSON.parseDate(text)! }

    @Test("calling hours parse")
    func parse() {
        #expect(CallingHours.parse("09:00-20:00") == CallingHours(start: 540, end: 1200))
        #expect(CallingHours.parse("08:30-21:00") == CallingHours(start: 510, end: 1260))
        #expect(CallingHours.parse("00:00-24:00") == CallingHours(start: 0, end: 1440))
        #expect(CallingHours.parse("09:00 - 20:00") == CallingHours(start: 540, end: 1200))
        for bad in ["", "9-20", "09:00", "20:00-09:00", "09:00-09:00", "25:00-26:00", "09:60-20:00", "24:30-24:40", "a:bc-20:00"] {
            #expect(CallingHours.parse(bad) == nil, "\(bad)")
        }
        #expect(CallingHours.standard.description == "09:00-20:00")
    }

    /// (now, zones, allowed, next allowed).
    static let windows: [(String, [String], Bool, String?)] = [
        // New York in winter (UTC-5): 09:00 local is 14:00Z, 20:00 local is 01:00Z.
        ("2026-01-15T13:59:00Z", ["America/New_York"], false, "2026-01-15T14:00:00Z"),
        ("2026-01-15T14:00:00Z", ["America/New_York"], true, "2026-01-15T14:00:00Z"),
        ("2026-01-16T00:59:59Z", ["America/New_York"], true, "2026-01-16T00:59:59Z"),
        ("2026-01-16T01:00:00Z", ["America/New_York"], false, "2026-01-16T14:00:00Z"),
        // Summer time (UTC-4): 09:00 local is 13:00Z.
        ("2026-07-15T12:30:00Z", ["America/New_York"], false, "2026-07-15T13:00:00Z"),
        // The day clocks change (2026-03-08, 02:00 → 03:00 local): 09:00 EDT is 13:00Z.
        ("2026-03-08T08:00:00Z", ["America/New_York"], false, "2026-03-08T13:00:00Z"),
        // Several zones: the window holds in all of them (Eastern and Central: 10:00Z+5 = 09:00 Central = 15:00Z).
        ("2026-01-15T14:30:00Z", ["America/New_York", "America/Chicago"], false, "2026-01-15T15:00:00Z"),
        ("2026-01-16T00:30:00Z", ["America/New_York", "America/Chicago"], true, "2026-01-16T00:30:00Z"),
        // The whole United States, Hawaii included (winter: 09:00 HST = 19:00Z, 20:00 EST = 01:00Z).
        ("2026-01-15T18:00:00Z", NANP.countries["US"]!, false, "2026-01-15T19:00:00Z"),
        ("2026-01-15T19:00:00Z", NANP.countries["US"]!, true, "2026-01-15T19:00:00Z"),
        // London, and Tokyo past the date line.
        ("2026-06-01T07:59:00Z", ["Europe/London"], false, "2026-06-01T08:00:00Z"),
        ("2026-06-01T11:00:00Z", ["Asia/Tokyo"], false, "2026-06-02T00:00:00Z"),
    ]

    @Test("the callee's calling hours, with the next allowed moment", arguments: windows)
    func hours(now: String, zones: [String], allowed: Bool, next: String?) {
        let hours = CallingHours.standard
        let timeZones = zones.compactMap(TimeZone.init(identifier:))
        #expect(timeZones.count == zones.count)
        #expect(hours.allows(Self.utc(now), in: timeZones) == allowed, "\(now) \(zones)")
        #expect(hours.nextAllowed(atOrAfter: Self.utc(now), in: timeZones) == next.map(Self.utc), "\(now) \(zones)")
    }

    @Test("zones too far apart never share the window")
    func neverOverlapping() {
        let zones = ["Etc/GMT-12", "Etc/UTC"].compactMap(TimeZone.init(identifier:))  // UTC+12 and UTC: 12 hours apart
        #expect(zones.count == 2)
        #expect(CallingHours.standard.nextAllowed(atOrAfter: Self.utc("2026-01-15T12:00:00Z"), in: zones) == nil)
        let refusal = CallRefusal.quietHours(.standard, next: nil)
        #expect(refusal.retryAt == nil && refusal.code == "quiet_hours")
    }

    @Test("the quiet-hours refusal names the hours and the next allowed time")
    func quietHoursRefusal() {
        let policy = CallDestinationPolicy(allowedCountries: ["US"], allowsFictionalNumbers: true, hours: .standard)
        let destination = try! policy.destination(of: "+12125550123").get()
        #expect(policy.quietHours(destination, at: Self.utc("2026-01-15T15:00:00Z")) == nil)
        let refusal = policy.quietHours(destination, at: Self.utc("2026-01-15T03:00:00Z"))
        #expect(refusal?.code == "quiet_hours")
        #expect(refusal?.retryAt == Self.utc("2026-01-15T14:00:00Z"))
        #expect(
            refusal?.message
                == "It is outside the calling hours (09:00-20:00, the callee's local time) where this number is. "
                + "Calls to it can be placed from 2026-01-15T14:00:00Z.")
        let anyTime = CallDestinationPolicy(allowedCountries: ["US"], allowsFictionalNumbers: true, hours: nil)
        #expect(anyTime.quietHours(destination, at: Self.utc("2026-01-15T03:00:00Z")) == nil)
    }

    // MARK: Per-number limits

    @Test("the per-number limits count in UTC days and Monday-to-Sunday UTC weeks")
    func periods() {
        let thursday = Self.utc("2026-11-26T23:59:59Z")
        #expect(NumberLimitPeriods.day(of: thursday).key == "2026-11-26")
        #expect(NumberLimitPeriods.day(of: thursday).ends == Self.utc("2026-11-27T00:00:00Z"))
        #expect(NumberLimitPeriods.week(of: thursday).key == "2026-11-23")
        #expect(NumberLimitPeriods.week(of: thursday).ends == Self.utc("2026-11-30T00:00:00Z"))
        #expect(NumberLimitPeriods.week(of: Self.utc("2026-11-30T00:00:00Z")).key == "2026-11-30")
        #expect(NumberLimitPeriods.week(of: Self.utc("2026-11-29T23:00:00Z")).key == "2026-11-23")
        #expect(NumberLimitPeriods.week(of: Self.utc("2027-01-01T12:00:00Z")).key == "2026-12-28")
        let daily = CallRefusal.numberDailyLimit(3, until: Self.utc("2026-11-27T00:00:00Z"))
        #expect(daily.code == "number_daily_limit" && daily.retryAt == Self.utc("2026-11-27T00:00:00Z"))
        #expect(daily.message.contains("3 times today") && daily.message.hasSuffix("from 2026-11-27T00:00:00Z."))
        let accounts = CallRefusal.numberAccountLimit(3, until: Self.utc("2026-11-30T00:00:00Z"))
        #expect(accounts.code == "number_account_limit" && accounts.message.contains("3 different accounts this week"))
    }

    @Test("numbers are stored as keyed hashes")
    func hashes() {
        let hasher = PhoneNumberHasher(secret: "secret-one")
        let first = hasher.hash("+14155550123")
        #expect(first.count == 64 && first.allSatisfy(\.isHexDigit))
        #expect(first == PhoneNumberHasher(secret: "secret-one").hash("+14155550123"))
        #expect(first != hasher.hash("+14155550124"))
        #expect(first != PhoneNumberHasher(secret: "secret-two").hash("+14155550123"))
        #expect(!first.contains("4155550123"))
    }
}
