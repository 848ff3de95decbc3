/// Comparison of secrets (tokens, signatures, API keys) in time that depends only on their lengths, not on where they
/// first differ.
public enum ConstantTime {
    /// Whether `lhs` and `rhs` have the same UTF-8 bytes; every byte of the longer one is visited.
    public static func equals(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
        }
        return difference == 0
    }
}
