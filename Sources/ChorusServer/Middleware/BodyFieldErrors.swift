import ChorusAPI
import Foundation

/// Every field of a JSON body that does not fit the endpoint's DTO, not only the first.
///
/// `JSONDecoder` stops at the first failure. After it, a copy of the body is decoded again and again: each round
/// records the failing field (once, with the message ``FieldError/init(decoding:)`` gives) and mends the copy there —
/// a value of the expected type in place of a wrong one or a missing one, or the member removed — until the copy
/// decodes or a failure cannot be mended. It works for any `Decodable` without per-endpoint code; a failure inside a
/// field already reported (e.g. the members of an object sent as a number) is mended silently, never reported twice.
enum BodyFieldErrors {
    /// Decoding rounds at most (each decodes the whole body, which `CHORUS_MAX_BODY_BYTES` bounds).
    static let maxRounds = 64
    /// Bytes decoded at most over all rounds: a large bad body gets fewer rounds, so that a client cannot make the
    /// server decode many times what it sent.
    static let workBudget = 1 << 20
    /// Mending attempts at one field before giving up (a value of the wrong guess, then null, then its type).
    private static let maxAttemptsPerField = 4

    /// The field errors of `body` against `type`, starting with `first` (the failure the decoder already threw).
    static func all<T: Decodable>(_ type: T.Type, body: Data, first: DecodingError, decoder: JSONDecoder) -> [FieldError] {
        var errors: [FieldError] = []
        var reported: [[Component]] = []
        var attempts: [[Component]: Int] = [:]
        guard var copy = try? decoder.decode(JSONValue.self, from: body) else { return [FieldError(decoding: first)] }
        var failure = first
        let rounds = min(maxRounds, max(1, workBudget / max(1, body.count)))
        for _ in 0..<rounds {
            let path = Component.path(of: failure)
            if !reported.contains(where: { path.starts(with: $0) }) {
                errors.append(error(for: failure, path: path))
                reported.append(path)
            }
            attempts[path, default: 0] += 1
            guard !path.isEmpty, attempts[path, default: 0] <= maxAttemptsPerField,
                let mend = mending(failure, at: path, in: copy), copy.replace(at: path[...], with: mend)
            else { break }
            do {
                _ = try decoder.decode(T.self, from: try JSONEncoder().encode(copy))
                break
            } catch let next as DecodingError {
                failure = next
            } catch {
                break
            }
        }
        return errors
    }

    /// The field error of `failure`. The body is valid JSON here (it was read as ``JSONValue``), so a failure without
    /// a path is not a malformed body: Foundation's `JSONDecoder` reports a number that does not fit (`1.5` or `1e30`
    /// for an integer) as "not valid JSON", without the field; any other is a DTO's own rule, said as it is.
    private static func error(for failure: DecodingError, path: [Component]) -> FieldError {
        if case .dataCorrupted(let context) = failure, path.isEmpty {
            guard context.debugDescription == "The given data was not valid JSON." else {
                return FieldError(field: "body", message: context.debugDescription)
            }
            return FieldError(field: "body", message: "A number does not fit its field (a fraction or too large where an integer is expected)")
        }
        return FieldError(decoding: failure)
    }

    /// What to put at `path` instead (`.some(nil)`: remove the member); `nil` when nothing can be done there.
    private static func mending(_ failure: DecodingError, at path: [Component], in copy: JSONValue) -> JSONValue?? {
        let isMember: Bool = if case .key = path.last { true } else { false }
        switch failure {
        case .keyNotFound:
            // Present as null, the next round's failure names the member's type.
            return .some(.null)
        case .typeMismatch(let type, _), .valueNotFound(let type, _):
            if let value = placeholder(for: type) { return .some(value) }
            return isMember ? .some(nil) : nil
        case .dataCorrupted:
            // A value of the right type the DTO refuses (a date, a number out of range): without it, the member is
            // missing, and the next rounds name its type.
            return isMember ? .some(nil) : nil
        @unknown default:
            return nil
        }
    }

    /// A value the decoder accepts as `type`; an unknown type (a nested DTO) is tried as an object, and the next
    /// round's failure says what it is if not.
    private static func placeholder(for type: Any.Type) -> JSONValue? {
        switch type {
        case is String.Type, is Substring.Type: return .string("")
        case is Bool.Type: return .bool(false)
        case is Int.Type, is Int8.Type, is Int16.Type, is Int32.Type, is Int64.Type,
            is UInt.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type, is UInt64.Type,
            is Double.Type, is Float.Type, is Decimal.Type:
            return .integer(0)
        case is Date.Type: return .string("2000-01-01T00:00:00Z")
        case is UUID.Type: return .string("00000000-0000-0000-0000-000000000000")
        case is URL.Type: return .string("https://example.invalid/")
        default:
            let name = String(describing: type)
            if name.hasPrefix("Array<") || name.hasPrefix("[") && !name.contains(":") { return .array([]) }
            return .object([:])
        }
    }

    /// One step of a coding path: a member name or an array index.
    enum Component: Hashable {
        case key(String)
        case index(Int)

        static func path(of failure: DecodingError) -> [Component] {
            let keys: [any CodingKey]
            switch failure {
            case .keyNotFound(let key, let context): keys = context.codingPath + [key]
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): keys = context.codingPath
            @unknown default: keys = []
            }
            return keys.map { key in key.intValue.map(Component.index) ?? .key(key.stringValue) }
        }
    }

    /// A JSON document as read, to be mended and written again.
    enum JSONValue: Codable, Equatable {
        case null
        case bool(Bool)
        case integer(Int64)
        case number(Double)
        case string(String)
        case array([JSONValue])
        case object([String: JSONValue])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .integer(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([JSONValue].self) {
                self = .array(value)
            } else {
                self = .object(try container.decode([String: JSONValue].self))
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            case .number(let value): try container.encode(value)
            case .string(let value): try container.encode(value)
            case .array(let value): try container.encode(value)
            case .object(let value): try container.encode(value)
            }
        }

        /// Puts `value` at `path` (`nil`: removes the member there). A member is added to an object that lacks it;
        /// an array index must exist. Whether the path led anywhere.
        mutating func replace(at path: ArraySlice<Component>, with value: JSONValue?) -> Bool {
            guard let step = path.first else {
                guard let value else { return false }
                self = value
                return true
            }
            let rest = path.dropFirst()
            switch (self, step) {
            case (.object(var members), _):
                // A dictionary member whose name reads as a number comes as an index.
                let name: String = switch step {
                case .key(let key): key
                case .index(let index): String(index)
                }
                if rest.isEmpty {
                    members[name] = value
                } else {
                    guard var member = members[name], member.replace(at: rest, with: value) else { return false }
                    members[name] = member
                }
                self = .object(members)
                return true
            case (.array(var elements), .index(let index)):
                guard elements.indices.contains(index) else { return false }
                if rest.isEmpty {
                    guard let value else { return false }
                    elements[index] = value
                } else {
                    guard elements[index].replace(at: rest, with: value) else { return false }
                }
                self = .array(elements)
                return true
            default:
                return false
            }
        }
    }
}
