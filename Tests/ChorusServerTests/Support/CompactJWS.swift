import Foundation
import Testing

/// Reading and forging compact JWS (and JWT) segments in tests.
enum CompactJWS {
    /// Unpadded base64url.
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes unpadded base64url.
    static func decode(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }

    /// The JSON object in the payload (second) segment of `jws`.
    static func payload(_ jws: String) throws -> [String: Any] {
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        let data = try #require(segments.count == 3 ? decode(segments[1]) : nil, "not a compact JWS")
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
