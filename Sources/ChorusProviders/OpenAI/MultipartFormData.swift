import Foundation

/// A `multipart/form-data` body (RFC 7578) built in memory: text fields and files, in the order appended.
///
/// The boundary is random (`chorus-` and 32 random alphanumerics), so it cannot be predicted from the content and
/// does not occur in it except by a 1-in-62³² chance. Field names and file names are escaped the way browsers do
/// (`"` as `%22`, CR as `%0D`, LF as `%0A`); values and file contents are sent as they are.
///
/// ```swift
/// var form = MultipartFormData()
/// form.append(name: "model", value: "whisper-1")
/// form.append(name: "file", filename: "message.m4a", contentType: "audio/mp4", data: audio)
/// request.headers.add(name: "Content-Type", value: form.contentType)
/// request.body = .bytes(ByteBuffer(data: form.encoded()))
/// ```
public struct MultipartFormData: Sendable, Equatable {
    /// The boundary between parts.
    public let boundary: String
    private var parts = Data()

    /// An empty form with a random boundary.
    public init() {
        self.init(boundary: Self.randomBoundary())
    }

    /// An empty form with the given boundary (1–70 characters that must not occur in any part).
    public init(boundary: String) {
        self.boundary = boundary
    }

    /// The `Content-Type` header value: `multipart/form-data; boundary=…`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Appends a text field.
    public mutating func append(name: String, value: String) {
        appendHeader("Content-Disposition: form-data; name=\"\(Self.escaped(name))\"\r\n\r\n")
        parts.append(contentsOf: Array(value.utf8))
        parts.append(contentsOf: Array("\r\n".utf8))
    }

    /// Appends a file field.
    public mutating func append(name: String, filename: String, contentType: String, data: Data) {
        appendHeader(
            "Content-Disposition: form-data; name=\"\(Self.escaped(name))\"; filename=\"\(Self.escaped(filename))\"\r\n"
                + "Content-Type: \(contentType.filter { $0 != "\r" && $0 != "\n" })\r\n\r\n")
        parts.append(data)
        parts.append(contentsOf: Array("\r\n".utf8))
    }

    /// The complete body, closing delimiter included.
    public func encoded() -> Data {
        var body = parts
        body.append(contentsOf: Array("--\(boundary)--\r\n".utf8))
        return body
    }

    /// `chorus-` followed by 32 random letters and digits.
    public static func randomBoundary() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var generator = SystemRandomNumberGenerator()
        return "chorus-" + String((0..<32).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] })
    }

    private mutating func appendHeader(_ header: String) {
        parts.append(contentsOf: Array("--\(boundary)\r\n".utf8))
        parts.append(contentsOf: Array(header.utf8))
    }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }
}
