import Foundation

/// Email syntax check: one `@`, a non-empty local part, a dotted domain, no spaces, at most 254 characters.
public enum EmailAddress {
    public static func isValid(_ text: String) -> Bool {
        guard text.count <= 254, !text.contains(where: \.isWhitespace) else { return false }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64 else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
        } && labels.last!.count >= 2
    }
}

/// E.164 phone numbers: `+`, a non-zero country digit, 8 to 15 digits in all.
public enum PhoneNumber {
    public static func isE164(_ text: String) -> Bool {
        guard text.hasPrefix("+") else { return false }
        let digits = text.dropFirst()
        return (8...15).contains(digits.count) && digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber) && digits.first != "0"
    }
}
