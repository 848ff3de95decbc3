/// Where an E.164 number rings, and the numbers Chorus never calls.
///
/// The data is a compact numbering-plan table written from the published plans (sources and dates in
/// `docs/decisions.md`, "Where and when calls go (issue 17)"): NANPA's rules for the North American Numbering Plan
/// (area codes and exchanges never start with 0 or 1, N11 codes are services, 900 and 976 are premium-rate,
/// 555-0100–0199 is fictional), ITU-T E.164 assignments of the international service codes, and each country's
/// regulator's premium-rate and shared-cost ranges (Ofcom for the UK, BNetzA for Germany, ARCEP for France, ...).
/// Countries outside ``countries`` have no data: their numbers are refused as not allowed.
public enum NumberingPlan {
    /// The result of reading a number.
    public enum Classification: Sendable, Equatable {
        /// A subscriber number (or a fictional one, callable in the sandbox only).
        case callable(PhoneDestination)
        /// A number that is never called, whatever the destinations.
        case refused(NumberRefusal)
        /// A country calling code Chorus has no numbering-plan data for.
        case unknownCountry
    }

    /// Classifies `e164` (`+` and 8 to 15 digits; anything else is ``NumberRefusal/Kind/invalid``).
    public static func classify(_ e164: String) -> Classification {
        guard e164.hasPrefix("+") else { return .refused(NumberRefusal(.invalid, "it is not an E.164 number")) }
        let digits = Array(e164.utf8.dropFirst())
        guard (8...15).contains(digits.count), digits.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return .refused(NumberRefusal(.invalid, "it is not an E.164 number"))
        }
        let text = String(decoding: digits, as: UTF8.self)
        if text.hasPrefix("1") { return NANP.classify(String(text.dropFirst())) }
        for code in internationalServiceCodes where text.hasPrefix(code.code) {
            return .refused(NumberRefusal(code.kind, "+\(code.code) is \(code.description)"))
        }
        for country in countries where text.hasPrefix(country.callingCode) {
            return country.classify(nationalNumber: String(text.dropFirst(country.callingCode.count)))
        }
        return .unknownCountry
    }

    /// The country of a number, when it is a callable number (fictional ones included) Chorus has data for: the caller
    /// ID's country is the default destination.
    public static func country(of e164: String) -> String? {
        if case .callable(let destination) = classify(e164) { return destination.country }
        return nil
    }

    /// The ISO 3166 codes of every country Chorus has numbering-plan data for (what `CHORUS_CALL_DESTINATIONS` may list).
    public static var supportedCountries: Set<String> {
        Set(countries.map(\.iso)).union(NANP.countries.keys)
    }

    /// A country's name for messages (`US` → `the United States`); the code itself when unknown.
    public static func name(of country: String) -> String {
        countries.first { $0.iso == country }?.name ?? NANP.countryNames[country] ?? country
    }

    /// Every IANA time zone the table names (checked at start-up: a system without them cannot apply quiet hours).
    public static var allTimeZones: Set<String> {
        var zones = Set(countries.flatMap { $0.zones + $0.zonesByPrefix.flatMap(\.zones) })
        zones.formUnion(NANP.zonesByAreaCode.values.joined())
        zones.formUnion(NANP.countries.values.joined())
        return zones
    }

    // MARK: International service codes (ITU-T E.164 assignments)

    struct ServiceCode {
        var code: String
        var kind: NumberRefusal.Kind
        var description: String
    }

    /// Shared codes that are not countries: satellite systems, international networks, premium and shared-cost services.
    static let internationalServiceCodes = [
        ServiceCode(code: "800", kind: .internationalService, description: "an international freephone number (UIFN)"),
        ServiceCode(code: "808", kind: .sharedCost, description: "an international shared-cost number"),
        ServiceCode(code: "870", kind: .internationalService, description: "an Inmarsat satellite number"),
        ServiceCode(code: "878", kind: .internationalService, description: "a universal personal telecommunications number"),
        ServiceCode(code: "881", kind: .internationalService, description: "a global mobile satellite number"),
        ServiceCode(code: "882", kind: .internationalService, description: "an international network number"),
        ServiceCode(code: "883", kind: .internationalService, description: "an international network number"),
        ServiceCode(code: "888", kind: .internationalService, description: "an international humanitarian-service number"),
        ServiceCode(code: "979", kind: .premiumRate, description: "an international premium-rate number"),
        ServiceCode(code: "991", kind: .internationalService, description: "an international trial-service number"),
    ]

    // MARK: Countries outside the NANP

    struct Country {
        var iso: String
        var name: String
        var callingCode: String
        /// Lengths of the national significant number (after the country code).
        var lengths: ClosedRange<Int>
        var zones: [String]
        /// Narrower zones for numbers starting with a prefix (geographic area codes).
        var zonesByPrefix: [(prefix: String, zones: [String])] = []
        /// National-number prefixes of premium-rate, shared-cost and service (emergency, directory) numbers.
        var premium: [(prefix: String, label: String)] = []
        var sharedCost: [(prefix: String, label: String)] = []
        var service: [(prefix: String, label: String)] = []

        func classify(nationalNumber number: String) -> Classification {
            if let match = service.first(where: { number.hasPrefix($0.prefix) }) {
                return .refused(NumberRefusal(.service, "\(match.label) is an emergency or service number in \(name)"))
            }
            if let match = premium.first(where: { number.hasPrefix($0.prefix) }) {
                return .refused(NumberRefusal(.premiumRate, "\(match.label) numbers are premium-rate in \(name)"))
            }
            if let match = sharedCost.first(where: { number.hasPrefix($0.prefix) }) {
                return .refused(NumberRefusal(.sharedCost, "\(match.label) numbers are shared-cost in \(name)"))
            }
            guard lengths.contains(number.count), number.first != "0" else {
                return .refused(NumberRefusal(.invalid, "numbers in \(name) do not have this form"))
            }
            let zones = zonesByPrefix.first { number.hasPrefix($0.prefix) }?.zones ?? self.zones
            return .callable(PhoneDestination(country: iso, timeZones: zones))
        }
    }

    /// Countries with data. Prefixes are national significant numbers (without the trunk `0`): UK `09…` is `9`.
    static let countries: [Country] = [
        Country(
            iso: "GB", name: "the United Kingdom", callingCode: "44", lengths: 9...10, zones: ["Europe/London"],
            premium: [("9", "09"), ("70", "070 personal")], sharedCost: [("84", "084"), ("87", "087")],
            service: [("999", "999"), ("112", "112"), ("118", "118")]),
        Country(
            iso: "FR", name: "France", callingCode: "33", lengths: 9...9, zones: ["Europe/Paris"],
            premium: [("89", "089")], sharedCost: [("81", "081"), ("82", "082")]),
        Country(
            iso: "DE", name: "Germany", callingCode: "49", lengths: 6...13, zones: ["Europe/Berlin"],
            premium: [("900", "0900"), ("137", "0137"), ("190", "0190")], sharedCost: [("180", "0180")],
            service: [("110", "110"), ("112", "112"), ("118", "118")]),
        Country(
            iso: "ES", name: "Spain", callingCode: "34", lengths: 9...9, zones: ["Europe/Madrid", "Atlantic/Canary"],
            zonesByPrefix: [("822", ["Atlantic/Canary"]), ("828", ["Atlantic/Canary"]), ("922", ["Atlantic/Canary"]), ("928", ["Atlantic/Canary"])],
            premium: [("803", "803"), ("806", "806"), ("807", "807"), ("905", "905")], sharedCost: [("901", "901"), ("902", "902")]),
        Country(
            iso: "IT", name: "Italy", callingCode: "39", lengths: 6...11, zones: ["Europe/Rome"],
            premium: [("89", "89x")], sharedCost: [("84", "84x")]),
        Country(
            iso: "NL", name: "the Netherlands", callingCode: "31", lengths: 9...9, zones: ["Europe/Amsterdam"],
            premium: [("900", "0900"), ("906", "0906"), ("909", "0909")]),
        Country(
            iso: "BE", name: "Belgium", callingCode: "32", lengths: 8...9, zones: ["Europe/Brussels"],
            premium: [("90", "090x")], sharedCost: [("70", "070"), ("78", "078")]),
        Country(
            iso: "CH", name: "Switzerland", callingCode: "41", lengths: 9...9, zones: ["Europe/Zurich"],
            premium: [("90", "090x")], sharedCost: [("84", "084x")]),
        Country(
            iso: "AT", name: "Austria", callingCode: "43", lengths: 6...13, zones: ["Europe/Vienna"],
            premium: [("90", "090x"), ("93", "093x")], sharedCost: [("810", "0810"), ("820", "0820"), ("821", "0821")]),
        Country(
            iso: "PT", name: "Portugal", callingCode: "351", lengths: 9...9, zones: ["Europe/Lisbon", "Atlantic/Azores"],
            zonesByPrefix: [("292", ["Atlantic/Azores"]), ("295", ["Atlantic/Azores"]), ("296", ["Atlantic/Azores"])],
            premium: [("60", "60x")], sharedCost: [("707", "707"), ("708", "708"), ("808", "808")]),
        Country(
            iso: "SE", name: "Sweden", callingCode: "46", lengths: 7...9, zones: ["Europe/Stockholm"],
            premium: [("900", "0900"), ("939", "0939"), ("944", "0944")]),
        Country(
            iso: "NO", name: "Norway", callingCode: "47", lengths: 8...8, zones: ["Europe/Oslo"],
            premium: [("820", "820"), ("829", "829")]),
        Country(
            iso: "DK", name: "Denmark", callingCode: "45", lengths: 8...8, zones: ["Europe/Copenhagen"],
            premium: [("90", "90xx")]),
        Country(
            iso: "AU", name: "Australia", callingCode: "61", lengths: 9...10,
            zones: ["Australia/Perth", "Australia/Darwin", "Australia/Adelaide", "Australia/Brisbane", "Australia/Sydney"],
            zonesByPrefix: [
                ("2", ["Australia/Sydney"]), ("3", ["Australia/Melbourne", "Australia/Hobart"]), ("7", ["Australia/Brisbane"]),
                ("8", ["Australia/Perth", "Australia/Adelaide", "Australia/Darwin"]),
            ],
            premium: [("19", "190x")], sharedCost: [("13", "13/1300")], service: [("000", "000"), ("106", "106"), ("112", "112")]),
        Country(
            iso: "NZ", name: "New Zealand", callingCode: "64", lengths: 8...10, zones: ["Pacific/Auckland", "Pacific/Chatham"],
            premium: [("900", "0900")], service: [("111", "111")]),
        Country(
            iso: "JP", name: "Japan", callingCode: "81", lengths: 9...10, zones: ["Asia/Tokyo"],
            premium: [("990", "0990")], sharedCost: [("570", "0570")]),
    ]
}

