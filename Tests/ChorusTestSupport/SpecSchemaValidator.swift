import Foundation

/// Validates what Chorus sends to its providers against schemas extracted from the providers' official OpenAPI specs.
///
/// The schemas come from the committed fixtures in `Tests/ChorusTestSupport/Specs`, written by
/// `scripts/extract-spec-schemas` from OpenAI's and Twilio's published specs, so the checks run on a fresh clone.
///
/// The JSON validator implements the part of JSON Schema these OpenAPI documents use: `type` (a name or a list of
/// names; OpenAPI 3.0 `nullable`), `properties`, `required`, `additionalProperties` (a boolean or a schema), `enum`,
/// `const`, `anyOf`, `oneOf`, `allOf`, `$ref` within the fixture, `items`, `minItems`/`maxItems`,
/// `minimum`/`maximum` (and their exclusive forms), `minLength`/`maxLength`, `pattern` and `if`/`then`/`else` (the
/// `if` schema is evaluated without strict properties). `format` is checked only by validators made with
/// `checkFormats: true` (`date-time`, `date`, `uuid`, `email`, `uri`; other formats are ignored), as Chorus's own
/// contract is (see ``ContractCheck``); `discriminator.mapping` is ignored.
///
/// Unknown properties:
/// - An object schema with `additionalProperties: false` reports every key it does not list, in both modes.
/// - With `strictProperties: true`, every object schema that lists `properties` (and has no
///   `additionalProperties`) reports the keys it does not list. OpenAI's published schemas leave
///   `additionalProperties` open, but the Realtime API answers an unknown key such as `session.temperature` with an
///   error event, so contract tests of Realtime events should validate in strict mode.
/// - Properties listed by any schema combined with `allOf`, or by an object schema around an `anyOf`/`oneOf`, count
///   as known for all of them (so `allOf` with `additionalProperties: false` is more lenient than in plain JSON
///   Schema, where it rejects every property of the other members).
///
/// Alternatives: `anyOf` needs one matching member, `oneOf` exactly one (or, when several match, the one a
/// discriminator names; several matching members that are all strings also count as one, because OpenAI's spec
/// spells "a known value or any string" as `oneOf: [string, string enum]`). When none matches, the problems of the member whose `type` property (or
/// `discriminator.propertyName`) has a `const`/`enum` equal to the instance's value are reported, so a
/// `session.update` with a bad session reports that session's problems rather than eleven event mismatches.
///
/// Every problem starts with the location it concerns: a JSON path such as `$.session.audio.output.voice` or
/// `$.tools[0].name`, or for forms a parameter name such as `StatusCallbackEvent[1]`.
public struct SpecSchemaValidator: Sendable {
    let document: SpecJSON
    private let checkFormats: Bool

    /// A validator over an OpenAPI (sub)document whose schemas are under `components.schemas`.
    ///
    /// - Parameter checkFormats: Check the `format` of strings (`date-time`, `date`, `uuid`, `email`, `uri`).
    public init(document data: Data, checkFormats: Bool = false) throws {
        do {
            document = try JSONDecoder().decode(SpecJSON.self, from: data)
        } catch {
            throw SpecSchemaValidatorError.invalidJSON("the schema document is not JSON: \(error)")
        }
        self.checkFormats = checkFormats
    }

    /// OpenAI's `RealtimeClientEvent`, `RealtimeSessionCreateRequestGA` and every schema they use
    /// (fixture `Specs/openai-realtime-client-events.json`).
    public static func openAIRealtime() throws -> SpecSchemaValidator {
        try fixture("openai-realtime-client-events")
    }

    /// Twilio's CreateCall and UpdateCall operations (fixture `Specs/twilio-calls.json`).
    public static func twilioCalls() throws -> SpecSchemaValidator {
        try fixture("twilio-calls")
    }

