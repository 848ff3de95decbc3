import Foundation

/// Reads typed values and collects one problem per malformed key, in the order the keys are read.
struct EnvironmentReader {
    let environment: [String: String]
    var problems: [String] = []

    init(_ environment: [String: String]) {
        self.environment = environment
    }

    func string(_ key: String) -> String? {
        guard let value = environment[key]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }

    /// How a setting is read: what it accepts, for the operator, and the parser.
    struct Parser<T> {
        /// What is accepted, completing "expected …", e.g. `a whole number from 1 to 64`.
        var accepts: String
        var parse: (String) -> T?
    }

    /// The value of `key` parsed by `parse`, `defaultValue` when unset; a malformed value is a problem naming the key,
    /// the value given (unless it is a secret) and what `accepts` says is accepted.
    mutating func value<T>(_ key: String, default defaultValue: T, accepts: String, parse: (String) -> T?) -> T {
        guard let text = string(key) else { return defaultValue }
        guard let parsed = parse(text) else {
            problems.append(Self.invalid(key, text, accepts: accepts))
            return defaultValue
        }
        return parsed
    }

    /// The value of `key` read by `parser`, `defaultValue` when unset.
    mutating func value<T>(_ key: String, default defaultValue: T, parse parser: Parser<T>) -> T {
        value(key, default: defaultValue, accepts: parser.accepts, parse: parser.parse)
    }

    /// An optional value of `key` read by `parser`, `nil` when unset.
    mutating func value<T>(_ key: String, default defaultValue: T?, parse parser: Parser<T>) -> T? {
        value(key, default: defaultValue, accepts: parser.accepts) { parser.parse($0).map(Optional.some) }
    }

    /// The problem of a malformed value: `KEY="value" is not valid: expected … (see docs/configuration.md).`, the value
    /// left out when ``isSecret(_:_:)`` (`KEY is not valid (its value is not shown: it is a secret): expected …`).
    static func invalid(_ key: String, _ text: String, accepts: String) -> String {
        "\(describe(key, text)) is not valid: expected \(accepts) (see docs/configuration.md)."
    }

    /// `KEY="value"` (quotes and control characters escaped, at most 60 characters), or only the key with a note when
    /// the value is a secret.
    static func describe(_ key: String, _ text: String) -> String {
        if isSecret(key, text) { return "\(key) (its value is not shown: it is a secret)" }
        var shown = ""
        for scalar in text.unicodeScalars.prefix(60) {
            switch scalar {
            case "\"", "\\": shown += "\\" + String(scalar)
            case _ where scalar.properties.generalCategory == .control: shown += scalar.escaped(asASCII: true)
            default: shown.unicodeScalars.append(scalar)
            }
        }
        if text.unicodeScalars.count > 60 { shown += "…" }
        return "\(key)=\"\(shown)\""
    }

    /// Whether the value of `key` must never be echoed: secrets, keys, tokens and passwords by their name, and any value
    /// that looks like a URL with credentials (`scheme://user:password@host`).
    static func isSecret(_ key: String, _ text: String) -> Bool {
        let name = key.uppercased()
        let secretNames = ["SECRET", "_KEY", "TOKEN", "PASSWORD", "PASSPHRASE", "CREDENTIAL", "DATABASE_URL"]
        if secretNames.contains(where: { name.contains($0) }) { return true }
        if let scheme = text.range(of: "://"), text[scheme.upperBound...].split(separator: "/", maxSplits: 1).first?.contains("@") == true {
            return true
        }
        return false
    }

    /// A switch: `true`, `1`, `yes` or `false`, `0`, `no` (any case).
    mutating func flag(_ key: String, default defaultValue: Bool) -> Bool {
        value(key, default: defaultValue, accepts: "true or false (also 1 or 0, yes or no)") {
            ["true", "1", "yes"].contains($0.lowercased()) ? true : (["false", "0", "no"].contains($0.lowercased()) ? false : nil)
        }
    }

    /// A count in `range`, or `off` (no limit: `nil`).
    mutating func countOrOff(_ key: String, default defaultValue: Int?, in range: ClosedRange<Int>) -> Int? {
        value(key, default: defaultValue, accepts: "\(Self.describe(range)), or off") { text -> Int?? in
            if text.lowercased() == "off" { return .some(nil) }
            guard let value = Int(text), range.contains(value) else { return nil }
            return .some(value)
        }
    }