/// Where a callable number rings.
public struct PhoneDestination: Sendable, Equatable {
    /// ISO 3166 alpha-2.
    public var country: String
    /// IANA ids of the zones the number may ring in: one, or several when the number alone does not say which (a
    /// country or area code spanning zones; quiet hours then hold in all of them).
    public var timeZones: [String]
    /// Why the number is fictional (the NANP's 555 exchange), callable with the sandbox telephony only; `nil` for a real
    /// subscriber number.
    public var fictionalReason: String?

    public init(country: String, timeZones: [String], fictionalReason: String? = nil) {
        self.country = country
        self.timeZones = timeZones
        self.fictionalReason = fictionalReason
    }
}

/// Why a number is never called.
public struct NumberRefusal: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Premium-rate: the caller (the operator's telephony account) pays a surcharge to the number's owner.
        case premiumRate = "premium_rate_number"
        /// Shared-cost: part of the cost is the caller's, above a normal call.
        case sharedCost = "shared_cost_number"
        /// Emergency, N11, directory and government service codes.
        case service = "service_number"
        /// A number the numbering plan cannot assign.
        case invalid = "invalid_number"
        /// Satellite systems, international networks and other shared international codes.
        case internationalService = "international_service_number"
        /// The NANP's 555 exchange (555-0100–0199 is reserved for fiction): only the sandbox calls it.
        case fictional = "fictional_number"
    }

    public var kind: Kind
    /// Why, in words, e.g. "900 numbers are premium-rate in the North American Numbering Plan".
    public var reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// The error code of the refusal (`premium_rate_number`, …).
    public var code: String { kind.rawValue }

    /// The message shown to the user.
    public var message: String {
        switch kind {
        case .premiumRate: "This number is not called: \(reason). Chorus never calls premium-rate numbers."
        case .sharedCost: "This number is not called: \(reason). Chorus never calls shared-cost numbers."
        case .service: "This number is not called: \(reason). Chorus never calls emergency or service numbers."
        case .invalid: "This number cannot exist: \(reason)."
        case .internationalService: "This number is not called: \(reason). Chorus calls subscriber numbers of countries only."
        case .fictional: "This number is not called: \(reason); it can be called only with the sandbox telephony."
        }
    }
}