    /// Loads the fixture `Specs/<name>.json` from this module's resources.
    public static func fixture(_ name: String) throws -> SpecSchemaValidator {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Specs") else {
            throw SpecSchemaValidatorError.missingFixture("Specs/\(name).json is not among ChorusTestSupport's resources")
        }
        return try SpecSchemaValidator(document: Data(contentsOf: url))
    }

    /// The names under `components.schemas`, sorted.
    public var schemaNames: [String] {
        document[key: "components"]?[key: "schemas"]?.objectValue.map { $0.keys.sorted() } ?? []
    }

    /// Validates the JSON document `json` against the component schema `schemaName`.
    ///
    /// - Parameter strictProperties: Report keys that an object schema listing `properties` does not list, even
    ///   where the spec leaves `additionalProperties` open.
    /// - Returns: The problems found, each prefixed with its JSON path; empty when the document is valid.
    /// - Throws: ``SpecSchemaValidatorError`` when `json` is not JSON or the schema does not exist.
    public func validate(json: Data, against schemaName: String, strictProperties: Bool = false) throws -> [String] {
        guard let schema = document[key: "components"]?[key: "schemas"]?[key: schemaName] else {
            throw SpecSchemaValidatorError.unknownSchema(schemaName)
        }
        let instance: SpecJSON
        do {
            instance = try JSONDecoder().decode(SpecJSON.self, from: json)
        } catch {
            throw SpecSchemaValidatorError.invalidJSON("the instance is not JSON: \(error)")
        }
        return problems(of: instance, against: schema, strictProperties: strictProperties)
    }

    /// The problems of `instance` against `schema`, a schema node of this document (`$ref`s resolve within it).
    func problems(of instance: SpecJSON, against schema: SpecJSON, strictProperties: Bool) -> [String] {
        let walker = SchemaWalker(root: document, strict: strictProperties, formats: checkFormats)
        return unique(walker.check(instance, schema, at: "$", inherited: [], depth: 0))
    }

    /// Follows `$ref`s from `node` within this document.
    func resolvedNode(_ node: SpecJSON) -> SpecJSON {
        resolved(node)
    }

    /// Validates form-encoded parameters against the `application/x-www-form-urlencoded` request body of the
    /// operation whose `operationId` is `operation` (`"CreateCall"`, `"UpdateCall"`).
    ///
    /// Checks that every name is a parameter of the operation, that required parameters are present, that only
    /// array parameters repeat, that each value converts to its parameter's type (integers, `true`/`false`
    /// booleans, numbers), that strings are members of their `enum` (array items too, such as each
    /// `StatusCallbackEvent`), respect `minLength`/`maxLength`/`pattern`, and that `format: uri` values are absolute
    /// URLs with a host. Twilio's `x-twilio.conditional` groups (such as `url`, `twiml`, `application_sid`) must
    /// have exactly one member present.
    ///
    /// - Returns: The problems found, each prefixed with the parameter name; empty when the form is valid.
    /// - Throws: ``SpecSchemaValidatorError/unknownOperation(_:)`` when the fixture has no such operation.
    public func validateForm(_ pairs: [(String, String)], operation: String) throws -> [String] {
        let found = try self.operation(operation)
        guard
            let body = found.operation[key: "requestBody"].map(resolved),
            let schema = body[key: "content"]?[key: "application/x-www-form-urlencoded"]?[key: "schema"].map(resolved)
        else {
            throw SpecSchemaValidatorError.unknownOperation("\(operation) has no form-encoded request body")
        }
        let properties = schema[key: "properties"]?.objectValue ?? [:]
        var problems: [String] = []
        var order: [String] = []
        var values: [String: [String]] = [:]
        for (name, value) in pairs {
            if values[name] == nil { order.append(name) }
            values[name, default: []].append(value)
        }
        for name in order {
            let given = values[name] ?? []
            guard let property = properties[name].map(resolved) else {
                var problem = "\(name): unknown parameter (\(operation) does not define it)"
                if let near = properties.keys.first(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) {
                    problem += "; did you mean \(near)?"
                }
                problems.append(problem)
                continue
            }
            if property[key: "type"]?.stringValue == "array" {
                let items = property[key: "items"].map(resolved) ?? .object([:])
                for (index, value) in given.enumerated() {
                    problems += formValueProblems(value, items, label: given.count == 1 ? name : "\(name)[\(index)]")
                }
                if let minItems = property[key: "minItems"]?.numberValue, Double(given.count) < minItems {
                    problems.append("\(name): \(given.count) values, at least \(Int(minItems)) required")
                }
                if let maxItems = property[key: "maxItems"]?.numberValue, Double(given.count) > maxItems {
                    problems.append("\(name): \(given.count) values, at most \(Int(maxItems)) allowed")
                }
            } else {
                if given.count > 1 {
                    problems.append("\(name): given \(given.count) times but it is not an array parameter")
                }
                for value in given { problems += formValueProblems(value, property, label: name) }
            }
        }
        for name in schema[key: "required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where values[name] == nil {
            problems.append("\(name): missing required parameter")
        }
        for group in found.operation[key: "x-twilio"]?[key: "conditional"]?.arrayValue ?? [] {
            let names = (group.arrayValue ?? []).compactMap(\.stringValue).map { conditional in
                properties.keys.first { Self.squashed($0) == Self.squashed(conditional) } ?? conditional
            }
            let present = names.filter { values[$0] != nil }
            if present.isEmpty {
                problems.append("\(names.joined(separator: "|")): exactly one of these parameters is required, none given")
            } else if present.count > 1 {
                problems.append("\(present.joined(separator: "|")): these parameters are mutually exclusive")
            }
        }
        return unique(problems)
    }

    /// Validates a request path against the path template of `operation`, including the schemas of its path
    /// parameters (for Twilio, `AccountSid` is `AC` + 32 hex digits and a call `Sid` is `CA` + 32 hex digits).
    ///
    /// `path` may carry a mount prefix (such as the sandbox's `/sandbox`): its trailing segments are matched.
    /// - Returns: The problems found; empty when the path matches.
    public func validatePath(_ path: String, operation: String) throws -> [String] {
        let found = try self.operation(operation)
        let template = found.template.split(separator: "/").map(String.init)
        let segments = path.split(separator: "?").first.map { $0.split(separator: "/").map(String.init) } ?? []
        guard segments.count >= template.count else {
            return ["\(path): does not match \(found.template)"]
        }
        let parameters = (found.operation[key: "parameters"]?.arrayValue ?? []).map(resolved)
        var arguments: [(name: String, value: String)] = []
        for (pattern, segment) in zip(template, segments.suffix(template.count)) {
            let value = segment.removingPercentEncoding ?? segment
            if let (name, suffix) = Self.placeholder(in: pattern), value.hasSuffix(suffix), value.count > suffix.count {
                arguments.append((name, String(value.dropLast(suffix.count))))
            } else if pattern != value {
                return ["\(path): does not match \(found.template)"]
            }
        }
        var problems: [String] = []
        for (name, value) in arguments {
            guard let parameter = parameters.first(where: { $0[key: "name"]?.stringValue == name }) else { continue }
            problems += formValueProblems(value, parameter[key: "schema"].map(resolved) ?? .object([:]), label: "{\(name)}")
        }
        return unique(problems)
    }

    /// Decodes an `application/x-www-form-urlencoded` body into its pairs, in order (`+` is a space).
    public static func decodeForm(_ body: String) -> [(String, String)] {
        body.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    // MARK: - Forms

    private func formValueProblems(_ value: String, _ schema: SpecJSON, label: String) -> [String] {
        let schema = resolved(schema)
        var problems: [String] = []
        switch schema[key: "type"]?.stringValue {
        case "integer":
            guard let number = Int(value) else { return ["\(label): expected an integer, got `\(value)`"] }
            problems += SchemaWalker.rangeProblems(Double(number), schema, at: label)
        case "number":
            guard let number = Double(value), number.isFinite else { return ["\(label): expected a number, got `\(value)`"] }
            problems += SchemaWalker.rangeProblems(number, schema, at: label)
        case "boolean":
            guard value == "true" || value == "false" else { return ["\(label): expected `true` or `false`, got `\(value)`"] }
        default:
            problems += SchemaWalker.stringProblems(value, schema, at: label)
            if schema[key: "format"]?.stringValue == "uri" {
                let components = URLComponents(string: value)
                if components?.scheme == nil || (components?.host ?? "").isEmpty {
                    problems.append("\(label): expected an absolute URL, got `\(value)`")
                }
            }
        }
        if let allowed = schema[key: "enum"]?.arrayValue, !allowed.contains(where: { $0.formText == value }) {
            problems.append("\(label): `\(value)` is not one of \(SchemaWalker.list(allowed))")
        }
        return problems
    }

    private func operation(_ operationID: String) throws -> (template: String, operation: SpecJSON) {
        for (template, item) in document[key: "paths"]?.objectValue ?? [:] {
            for (_, operation) in item.objectValue ?? [:] where operation[key: "operationId"]?.stringValue == operationID {
                return (template, operation)
            }
        }
        throw SpecSchemaValidatorError.unknownOperation(operationID)
    }

    private func resolved(_ node: SpecJSON) -> SpecJSON {
        var node = node
        for _ in 0..<32 {
            guard let reference = node[key: "$ref"]?.stringValue, let target = SchemaWalker.pointer(reference, in: document) else { break }
            node = target
        }
        return node
    }

    /// The parameter name and the literal after it in a template segment such as `{Sid}.json`.
    private static func placeholder(in segment: String) -> (name: String, suffix: String)? {
        guard segment.hasPrefix("{"), let close = segment.firstIndex(of: "}") else { return nil }
        return (String(segment[segment.index(after: segment.startIndex)..<close]), String(segment[segment.index(after: close)...]))
    }

    private static func squashed(_ name: String) -> String {
        name.replacingOccurrences(of: "_", with: "").lowercased()
    }

    private func unique(_ problems: [String]) -> [String] {
        var seen = Set<String>()
        return problems.filter { seen.insert($0).inserted }
    }
}

