import Foundation

/// What a product may spend and what one user may start, checked before any provider is called (issue 16 §2).
///
/// Every metered provider call of a product reserves its estimated cost against the product's daily and monthly
/// budget (money, all users together) and counts one operation against the caller's daily limit (operations per UTC
/// day, so a call the price table rates at nothing, such as a voice clone, still counts). Once the call returns, the
/// reservation is settled to the call's metered cost; a call that fails gives both back.
public struct ProductLimits: Sendable, Equatable {
    public var budget: FeatureBudget
    /// Metered provider operations one user may start per UTC day; `nil`: no limit.
    public var userDailyOperations: Int?

    public init(budget: FeatureBudget, userDailyOperations: Int?) {
        self.budget = budget
        self.userDailyOperations = userDailyOperations
    }

    public static let unlimited = ProductLimits(budget: .unlimited, userDailyOperations: nil)

    /// The counter key of a user's operations of `feature` on the UTC day of `date` (`ops:stories:2026-11-26`).
    public static func userOperationsKey(_ feature: MeteredFeature, at date: Date) -> String {
        "ops:\(feature.rawValue):" + VoiceUsagePolicy.period(date, monthly: false)
    }
}

/// Seconds from `date` to the start of the next UTC day or month: the `Retry-After` of a spent daily or monthly limit.
public enum UTCBoundary {
    public static func secondsUntilNext(_ period: BudgetPeriod, after date: Date) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let startOfDay = calendar.startOfDay(for: date)
        let next: Date?
        switch period {
        case .day:
            next = calendar.date(byAdding: .day, value: 1, to: startOfDay)
        case .month:
            let parts = calendar.dateComponents([.year, .month], from: date)
            next = calendar.date(from: parts).flatMap { calendar.date(byAdding: .month, value: 1, to: $0) }
        }
        guard let next else { return 86_400 }
        return max(1, Int(next.timeIntervalSince(date).rounded(.up)))
    }
}

extension PriceTable {
    /// An upper estimate of a chat completion before it is made: the prompt at one token per 3 UTF-8 bytes plus 8 per
    /// message (real English text runs near 4 characters a token), and every output token the request allows
    /// (`maxOutputTokens`, else `defaultMaxOutputTokens`).
    public func chatEstimateMicrodollars(model: String, promptBytes: Int, messages: Int, maxOutputTokens: Int?) -> Int64 {
        let (bytes, _) = max(0, promptBytes).addingReportingOverflow(2)
        let (overhead, _) = max(0, messages).multipliedReportingOverflow(by: 8)
        let (input, _) = (bytes / 3).addingReportingOverflow(overhead)
        return chatCostMicrodollars(model: model, promptTokens: input, completionTokens: max(0, maxOutputTokens ?? Self.defaultMaxOutputTokens))
    }

    /// The output allowance assumed for a chat request that sets none.
    public static let defaultMaxOutputTokens = 4_096

    /// An estimate of one generated picture before it is drawn. Token-billed models: the prompt at one token per 3
    /// UTF-8 bytes and the output tokens of the quality (for 1024×1024: `low` 272, `medium` 1,056, `high` and `auto`
    /// 4,160, OpenAI's image guide) scaled by the picture's area; other models: their per-picture price (the highest
    /// listed when the model has none).
    public func imageEstimateMicrodollars(model: String, promptBytes: Int, size: String, quality: String) -> Int64 {
        guard imageUSDPerMillionTokens[model] != nil else {
            return imageCostMicrodollars(model: model, images: 1, inputTokens: nil, outputTokens: nil)
        }
        let base: Double =
            switch quality.lowercased() {
            case "low": 272
            case "medium": 1_056
            default: 4_160
            }
        var scale = 1.5
        let sides = size.lowercased().split(separator: "x").compactMap { Int($0) }
        if sides.count == 2, (1...8_192).contains(sides[0]), (1...8_192).contains(sides[1]) {
            scale = Double(sides[0] * sides[1]) / Double(1_024 * 1_024)
        }
        let output = Int((base * scale).rounded(.up))
        let input = max(0, promptBytes) / 3 + 8
        return imageCostMicrodollars(model: model, images: 1, inputTokens: input, outputTokens: output)
    }
}

