/// A string-backed set of values that stays open: a value this version does not know decodes, compares and
/// round-trips as itself instead of failing, so a newer server never breaks an older app.
///
/// Declare one as a struct with the known values as static members, and match them in a `switch` with a `default`:
///
/// ```swift
/// public struct CallStatus: OpenEnum {
///     public let rawValue: String
///     public init(rawValue: String) { self.rawValue = rawValue }
///     public static let completed: CallStatus = "completed"
/// }
/// ```
///
/// The wire format is the bare string (`RawRepresentable`'s `Codable`).
public protocol OpenEnum: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral
where RawValue == String {
    init(rawValue: String)
}

extension OpenEnum {
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    /// The wire value.
    public var description: String { rawValue }
}

extension OpenEnum where Self: CaseIterable {
    /// Whether this version knows the value (it is one of `allCases`).
    public var isKnown: Bool { Self.allCases.contains(self) }

    /// The value if this version knows it, else `nil`: for input that must be one of `allCases` (a request's field, a
    /// provider's callback).
    public init?(known rawValue: String) {
        self.init(rawValue: rawValue)
        guard isKnown else { return nil }
    }
}