/// Why a ``SpecSchemaValidator`` could not validate at all (as opposed to finding problems in what it validated).
public enum SpecSchemaValidatorError: Error, Sendable, CustomStringConvertible {
    /// A fixture is missing from the test resources.
    case missingFixture(String)
    /// The fixture has no schema of this name.
    case unknownSchema(String)
    /// The fixture has no operation with this `operationId`, or it has no form-encoded body.
    case unknownOperation(String)
    /// The schema document or the instance is not JSON.
    case invalidJSON(String)

    public var description: String {
        switch self {
        case .missingFixture(let message): "missing fixture: \(message)"
        case .unknownSchema(let name): "no schema named \(name) in the fixture"
        case .unknownOperation(let name): "no operation \(name) in the fixture"
        case .invalidJSON(let message): message
        }
    }
}

// MARK: - JSON values

/// A parsed JSON value (numbers as `Double`, which is exact for every integer these schemas and instances use).
enum SpecJSON: Sendable, Equatable, Decodable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([SpecJSON])
    case object([String: SpecJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([SpecJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: SpecJSON].self))
        }
    }

    subscript(key key: String) -> SpecJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var objectValue: [String: SpecJSON]? {
        if case .object(let members) = self { return members }
        return nil
    }

    var arrayValue: [SpecJSON]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var numberValue: Double? {
        if case .number(let number) = self { return number }
        return nil
    }

    /// The JSON Schema type name of this value (`integer` for integral numbers).
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number(let number): number.rounded() == number ? "integer" : "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// A short rendering for messages.
    var preview: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let number): number.rounded() == number && abs(number) < 1e15 ? "\(Int(number))" : "\(number)"
        case .string(let text): "\"\(text.count > 60 ? text.prefix(57) + "..." : text)\""
        case .array(let elements): "an array of \(elements.count)"
        case .object: "an object"
        }
    }

    /// How the value is spelled in a form (for enum membership of form values).
    var formText: String {
        switch self {
        case .string(let text): text
        default: preview
        }
    }
}

