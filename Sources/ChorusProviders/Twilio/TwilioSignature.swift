import Crypto
import Foundation

/// Computes and checks Twilio's `X-Twilio-Signature` header for form-encoded webhooks.
///
/// The algorithm is twilio-python's `RequestValidator`: start from the full URL Twilio requested
/// (query string included), then for every parameter name in sorted order append `name + value` for
/// each of its distinct values in sorted order; HMAC-SHA1 that string with the account's auth token
/// and base64-encode the digest. Validation compares in constant time and also accepts the URL with
/// its default port (`:443` for https, `:80` for http) added or removed, because Twilio is not
/// consistent about including it.
public struct TwilioRequestValidator: Sendable {
    private let key: SymmetricKey

    /// Creates a validator for the account whose auth token is `authToken`.
    public init(authToken: String) {
        self.key = SymmetricKey(data: Data(authToken.utf8))
    }

    /// The signature Twilio sends for a request to `url` carrying the form `parameters`.
    public func signature(url: String, parameters: [(String, String)]) -> String {
        let digest = HMAC<Insecure.SHA1>.authenticationCode(for: Self.signedData(url: url, parameters: parameters), using: key)
        return Data(digest).base64EncodedString()
    }

    /// Whether `signature` (the `X-Twilio-Signature` header, `nil` when absent) is valid for a request to
    /// `url` carrying the form `parameters`.
    public func isValid(signature: String?, url: String, parameters: [(String, String)]) -> Bool {
        guard let signature, let provided = Data(base64Encoded: signature.trimmingCharacters(in: .whitespaces)) else {
            return false
        }
        var valid = false
        for candidate in Self.portVariants(of: url) {
            let data = Self.signedData(url: candidate, parameters: parameters)
            // `isValidAuthenticationCode` compares in constant time; every variant is checked.
            if HMAC<Insecure.SHA1>.isValidAuthenticationCode(provided, authenticating: data, using: key) {
                valid = true
            }
        }
        return valid
    }

    static func signedData(url: String, parameters: [(String, String)]) -> Data {
        var valuesByName: [String: Set<String>] = [:]
        for (name, value) in parameters {
            valuesByName[name, default: []].insert(value)
        }
        var text = url
        for name in valuesByName.keys.sorted(by: codePointOrder) {
            for value in valuesByName[name, default: []].sorted(by: codePointOrder) {
                text += name
                text += value
            }
        }
        return Data(text.utf8)
    }

    /// Sorts like Python's `sorted` on `str`: by Unicode code point (equivalently, by UTF-8 bytes).
    private static func codePointOrder(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }

    /// `url` itself, plus the same URL with its scheme's default port removed (when present) or added
    /// (when absent).
    static func portVariants(of url: String) -> [String] {
        guard let schemeEnd = url.range(of: "://") else { return [url] }
        let defaultPort: String
        switch url[..<schemeEnd.lowerBound].lowercased() {
        case "https": defaultPort = "443"
        case "http": defaultPort = "80"
        default: return [url]
        }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = url[authorityStart...].firstIndex { "/?#".contains($0) } ?? url.endIndex
        let authority = url[authorityStart..<authorityEnd]
        let hostStart = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
        let hostPort = authority[hostStart...]
        let afterBracket = hostPort.lastIndex(of: "]").map { hostPort.index(after: $0) } ?? hostPort.startIndex
        if let colon = hostPort[afterBracket...].lastIndex(of: ":") {
            let port = hostPort[hostPort.index(after: colon)...]
            guard port == defaultPort else { return [url] }
            return [url, String(url[..<colon]) + String(url[authorityEnd...])]
        }
        return [url, String(url[..<authorityEnd]) + ":" + defaultPort + String(url[authorityEnd...])]
    }
}

/// `application/x-www-form-urlencoded` encoding that keeps parameter order and repeated names, as
/// Twilio's REST API and webhooks use it.
public enum TwilioFormEncoding {
    /// Encodes `parameters` in order; spaces become `+`, and everything but `A-Z a-z 0-9 - . _ *`
    /// is percent-encoded as UTF-8 (so `+15551234567` becomes `%2B15551234567`).
    public static func encode(_ parameters: [(String, String)]) -> String {
        parameters.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    /// Decodes a form body into its parameters, in order, keeping repeated names.
    /// Malformed percent escapes are kept literally.
    public static func decode(_ body: String) -> [(String, String)] {
        body.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = unescape(parts[0])
            let value = parts.count > 1 ? unescape(parts[1]) : ""
            return (name, value)
        }
    }

    private static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "*"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                result.append("+")
            default:
                result += "%" + hexDigit(byte >> 4) + hexDigit(byte & 0x0F)
            }
        }
        return result
    }

    private static func hexDigit(_ nibble: UInt8) -> String {
        String(UnicodeScalar(nibble < 10 ? nibble + 48 : nibble + 55))
    }

    private static func unescape(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
                let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 2
            } else {
                bytes.append(byte)
            }
            index += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
