/// A compact log-linear histogram of durations in microseconds (about 3 % precision from 64 µs to 16 s), cheap
/// enough to record every relayed frame and mergeable across calls.
public struct LatencyHistogram: Sendable, Equatable {
    private static let subBuckets = 32
    private static let linearLimit: UInt64 = 64
    private static let maxExponent = 24

    private var counts: [UInt32]
    public private(set) var count = 0
    public private(set) var maximum: UInt64 = 0
    /// The recorded values added up, in microseconds (saturating).
    public private(set) var sumMicroseconds: UInt64 = 0

    public init() {
        counts = [UInt32](repeating: 0, count: Int(Self.linearLimit) + Self.maxExponent * Self.subBuckets)
    }

    private static func index(of value: UInt64) -> Int {
        if value < linearLimit { return Int(value) }
        let exponent = min(63 - value.leadingZeroBitCount, 6 + maxExponent - 1)  // ≥ 6 since value ≥ 64
        let shift = exponent - 5
        let sub = Int((value >> UInt64(shift)) & UInt64(subBuckets - 1))
        return Int(linearLimit) + (exponent - 6) * subBuckets + sub
    }

    private static func lowerBound(ofIndex index: Int) -> UInt64 {
        if index < Int(linearLimit) { return UInt64(index) }
        let offset = index - Int(linearLimit)
        let exponent = offset / subBuckets + 6
        let sub = UInt64(offset % subBuckets)
        return (UInt64(1) << UInt64(exponent)) | (sub << UInt64(exponent - 5))
    }

    /// Records one duration.
    public mutating func record(microseconds value: UInt64) {
        counts[min(Self.index(of: value), counts.count - 1)] &+= 1
        count += 1
        if value > maximum { maximum = value }
        sumMicroseconds = Self.saturatingSum(sumMicroseconds, value)
    }

    /// Adds every value of `other`.
    public mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices { counts[index] &+= other.counts[index] }
        count += other.count
        maximum = max(maximum, other.maximum)
        sumMicroseconds = Self.saturatingSum(sumMicroseconds, other.sumMicroseconds)
    }

    /// How many recorded values fall in the buckets that start at or below `microseconds`: the values up to it, and
    /// those of its own bucket above it (within the bucket's resolution, about 3 %).
    public func count(atMost microseconds: UInt64) -> Int {
        let last = min(Self.index(of: microseconds), counts.count - 1)
        return counts[...last].reduce(0) { $0 + Int($1) }
    }

    private static func saturatingSum(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }

    /// The `percentile` (0–100) in microseconds (the lower bound of its bucket), or `nil` when empty.
    public func percentile(_ percentile: Double) -> UInt64? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((percentile / 100 * Double(count)).rounded(.up)))
        var seen = 0
        for (index, bucket) in counts.enumerated() where bucket > 0 {
            seen += Int(bucket)
            if seen >= rank { return min(Self.lowerBound(ofIndex: index), maximum) }
        }
        return maximum
    }
}