// MARK: - Schema walking

/// One validation run over a fixture document.
private struct SchemaWalker {
    let root: SpecJSON
    let strict: Bool
    let formats: Bool

    /// The most `$ref` hops (and nested alternatives) followed without descending into the instance.
    static let maximumDepth = 64

    /// The problems of `value` against `schema`. `inherited` holds property names known to an enclosing schema
    /// (an `allOf` sibling, or the object around an `anyOf`/`oneOf`), which are not reported as unknown here.
    func check(_ value: SpecJSON, _ schema: SpecJSON, at path: String, inherited: Set<String>, depth: Int) -> [String] {
        if case .bool(let allowed) = schema { return allowed ? [] : ["\(path): no value is allowed here"] }
        guard case .object(let keywords) = schema else { return [] }
        guard depth < Self.maximumDepth else { return ["\(path): schema nesting too deep (a reference cycle?)"] }
        if value == .null, keywords["nullable"] == .bool(true) { return [] }

        var problems: [String] = []
        let known = knownProperties(schema, depth: 0).union(inherited)
        if let reference = keywords["$ref"]?.stringValue {
            guard let target = Self.pointer(reference, in: root) else { return ["\(path): unresolvable $ref \(reference)"] }
            problems += check(value, target, at: path, inherited: known, depth: depth + 1)
        }
        if let types = Self.typeNames(keywords["type"]), !types.contains(where: { Self.value(value, is: $0) }) {
            return problems + ["\(path): expected \(types.joined(separator: " or ")), got \(value.typeName) \(value.preview)"]
        }
        if let allowed = keywords["enum"]?.arrayValue, !allowed.contains(where: { Self.same($0, value) }) {
            problems.append("\(path): \(value.preview) is not one of \(Self.list(allowed))")
        }
        if let constant = keywords["const"], !Self.same(constant, value) {
            problems.append("\(path): expected \(constant.preview), got \(value.preview)")
        }
        switch value {
        case .string(let text):
            problems += Self.stringProblems(text, schema, at: path)
            if formats, let format = keywords["format"]?.stringValue, let problem = Self.formatProblem(text, format, at: path) {
                problems.append(problem)
            }
        case .number(let number):
            problems += Self.rangeProblems(number, schema, at: path)
        case .array(let elements):
            if let minItems = keywords["minItems"]?.numberValue, Double(elements.count) < minItems {
                problems.append("\(path): \(elements.count) items, at least \(Int(minItems)) required")
            }
            if let maxItems = keywords["maxItems"]?.numberValue, Double(elements.count) > maxItems {
                problems.append("\(path): \(elements.count) items, at most \(Int(maxItems)) allowed")
            }
            if let items = keywords["items"] {
                for (index, element) in elements.enumerated() {
                    problems += check(element, items, at: "\(path)[\(index)]", inherited: [], depth: 0)
                }
            }
        case .object(let members):
            problems += objectProblems(members, keywords, at: path, inherited: inherited, depth: depth)
        case .null, .bool:
            break
        }

        for member in keywords["allOf"]?.arrayValue ?? [] {
            problems += check(value, member, at: path, inherited: known, depth: depth + 1)
        }
        for keyword in ["anyOf", "oneOf"] {
            guard let members = keywords[keyword]?.arrayValue else { continue }
            problems += alternativesProblems(
                value, members, keyword: keyword, discriminator: keywords["discriminator"], at: path, inherited: known, depth: depth)
        }
        if let condition = keywords["if"] {
            // The condition only selects a branch: its own unknown properties are no problem.
            let lenient = SchemaWalker(root: root, strict: false, formats: formats)
            let holds = lenient.check(value, condition, at: path, inherited: known, depth: depth + 1).isEmpty
            if let branch = keywords[holds ? "then" : "else"] {
                problems += check(value, branch, at: path, inherited: known, depth: depth + 1)
            }
        }
        return problems
    }