/// The network an address belongs to, for counting signups per network as well as per address: IPv4 addresses by
/// their first `ipv4PrefixLength` bits (`/24` by default), IPv6 by their first `ipv6PrefixLength` bits (`/64`, one
/// customer's site). Pure; an input that is not an address is its own network.
public struct NetworkPrefix: Sendable, Equatable {
    public var ipv4PrefixLength: Int
    public var ipv6PrefixLength: Int

    public init(ipv4PrefixLength: Int = 24, ipv6PrefixLength: Int = 64) {
        self.ipv4PrefixLength = min(32, max(0, ipv4PrefixLength))
        self.ipv6PrefixLength = min(128, max(0, ipv6PrefixLength))
    }

    /// The network of `address` in CIDR form (`203.0.113.0/24`, `2001:db8:1:2::/64`; an IPv4-mapped IPv6 address is
    /// treated as IPv4).
    public func network(of address: String) -> String {
        if let v4 = Self.parseIPv4(address) { return Self.format(v4: Self.mask(v4, ipv4PrefixLength), prefix: ipv4PrefixLength) }
        guard var bytes = Self.parseIPv6(address) else { return address }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return Self.format(v4: Self.mask(Array(bytes[12..<16]), ipv4PrefixLength), prefix: ipv4PrefixLength)
        }
        bytes = Self.mask(bytes, ipv6PrefixLength)
        var groups: [String] = []
        for index in stride(from: 0, to: 16, by: 2) { groups.append(String(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]), radix: 16)) }
        return groups.joined(separator: ":") + "/\(ipv6PrefixLength)"
    }

    private static func mask(_ bytes: [UInt8], _ bits: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(8, max(0, bits - index * 8))
            return kept == 8 ? byte : (kept == 0 ? 0 : byte & UInt8(truncatingIfNeeded: 0xff << (8 - kept)))
        }
    }

    private static func format(v4 bytes: [UInt8], prefix: Int) -> String {
        bytes.map(String.init).joined(separator: ".") + "/\(prefix)"
    }

    static func parseIPv4(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy(\.isASCII), let value = UInt8(part) else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    static func parseIPv6(_ text: String) -> [UInt8]? {
        var address = Substring(text)
        if let zone = address.firstIndex(of: "%") { address = address[..<zone] }
        guard address.contains(":"), address.count <= 45 else { return nil }
        var tail: [UInt8] = []
        if let lastColon = address.lastIndex(of: ":"), address[address.index(after: lastColon)...].contains(".") {
            guard let v4 = parseIPv4(String(address[address.index(after: lastColon)...])) else { return nil }
            tail = v4
            address = address[...lastColon]
            if address.hasSuffix(":") && !address.hasSuffix("::") { address = address.dropLast() }
        }
        func groups(_ part: Substring) -> [UInt16]? {
            guard !part.isEmpty else { return [] }
            var result: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(group.count), let value = UInt16(group, radix: 16) else { return nil }
                result.append(value)
            }
            return result
        }
        let halves = address.components(separatedBy: "::")
        let tailGroups = tail.count / 2
        var words: [UInt16]
        switch halves.count {
        case 1:
            guard let all = groups(Substring(halves[0])), all.count + tailGroups == 8 else { return nil }
            words = all
        case 2:
            guard let head = groups(Substring(halves[0])), let rest = groups(Substring(halves[1])), head.count + rest.count + tailGroups < 8
            else { return nil }
            words = head + Array(repeating: 0, count: 8 - tailGroups - head.count - rest.count) + rest
        default:
            return nil
        }
        var bytes = words.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
        bytes += tail
        return bytes.count == 16 ? bytes : nil
    }
}
