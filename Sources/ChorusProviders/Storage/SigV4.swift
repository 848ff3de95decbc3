import Crypto
import Foundation

/// AWS Signature Version 4 for S3 and S3-compatible services (header-based signing, `AWS4-HMAC-SHA256`).
///
/// The signer builds the canonical request (method, URI-encoded path, sorted URI-encoded query, lower-cased sorted
/// headers, signed-header list, payload hash), the string to sign over the credential scope
/// `<yyyyMMdd>/<region>/<service>/aws4_request`, and the signature with the HMAC-SHA256 key chain
/// `AWS4<secret>` → date → region → service → `aws4_request`. The secret is held privately and never appears in a
/// description or a log.
public struct SigV4: Sendable {
    /// The payload hash to send when the body is not hashed (allowed by S3 over HTTPS).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// The SHA-256 of an empty body.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// One request's parts as signed.
    public struct Request: Sendable {
        public var method: String
        /// The path as sent on the wire, already URI-encoded (see ``SigV4/encodePath(_:)``), starting with `/`.
        public var path: String
        /// Query parameters, unencoded; a parameter without a value (`?lifecycle`) has an empty value.
        public var query: [(name: String, value: String)]
        /// The headers to sign, `host` included; names in any case.
        public var headers: [(name: String, value: String)]
        /// The hex SHA-256 of the body, or ``SigV4/unsignedPayload``.
        public var payloadHash: String

        public init(
            method: String, path: String, query: [(name: String, value: String)] = [], headers: [(name: String, value: String)],
            payloadHash: String
        ) {
            self.method = method
            self.path = path
            self.query = query
            self.headers = headers
            self.payloadHash = payloadHash
        }
    }

    public let accessKeyID: String
    public let region: String
    public let service: String
    private let secretAccessKey: String

    /// - Parameters:
    ///   - region: The signing region (`us-east-1` for most S3-compatible servers that ignore regions).
    ///   - service: The signing service name; `s3` for object storage.
    public init(accessKeyID: String, secretAccessKey: String, region: String, service: String = "s3") {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.region = region
        self.service = service
    }

    /// The headers to add to the request: `x-amz-date`, `x-amz-content-sha256` and `Authorization`. `request.headers`
    /// must not already contain the first two; they are signed along with the caller's headers.
    public func sign(_ request: Request, date: Date) -> [(name: String, value: String)] {
        let timestamp = Self.timestamp(date)
        var signed = request
        signed.headers.append((name: "x-amz-content-sha256", value: request.payloadHash))
        signed.headers.append((name: "x-amz-date", value: timestamp))
        return [
            (name: "x-amz-date", value: timestamp),
            (name: "x-amz-content-sha256", value: request.payloadHash),
            (name: "Authorization", value: authorization(signed, timestamp: timestamp)),
        ]
    }

    /// The `Authorization` header value for a request whose headers already include `x-amz-date` (equal to
    /// `timestamp`) and `x-amz-content-sha256`.
    func authorization(_ request: Request, timestamp: String) -> String {
        let scope = credentialScope(day: String(timestamp.prefix(8)))
        let signature = self.signature(request, timestamp: timestamp)
        return "AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope),SignedHeaders=\(Self.signedHeaderList(request.headers)),"
            + "Signature=\(signature)"
    }

    /// The hex signature of a request.
    func signature(_ request: Request, timestamp: String) -> String {
        let day = String(timestamp.prefix(8))
        let toSign = stringToSign(canonicalRequest: Self.canonicalRequest(request), timestamp: timestamp)
        let code = HMAC<SHA256>.authenticationCode(for: Data(toSign.utf8), using: signingKey(day: day))
        return Self.hex(code)
    }

    func credentialScope(day: String) -> String { "\(day)/\(region)/\(service)/aws4_request" }

    func stringToSign(canonicalRequest: String, timestamp: String) -> String {
        let scope = credentialScope(day: String(timestamp.prefix(8)))
        return "AWS4-HMAC-SHA256\n\(timestamp)\n\(scope)\n" + Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8)))
    }

    func signingKey(day: String) -> SymmetricKey {
        var key = SymmetricKey(data: Data("AWS4\(secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        return key
    }

    static func canonicalRequest(_ request: Request) -> String {
        let encoded: [(name: String, value: String)] = request.query.map { parameter in
            (name: encode(parameter.name, encodeSlash: true), value: encode(parameter.value, encodeSlash: true))
        }
        let sorted = encoded.sorted { left, right in left.name == right.name ? left.value < right.value : left.name < right.name }
        let query: String = sorted.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        let headers: String = canonicalHeaders(request.headers).map { "\($0.name):\($0.value)\n" }.joined()
        let path = request.path.isEmpty ? "/" : request.path
        let lines: [String] = [
            request.method.uppercased(), path, query, headers, signedHeaderList(request.headers), request.payloadHash,
        ]
        return lines.joined(separator: "\n")
    }

    /// Lower-cased names sorted, values trimmed with inner runs of spaces collapsed, repeated names joined by `,`.
    static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> [(name: String, value: String)] {
        var merged: [String: [String]] = [:]
        for header in headers {
            let value = header.value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
                .trimmingCharacters(in: .whitespaces)
            merged[header.name.lowercased(), default: []].append(value)
        }
        return merged.keys.sorted().map { (name: $0, value: merged[$0, default: []].joined(separator: ",")) }
    }

    static func signedHeaderList(_ headers: [(name: String, value: String)]) -> String {
        Set(headers.map { $0.name.lowercased() }).sorted().joined(separator: ";")
    }

    /// `yyyyMMdd'T'HHmmss'Z'` in UTC.
    static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func padded(_ value: Int?, _ width: Int) -> String {
            let digits = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return padded(parts.year, 4) + padded(parts.month, 2) + padded(parts.day, 2) + "T" + padded(parts.hour, 2)
            + padded(parts.minute, 2) + padded(parts.second, 2) + "Z"
    }

    /// URI-encodes an object path for the wire and for signing: every byte except the unreserved characters
    /// `A-Za-z0-9-._~` and `/` becomes `%XX` (S3 paths are encoded once, not twice as for other AWS services).
    public static func encodePath(_ path: String) -> String { encode(path, encodeSlash: false) }

    /// RFC 3986 encoding as SigV4 defines it: unreserved characters kept, everything else as upper-case `%XX` of its
    /// UTF-8 bytes; `/` kept only when `encodeSlash` is false.
    static func encode(_ string: String, encodeSlash: Bool) -> String {
        var encoded = ""
        encoded.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where !encodeSlash:
                encoded.append("/")
            default:
                encoded += "%" + hexDigits[Int(byte >> 4)] + hexDigits[Int(byte & 0x0F)]
            }
        }
        return encoded
    }

    private static let hexDigits = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]

    /// Lower-case hex of a digest or MAC.
    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    static func hex(_ digest: SHA256.Digest) -> String { hex(Array(digest)) }

    static func hex(_ code: HashedAuthenticationCode<SHA256>) -> String { hex(Array(code)) }

    /// The hex SHA-256 of `data`, for ``Request/payloadHash``.
    public static func payloadHash(_ data: Data) -> String { hex(SHA256.hash(data: data)) }
}

extension SigV4: CustomStringConvertible {
    /// Names the key id and scope, never the secret.
    public var description: String { "SigV4(accessKeyID: \(accessKeyID), region: \(region), service: \(service))" }
}