    /// The problem of a string that does not have its `format` (`date-time`, `date`, `uuid`, `email`, `uri`).
    static func formatProblem(_ text: String, _ format: String, at path: String) -> String? {
        let pattern: String
        switch format {
        case "date-time":
            pattern = #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$"#
        case "date":
            pattern = #"^\d{4}-\d{2}-\d{2}$"#
        case "uuid":
            pattern = #"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"#
        case "email":
            pattern = #"^[^@\s]+@[^@\s]+$"#
        case "uri":
            let components = URLComponents(string: text)
            return components?.scheme == nil ? "\(path): \"\(text)\" is not an absolute URI (format uri)" : nil
        default:
            return nil
        }
        guard let expression = try? NSRegularExpression(pattern: pattern),
            expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        else {
            return "\(path): \"\(text)\" is not a \(format) (format \(format))"
        }
        return nil
    }

    private func objectProblems(
        _ members: [String: SpecJSON], _ keywords: [String: SpecJSON], at path: String, inherited: Set<String>, depth: Int
    ) -> [String] {
        var problems: [String] = []
        let properties = keywords["properties"]?.objectValue ?? [:]
        var known = knownProperties(.object(keywords), depth: 0).union(inherited)
        let hasAlternatives = keywords["anyOf"] != nil || keywords["oneOf"] != nil
        if hasAlternatives {
            for member in (keywords["anyOf"]?.arrayValue ?? []) + (keywords["oneOf"]?.arrayValue ?? []) {
                known.formUnion(knownProperties(member, depth: 0))
            }
        }
        let listsProperties = !properties.isEmpty || keywords["allOf"] != nil
        for key in members.keys.sorted() {
            let member = members[key]!
            let memberPath = Self.path(path, key)
            if let property = properties[key] {
                problems += check(member, property, at: memberPath, inherited: [], depth: 0)
            } else if known.contains(key) {
                continue
            } else if let additional = keywords["additionalProperties"] {
                switch additional {
                case .bool(false):
                    problems.append("\(memberPath): unknown property (additionalProperties is false; known: \(Self.names(known)))")
                case .object:
                    problems += check(member, additional, at: memberPath, inherited: [], depth: 0)
                default:
                    break
                }
            } else if strict, listsProperties, !hasAlternatives {
                problems.append("\(memberPath): unknown property (strict; known: \(Self.names(known)))")
            }
        }
        for required in keywords["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where members[required] == nil {
            problems.append("\(Self.path(path, required)): missing required property")
        }
        return problems
    }

