import Foundation

#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// A parsed `multipart/form-data` body (RFC 7578): what the emulators of OpenAI's transcriptions and ElevenLabs' voice
/// cloning receive, the reverse of ``MultipartFormData``. The whole body is in memory; every index is checked against
/// it, so no input can make the parser trap (it has a fuzz target).
public struct MultipartForm: Sendable {
    /// One part.
    public struct Part: Sendable {
        public let name: String
        public let filename: String?
        public let contentType: String?
        public let body: ArraySlice<UInt8>
    }

    public let parts: [Part]

    /// The `boundary` parameter of a `multipart/form-data` content type.
    public static func boundary(contentType: String) -> String? {
        let parameters = HeaderParameters(contentType)
        guard parameters.value.lowercased() == "multipart/form-data", let boundary = parameters["boundary"], !boundary.isEmpty else {
            return nil
        }
        return boundary
    }

    /// Parses `bytes`; `nil` when they are not a well-formed multipart body with this boundary.
    public init?(bytes: [UInt8], boundary: String) {
        let delimiter = Array("--\(boundary)".utf8)
        let separator = Array("\r\n--\(boundary)".utf8)
        guard var position = Self.find(delimiter, in: bytes, from: 0) else { return nil }
        position += delimiter.count
        var parts: [Part] = []
        while true {
            guard position + 2 <= bytes.count else { return nil }
            if bytes[position] == UInt8(ascii: "-"), bytes[position + 1] == UInt8(ascii: "-") { break }
            guard let lineEnd = Self.find(Array("\r\n".utf8), in: bytes, from: position),
                let headerEnd = Self.find(Array("\r\n\r\n".utf8), in: bytes, from: lineEnd)
            else { return nil }
            let headerText = lineEnd == headerEnd ? "" : String(decoding: bytes[(lineEnd + 2)..<headerEnd], as: UTF8.self)
            let contentStart = headerEnd + 4
            guard let contentEnd = Self.find(separator, in: bytes, from: contentStart) else { return nil }
            var disposition: HeaderParameters?
            var contentType: String?
            for line in headerText.components(separatedBy: "\r\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
                if name == "content-disposition" { disposition = HeaderParameters(value) }
                if name == "content-type" { contentType = value }
            }
            if let disposition, disposition.value.lowercased() == "form-data", let name = disposition["name"] {
                parts.append(Part(name: name, filename: disposition["filename"], contentType: contentType, body: bytes[contentStart..<contentEnd]))
            }
            position = contentEnd + separator.count
        }
        self.parts = parts
    }

    /// The text values of the fields named `name`, in order (file parts excluded).
    public func values(_ name: String) -> [String] {
        parts.filter { $0.name == name && $0.filename == nil }.map { String(decoding: $0.body, as: UTF8.self) }
    }

    /// The first text value of `name`.
    public func value(_ name: String) -> String? { values(name).first }

    /// The first file part named `name`.
    public func file(_ name: String) -> (filename: String, body: ArraySlice<UInt8>)? {
        parts.first { $0.name == name && $0.filename != nil }.map { ($0.filename ?? "", $0.body) }
    }

    /// The first index of `needle` in `haystack` at or after `start` (`memchr` to the candidates, then a compare).
    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, start >= 0, haystack.count - start >= needle.count else { return nil }
        return haystack.withUnsafeBufferPointer { bytes -> Int? in
            guard let base = bytes.baseAddress else { return nil }
            var index = start
            let last = bytes.count - needle.count
            while index <= last {
                guard let hit = memchr(base + index, Int32(first), last - index + 1) else { return nil }
                index = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if memcmp(base + index, needle, needle.count) == 0 { return index }
                index += 1
            }
            return nil
        }
    }
}

/// A header value with parameters (`form-data; name="file"; filename="a.wav"`), quoted strings unescaped.
public struct HeaderParameters: Sendable {
    public let value: String
    private var parameters: [String: String] = [:]

    public init(_ header: String) {
        var scalars = Substring(header)
        func take(until stop: Character) -> String {
            var result = ""
            var quoted = false
            while let character = scalars.first {
                if !quoted, character == stop { break }
                scalars.removeFirst()
                if character == "\"" {
                    quoted.toggle()
                } else if quoted, character == "\\", let next = scalars.first {
                    scalars.removeFirst()
                    result.append(next)
                } else {
                    result.append(character)
                }
            }
            return result
        }
        value = take(until: ";").trimmingCharacters(in: .whitespaces)
        while !scalars.isEmpty {
            scalars.removeFirst()
            let parameter = take(until: ";")
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            let key = parameter[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            parameters[key] = parameter[parameter.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
    }

    public subscript(key: String) -> String? { parameters[key] }
}
