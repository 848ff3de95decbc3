import Foundation

/// The part of a TwiML document the Twilio emulator acts on.
///
/// Only `<Connect><Stream>` changes what the emulator does; every other verb (`<Say>`, `<Pause>`, `<Hangup>`, ...) is
/// accepted and stands for "the callee hears something, then the call ends" (the call's simulated talk time).
struct SandboxTwiML: Equatable {
    /// A bidirectional Media Stream requested with `<Connect><Stream url="…">`.
    struct Stream: Equatable {
        /// The `wss://` (or, in the sandbox, `ws://`) URL to connect to.
        let url: String
        /// The `<Parameter name value/>` children, in document order.
        let parameters: [Parameter]
    }

    /// One `<Parameter name="…" value="…"/>`.
    struct Parameter: Equatable {
        let name: String
        let value: String
    }

    /// Why a TwiML document was rejected, with Twilio's error code.
    struct Failure: Error, Equatable, CustomStringConvertible {
        /// Twilio's error code: 11200 (HTTP retrieval failure), 12100 (document parse failure), 12200 (schema
        /// validation), 31941 (invalid stream track).
        let code: Int
        let message: String

        var description: String { "\(code): \(message)" }
    }

    /// The top-level verbs, in order.
    let verbs: [String]
    /// The first `<Connect><Stream>`, if any.
    let stream: Stream?

    /// Parses a TwiML document. A small, strict XML scan: one `<Response>` root, well-nested tags, quoted attributes,
    /// the five predefined entities and character references; comments, processing instructions, `DOCTYPE` and CDATA
    /// are skipped.
    static func parse(_ text: String) throws(Failure) -> SandboxTwiML {
        let elements = try XMLScan.elements(Array(text.utf8))
        guard let root = elements.first, root.parent == nil, root.name == "Response" else {
            throw Failure(code: 12100, message: "Document parse failure: the root element must be <Response>")
        }
        let verbs = elements.filter { $0.parent == 0 }.map(\.name)
        var stream: Stream?
        for (index, element) in elements.enumerated() where element.name == "Stream" {
            guard let parent = element.parent, elements[parent].name == "Connect", elements[parent].parent == 0 else { continue }
            guard let url = element.attributes["url"], !url.isEmpty else {
                throw Failure(code: 12200, message: "Schema validation warning: <Stream> requires a url attribute")
            }
            guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
                scheme == "wss" || scheme == "ws", !(components.host ?? "").isEmpty
            else {
                throw Failure(code: 12200, message: "Schema validation warning: <Stream> url must be an absolute wss:// URL: \(url)")
            }
            if let track = element.attributes["track"], track != "inbound_track" {
                throw Failure(code: 31941, message: "Stream - Invalid Track configuration: <Connect><Stream> allows inbound_track only")
            }
            let parameters = elements.filter { $0.parent == index && $0.name == "Parameter" }.compactMap { parameter in
                parameter.attributes["name"].map { Parameter(name: $0, value: parameter.attributes["value"] ?? "") }
            }
            stream = Stream(url: url, parameters: parameters)
            break
        }
        return SandboxTwiML(verbs: verbs, stream: stream)
    }
}

/// A minimal XML element scanner for TwiML.
enum XMLScan {
    struct Element {
        let name: String
        let attributes: [String: String]
        /// The index of the parent element, `nil` for the root.
        let parent: Int?
    }

    static func elements(_ bytes: [UInt8]) throws(SandboxTwiML.Failure) -> [Element] {
        func failure(_ message: String) -> SandboxTwiML.Failure {
            SandboxTwiML.Failure(code: 12100, message: "Document parse failure: \(message)")
        }
        var elements: [Element] = []
        var stack: [Int] = []
        var rootClosed = false
        var index = 0
        // A UTF-8 byte order mark.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }

        func starts(_ word: String, at position: Int) -> Bool {
            let utf8 = Array(word.utf8)
            return position + utf8.count <= bytes.count && Array(bytes[position..<position + utf8.count]) == utf8
        }
        func skip(past terminator: String, from position: Int) -> Int? {
            let utf8 = Array(terminator.utf8)
            var cursor = position
            while cursor + utf8.count <= bytes.count {
                if bytes[cursor] == utf8[0], Array(bytes[cursor..<cursor + utf8.count]) == utf8 { return cursor + utf8.count }
                cursor += 1
            }
            return nil
        }
        func isSpace(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t")
        }
        func isNameByte(_ byte: UInt8) -> Bool {
            !isSpace(byte) && byte != UInt8(ascii: "/") && byte != UInt8(ascii: ">") && byte != UInt8(ascii: "=")
                && byte != UInt8(ascii: "<") && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "'")
        }