    private func alternativesProblems(
        _ value: SpecJSON, _ members: [SpecJSON], keyword: String, discriminator: SpecJSON?, at path: String,
        inherited: Set<String>, depth: Int
    ) -> [String] {
        let results = members.map { check(value, $0, at: path, inherited: inherited, depth: depth + 1) }
        let matching = results.indices.filter { results[$0].isEmpty }
        let tagged = taggedMembers(value, members, discriminator: discriminator)
        if keyword == "anyOf", !matching.isEmpty { return [] }
        if keyword == "oneOf" {
            if matching.count == 1 { return [] }
            if matching.count > 1 {
                if tagged.count == 1, matching.contains(tagged[0]) { return [] }
                // OpenAI spells "one of these known values or any string" as oneOf [string, string enum].
                if matching.allSatisfy({ resolved(members[$0])[key: "type"]?.stringValue == "string" }) { return [] }
                let names = matching.map { memberName(members[$0], index: $0) }.joined(separator: ", ")
                return ["\(path): matches \(matching.count) alternatives of oneOf (\(names)), exactly one is allowed"]
            }
        }
        if tagged.count == 1 { return results[tagged[0]] }
        let typed = members.indices.filter { typeCompatible(value, members[$0]) }
        if typed.count == 1 { return results[typed[0]] }
        let summary = members.indices.map { index in
            "\(memberName(members[index], index: index)): \(results[index].first ?? "?")"
        }
        return ["\(path): matches none of the \(members.count) alternatives of \(keyword) [\(summary.joined(separator: " | "))]"]
    }

    /// The members whose discriminating property (`discriminator.propertyName`, else `type`) admits the
    /// instance's value of that property.
    private func taggedMembers(_ value: SpecJSON, _ members: [SpecJSON], discriminator: SpecJSON?) -> [Int] {
        let tagName = discriminator?[key: "propertyName"]?.stringValue ?? "type"
        guard let tag = value[key: tagName], case .string = tag else { return [] }
        return members.indices.filter { index in
            guard let property = resolved(members[index])[key: "properties"]?[key: tagName].map(resolved) else { return false }
            if let constant = property[key: "const"] { return constant == tag }
            return property[key: "enum"]?.arrayValue?.contains(tag) ?? false
        }
    }

    /// Whether `schema` (through references) admits the JSON type of `value`; schemas without `type` admit all.
    private func typeCompatible(_ value: SpecJSON, _ schema: SpecJSON) -> Bool {
        let schema = resolved(schema)
        if value == .null, schema[key: "nullable"] == .bool(true) { return true }
        guard let types = Self.typeNames(schema[key: "type"]) else { return true }
        return types.contains { Self.value(value, is: $0) }
    }

    /// Property names a schema lists itself or through `allOf` members and references.
    private func knownProperties(_ schema: SpecJSON, depth: Int) -> Set<String> {
        guard depth < 16, case .object(let keywords) = schema else { return [] }
        var names = Set(keywords["properties"]?.objectValue?.keys.map { $0 } ?? [])
        if let reference = keywords["$ref"]?.stringValue, let target = Self.pointer(reference, in: root) {
            names.formUnion(knownProperties(target, depth: depth + 1))
        }
        for member in keywords["allOf"]?.arrayValue ?? [] {
            names.formUnion(knownProperties(member, depth: depth + 1))
        }
        return names
    }

    private func resolved(_ schema: SpecJSON) -> SpecJSON {
        var schema = schema
        for _ in 0..<32 {
            guard let reference = schema[key: "$ref"]?.stringValue, let target = Self.pointer(reference, in: root) else { break }
            schema = target
        }
        return schema
    }

