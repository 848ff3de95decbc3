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

    mutating func value<T>(_ key: String, default defaultValue: T, parse: (String) -> T?) -> T {
        guard let text = string(key) else { return defaultValue }
        guard let parsed = parse(text) else {
            problems.append("\(key) has an invalid value (see docs/configuration.md).")
            return defaultValue
        }
        return parsed
    }

    /// A switch: `true`, `1`, `yes` or `false`, `0`, `no` (any case).
    mutating func flag(_ key: String, default defaultValue: Bool) -> Bool {
        value(key, default: defaultValue) {
            ["true", "1", "yes"].contains($0.lowercased()) ? true : (["false", "0", "no"].contains($0.lowercased()) ? false : nil)
        }
    }

    /// A count in `range`, or `off` (no limit: `nil`).
    mutating func countOrOff(_ key: String, default defaultValue: Int?, in range: ClosedRange<Int>) -> Int? {
        value(key, default: defaultValue) { text -> Int?? in
            if text == "off" { return .some(nil) }
            guard let value = Int(text), range.contains(value) else { return nil }
            return .some(value)
        }
    }

    /// A comma-separated list; blank items are dropped.
    func list(_ key: String) -> [String] {
        (string(key) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// A parser of whole numbers in `range`.
    static func integer(in range: ClosedRange<Int>) -> (String) -> Int? {
        { Int($0).flatMap { range.contains($0) ? $0 : nil } }
    }

    /// A parser of numbers in `range`.
    static func number(in range: ClosedRange<Double>) -> (String) -> Double? {
        { Double($0).flatMap { range.contains($0) ? $0 : nil } }
    }

    /// An `http` or `https` URL with a host.
    static func httpURL(_ text: String) -> URL? {
        URL(string: text).flatMap { ["http", "https"].contains($0.scheme ?? "") && $0.host != nil ? $0 : nil }
    }

    /// An `http` or `https` base URL with a host, without its trailing slash.
    static func baseURL(_ text: String) -> URL? {
        httpURL(text.hasSuffix("/") ? String(text.dropLast()) : text)
    }

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