    /// One of `choices` (any case), by its raw value.
    mutating func choice<T: RawRepresentable>(_ key: String, default defaultValue: T, among choices: [T]) -> T where T.RawValue == String {
        value(key, default: defaultValue, accepts: Self.oneOf(choices.map(\.rawValue))) { text in
            choices.first { $0.rawValue.lowercased() == text.lowercased() }
        }
    }

    /// `a, b or c`.
    static func oneOf(_ names: [String]) -> String {
        names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " or " + names[names.count - 1]
    }

    /// `a whole number from 1 to 64`, `a whole number of at least 1`.
    static func describe(_ range: ClosedRange<Int>) -> String {
        range.upperBound >= Int(Int32.max) ? "a whole number of at least \(range.lowerBound)" : "a whole number from \(range.lowerBound) to \(range.upperBound)"
    }

    /// `3600` for a whole number, else the shortest decimal (`0.5`).
    static func format(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    /// A comma-separated list; blank items are dropped.
    func list(_ key: String) -> [String] {
        (string(key) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// A parser of whole numbers in `range`.
    static func integer(in range: ClosedRange<Int>) -> Parser<Int> {
        Parser(accepts: describe(range)) { Int($0).flatMap { range.contains($0) ? $0 : nil } }
    }

    /// A parser of whole numbers in `range` of `unit` (`seconds`: "a whole number of seconds from 1 to 3600").
    static func integer(in range: ClosedRange<Int>, of unit: String) -> Parser<Int> {
        let accepts =
            range.upperBound >= Int(Int32.max)
            ? "a whole number of \(unit), at least \(range.lowerBound)" : "a whole number of \(unit) from \(range.lowerBound) to \(range.upperBound)"
        return Parser(accepts: accepts) { Int($0).flatMap { range.contains($0) ? $0 : nil } }
    }

    /// A parser of (finite) numbers in `range`, of `unit` when given (`a number of seconds from 0 to 3600`).
    static func number(in range: ClosedRange<Double>, of unit: String? = nil) -> Parser<Double> {
        let noun = unit.map { "a number of \($0)" } ?? "a number"
        return Parser(accepts: "\(noun) from \(format(range.lowerBound)) to \(format(range.upperBound))") {
            Double($0).flatMap { $0.isFinite && range.contains($0) ? $0 : nil }
        }
    }

    /// A parser of (finite) numbers above `lower` and at most `upper`, of `unit` when given (`a number of seconds above
    /// 0, at most 3600`).
    static func number(above lower: Double, atMost upper: Double, of unit: String? = nil) -> Parser<Double> {
        let noun = unit.map { "a number of \($0)" } ?? "a number"
        return Parser(accepts: "\(noun) above \(format(lower)), at most \(format(upper))") {
            Double($0).flatMap { $0.isFinite && $0 > lower && $0 <= upper ? $0 : nil }
        }
    }

    /// An `http` or `https` URL with a host.
    static func httpURL(_ text: String) -> URL? {
        URL(string: text).flatMap { ["http", "https"].contains($0.scheme ?? "") && $0.host != nil ? $0 : nil }
    }

    /// An `http` or `https` base URL with a host, without its trailing slash.
    static func baseURL(_ text: String) -> URL? {
        httpURL(text.hasSuffix("/") ? String(text.dropLast()) : text)
    }

    /// ``httpURL(_:)`` as a parser.
    static var httpURLs: Parser<URL> { Parser(accepts: "an http or https URL with a host, such as https://example.com/path", parse: httpURL) }

    /// ``baseURL(_:)`` as a parser.
    static var baseURLs: Parser<URL> { Parser(accepts: "an http or https URL with a host, such as https://example.com", parse: baseURL) }

    /// What ``microdollars(_:)`` accepts.
    static let dollarAmount = "an amount of US dollars from 0, below 1000000000, such as 12.50"

    /// A dollar amount (`12.50`) in micro-dollars.
    static func microdollars(_ text: String) -> Int64? {
        guard let value = Decimal(string: text), value >= 0, value < 1_000_000_000 else { return nil }
        return NSDecimalNumber(decimal: value * 1_000_000).int64Value
    }

    /// A path as given when absolute, else under `directory`.
    static func file(_ path: String, in directory: URL) -> URL {
        path.hasPrefix("/") ? URL(fileURLWithPath: path) : directory.appendingPathComponent(path)
    }
}