    private func memberName(_ member: SpecJSON, index: Int) -> String {
        if let reference = member[key: "$ref"]?.stringValue, let name = reference.split(separator: "/").last {
            return String(name)
        }
        if let title = member[key: "title"]?.stringValue { return "#\(index) \(title)" }
        return "#\(index)"
    }

    // MARK: Shared checks

    static func stringProblems(_ text: String, _ schema: SpecJSON, at path: String) -> [String] {
        var problems: [String] = []
        let length = text.unicodeScalars.count
        if let minLength = schema[key: "minLength"]?.numberValue, Double(length) < minLength {
            problems.append("\(path): \(length) characters, at least \(Int(minLength)) required")
        }
        if let maxLength = schema[key: "maxLength"]?.numberValue, Double(length) > maxLength {
            problems.append("\(path): \(length) characters, at most \(Int(maxLength)) allowed")
        }
        if let pattern = schema[key: "pattern"]?.stringValue, let expression = try? NSRegularExpression(pattern: pattern),
            expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil
        {
            problems.append("\(path): \"\(text)\" does not match the pattern \(pattern)")
        }
        return problems
    }

    static func rangeProblems(_ number: Double, _ schema: SpecJSON, at path: String) -> [String] {
        var problems: [String] = []
        // OpenAPI 3.0 spells exclusive bounds as booleans next to minimum/maximum; 3.1 as numbers.
        let exclusiveMinimum = schema[key: "exclusiveMinimum"] == .bool(true)
        let exclusiveMaximum = schema[key: "exclusiveMaximum"] == .bool(true)
        if let minimum = schema[key: "minimum"]?.numberValue, exclusiveMinimum ? number <= minimum : number < minimum {
            problems.append("\(path): \(SpecJSON.number(number).preview) is below the minimum \(SpecJSON.number(minimum).preview)")
        }
        if let maximum = schema[key: "maximum"]?.numberValue, exclusiveMaximum ? number >= maximum : number > maximum {
            problems.append("\(path): \(SpecJSON.number(number).preview) is above the maximum \(SpecJSON.number(maximum).preview)")
        }
        if let bound = schema[key: "exclusiveMinimum"]?.numberValue, number <= bound {
            problems.append("\(path): \(SpecJSON.number(number).preview) must be above \(SpecJSON.number(bound).preview)")
        }
        if let bound = schema[key: "exclusiveMaximum"]?.numberValue, number >= bound {
            problems.append("\(path): \(SpecJSON.number(number).preview) must be below \(SpecJSON.number(bound).preview)")
        }
        return problems
    }

    /// Resolves a local JSON pointer such as `#/components/schemas/X`.
    static func pointer(_ reference: String, in root: SpecJSON) -> SpecJSON? {
        guard reference.hasPrefix("#") else { return nil }
        var node = root
        for token in reference.dropFirst().split(separator: "/") {
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            switch node {
            case .object(let members):
                guard let next = members[key.removingPercentEncoding ?? key] else { return nil }
                node = next
            case .array(let elements):
                guard let index = Int(key), elements.indices.contains(index) else { return nil }
                node = elements[index]
            default:
                return nil
            }
        }
        return node
    }

    static func typeNames(_ type: SpecJSON?) -> [String]? {
        switch type {
        case .string(let name): [name]
        case .array(let names): names.compactMap(\.stringValue)
        default: nil
        }
    }

    static func value(_ value: SpecJSON, is type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("number", .number), ("string", .string), ("array", .array), ("object", .object):
            true
        case ("integer", .number(let number)):
            number.rounded() == number
        default:
            false
        }
    }

    /// JSON equality (numbers by value).
    static func same(_ left: SpecJSON, _ right: SpecJSON) -> Bool {
        left == right
    }

    static func path(_ base: String, _ key: String) -> String {
        let plain = key.first.map { $0.isLetter || $0 == "_" } == true && key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
        return plain ? "\(base).\(key)" : "\(base)[\"\(key)\"]"
    }

    static func list(_ values: [SpecJSON]) -> String {
        let shown = values.prefix(12).map(\.preview).joined(separator: ", ")
        return "[\(shown)\(values.count > 12 ? ", ... (\(values.count) in all)" : "")]"
    }

    static func names(_ names: Set<String>) -> String {
        let sorted = names.sorted()
        return sorted.prefix(30).joined(separator: ", ") + (sorted.count > 30 ? ", ..." : "")
    }
}
