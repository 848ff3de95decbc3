import Foundation

/// Email syntax check: one `@`, a non-empty local part, a dotted domain, no spaces, no control, format or bidi
/// characters (NUL included), at most 254 characters and 254 UTF-8 bytes (the local part 64 of each).
public enum EmailAddress {
    public static func isValid(_ text: String) -> Bool {
        guard text.utf8.count <= 254, text.count <= 254, !text.contains(where: \.isWhitespace) else { return false }
        guard !text.unicodeScalars.contains(where: UserText.isInvisibleOrControl) else { return false }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64, parts[0].utf8.count <= 64 else { return false }
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

/// Rules for text people type that other people see (display names, titles, names): what may not appear in it, and
/// lengths that hold in UTF-8 bytes as well as characters (one character can be hundreds of bytes of combining marks).
public enum UserText {
    /// Bidirectional controls (embeddings, overrides, isolates, marks): they make text display differently from what
    /// it is (a name that reads as someone else's, an extension shown backwards).
    public static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// NUL and other control characters (C0, DEL, C1), format characters (zero-width spaces, bidi controls, BOM —
    /// but not the joiners and tags that emoji sequences and some scripts need), line or paragraph separators,
    /// unassigned and private-use code points: nothing a name or an address needs.
    public static func isInvisibleOrControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse: return true
        case .format:
            switch scalar.value {
            case 0x200C, 0x200D, 0xE0020...0xE007F: return false  // ZWNJ, ZWJ (emoji sequences, Persian), tag characters (flags)
            default: return true
            }
        default: return isBidiControl(scalar)
        }
    }

    /// A single-line name as stored: trimmed and in Unicode normalisation form C (so `é` typed either way is one
    /// name), or `nil` when it contains a control, format or bidi character or does not fit `characters` characters
    /// and `bytes` UTF-8 bytes.
    public static func name(_ text: String, characters: ClosedRange<Int>, bytes: Int) -> String? {
        let normalized = text.precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !normalized.unicodeScalars.contains(where: isInvisibleOrControl) else { return nil }
        guard characters.contains(normalized.count), normalized.utf8.count <= bytes else { return nil }
        return normalized
    }

    /// Whether `text` fits `characters` characters and `bytes` UTF-8 bytes.
    public static func fits(_ text: String, characters: ClosedRange<Int>, bytes: Int) -> Bool {
        characters.contains(text.count) && text.utf8.count <= bytes
    }
}
