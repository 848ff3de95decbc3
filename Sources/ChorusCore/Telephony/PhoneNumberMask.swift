/// Masks phone numbers for logs and diagnostics.
///
/// Only the last four characters stay readable; a leading `+` is kept so the value still reads as an
/// E.164 number: `+15551237890` becomes `+*******7890`.
public enum PhoneNumberMask {
    /// The number of trailing characters left visible.
    public static let visibleSuffixLength = 4

    /// Returns `number` with every character except a leading `+` and the last four replaced by `*`.
    ///
    /// Values of four characters or fewer are masked completely, so a short code or a truncated
    /// number never appears in full.
    public static func mask(_ number: String) -> String {
        let trimmed = number.trimmingWhitespace()
        let characters = Array(trimmed)
        guard !characters.isEmpty else { return "" }
        let hasPlus = characters.first == "+"
        let body = hasPlus ? Array(characters.dropFirst()) : characters
        let prefix = hasPlus ? "+" : ""
        guard body.count > visibleSuffixLength else {
            return prefix + String(repeating: "*", count: body.count)
        }
        let hidden = body.count - visibleSuffixLength
        return prefix + String(repeating: "*", count: hidden) + String(body.suffix(visibleSuffixLength))
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars = scalars.dropFirst() }
        while let last = scalars.last, last.isWhitespace { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
