import Foundation

// Numbers from outside (headers, bodies, files, frames, provider answers, signed payloads) are converted and added
// without trapping: a bare `Int(someDouble)` traps on NaN, on infinities and on anything past the type's range, and a
// bare `+` or `*` traps on overflow, ending the whole server. See "Numbers from outside" in docs/decisions.md.

extension FixedWidthInteger {
    /// `value` rounded by `rule` and clamped to `Self.min...Self.max`; NaN becomes zero.
    ///
    /// For a number that came from outside and only needs to be held (a duration shown in a message, a cost, a date in
    /// milliseconds): where out-of-range values must be refused instead, check the range before converting.
    public init(clampingRounded value: Double, _ rule: FloatingPointRoundingRule = .toNearestOrAwayFromZero) {
        let rounded = value.rounded(rule)
        if rounded.isNaN {
            self = 0
        } else if rounded <= Double(Self.min) {
            self = .min
        } else if rounded >= Double(Self.max) {
            // `Double(Int64.max)` is 2^63, one past the largest Int64: `>=` sends it here instead of to a trapping init.
            self = .max
        } else {
            self = Self(rounded)
        }
    }

    /// `self + other`, or the nearest bound when the sum does not fit (totals of figures from outside).
    public func addingClamped(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }
}

extension Sequence {
    /// The sum of `value` over the elements, saturating at the bounds of `T` instead of trapping.
    public func clampedSum<T: FixedWidthInteger>(_ value: (Element) throws -> T) rethrows -> T {
        try reduce(T.zero) { $0.addingClamped(try value($1)) }
    }
}