        while index < bytes.count {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "<") else {
                if !isSpace(byte) && stack.isEmpty { throw failure("text outside the root element") }
                index += 1
                continue
            }
            if starts("<?", at: index) {
                guard let next = skip(past: "?>", from: index + 2) else { throw failure("unterminated processing instruction") }
                index = next
            } else if starts("<!--", at: index) {
                guard let next = skip(past: "-->", from: index + 4) else { throw failure("unterminated comment") }
                index = next
            } else if starts("<![CDATA[", at: index) {
                guard !stack.isEmpty, let next = skip(past: "]]>", from: index + 9) else { throw failure("misplaced CDATA") }
                index = next
            } else if starts("<!", at: index) {
                guard elements.isEmpty, let next = skip(past: ">", from: index + 2) else { throw failure("misplaced declaration") }
                index = next
            } else if starts("</", at: index) {
                var cursor = index + 2
                let nameStart = cursor
                while cursor < bytes.count, isNameByte(bytes[cursor]) { cursor += 1 }
                let name = String(decoding: bytes[nameStart..<cursor], as: UTF8.self)
                while cursor < bytes.count, isSpace(bytes[cursor]) { cursor += 1 }
                guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: ">") else { throw failure("malformed end tag </\(name)") }
                guard let open = stack.popLast(), elements[open].name == name else { throw failure("unexpected </\(name)>") }
                if stack.isEmpty { rootClosed = true }
                index = cursor + 1
            } else {
                var cursor = index + 1
                let nameStart = cursor
                while cursor < bytes.count, isNameByte(bytes[cursor]) { cursor += 1 }
                guard cursor > nameStart else { throw failure("malformed tag") }
                let name = String(decoding: bytes[nameStart..<cursor], as: UTF8.self)
                var attributes: [String: String] = [:]
                var selfClosing = false
                while true {
                    while cursor < bytes.count, isSpace(bytes[cursor]) { cursor += 1 }
                    guard cursor < bytes.count else { throw failure("unterminated <\(name)>") }
                    if bytes[cursor] == UInt8(ascii: ">") {
                        cursor += 1
                        break
                    }
                    if bytes[cursor] == UInt8(ascii: "/") {
                        guard cursor + 1 < bytes.count, bytes[cursor + 1] == UInt8(ascii: ">") else { throw failure("malformed <\(name)>") }
                        selfClosing = true
                        cursor += 2
                        break
                    }
                    let attributeStart = cursor
                    while cursor < bytes.count, isNameByte(bytes[cursor]) { cursor += 1 }
                    guard cursor > attributeStart else { throw failure("malformed attribute in <\(name)>") }
                    let attribute = String(decoding: bytes[attributeStart..<cursor], as: UTF8.self)
                    while cursor < bytes.count, isSpace(bytes[cursor]) { cursor += 1 }
                    guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: "=") else { throw failure("attribute \(attribute) has no value") }
                    cursor += 1
                    while cursor < bytes.count, isSpace(bytes[cursor]) { cursor += 1 }
                    guard cursor < bytes.count, bytes[cursor] == UInt8(ascii: "\"") || bytes[cursor] == UInt8(ascii: "'") else {
                        throw failure("attribute \(attribute) is not quoted")
                    }
                    let quote = bytes[cursor]
                    cursor += 1
                    let valueStart = cursor
                    while cursor < bytes.count, bytes[cursor] != quote {
                        guard bytes[cursor] != UInt8(ascii: "<") else { throw failure("'<' in attribute \(attribute)") }
                        cursor += 1
                    }
                    guard cursor < bytes.count else { throw failure("unterminated attribute \(attribute)") }
                    guard attributes[attribute] == nil else { throw failure("duplicate attribute \(attribute)") }
                    attributes[attribute] = try unescape(bytes[valueStart..<cursor], failure: failure)
                    cursor += 1
                }
                guard !rootClosed, !(stack.isEmpty && !elements.isEmpty) else { throw failure("more than one root element") }
                elements.append(Element(name: name, attributes: attributes, parent: stack.last))
                if !selfClosing {
                    stack.append(elements.count - 1)
                } else if stack.isEmpty {
                    rootClosed = true
                }
                index = cursor
            }
        }
        guard !elements.isEmpty else { throw failure("empty document") }
        guard stack.isEmpty else { throw failure("<\(elements[stack.last!].name)> is not closed") }
        return elements
    }

    /// Replaces entity and character references in an attribute value.
    private static func unescape(
        _ bytes: ArraySlice<UInt8>, failure: (String) -> SandboxTwiML.Failure
    ) throws(SandboxTwiML.Failure) -> String {
        guard bytes.contains(UInt8(ascii: "&")) else { return String(decoding: bytes, as: UTF8.self) }
        let text = String(decoding: bytes, as: UTF8.self)
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            guard let semicolon = rest[ampersand...].firstIndex(of: ";") else { throw failure("unterminated entity reference") }
            let entity = rest[rest.index(after: ampersand)..<semicolon]
            switch entity {
            case "amp": result += "&"
            case "lt": result += "<"
            case "gt": result += ">"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                let scalar: Unicode.Scalar?
                if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                    scalar = UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                } else if entity.hasPrefix("#") {
                    scalar = UInt32(entity.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init)
                } else {
                    scalar = nil
                }
                guard let scalar else { throw failure("unknown entity &\(entity);") }
                result.unicodeScalars.append(scalar)
            }
            rest = rest[rest.index(after: semicolon)...]
        }
        return result + rest
    }
}
