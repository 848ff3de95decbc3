import Foundation
import NIOConcurrencyHelpers
import Vapor

/// Checks answers against Chorus's HTTP contract, `Sources/ChorusServer/Resources/openapi.json` (served as
/// `/openapi.json`): every test server runs ``ContractCheckMiddleware``, so every answer of every server test is
/// checked and the contract cannot drift from the code.
///
/// For an answer to a routed request it checks that
/// - the route's operation (method and path template; `HEAD` uses `GET`'s) is in the contract,
/// - the status is one the operation documents (or it documents `default`),
/// - a body comes with a `Content-Type` the response documents, and a response documenting no content has no body,
/// - a JSON body validates against the documented schema, with strict properties (a member the schema does not
///   list is a problem) and formats (`date-time`, `uuid`, ...).
///
/// Streamed bodies (server-sent events, files) and WebSocket upgrades are checked for status and content type only.
/// Exempt by design (the body must still be an `ErrorResponse`): requests no route matched that answer 404 (tests
/// probe absent and hidden endpoints) and every 405 (a method the contract has no operation for at an existing path,
/// including one a parameter route would have caught, such as `PATCH /messages/search`: `ChorusErrorMiddleware`);
/// and CORS preflights (`OPTIONS` with `Access-Control-Request-Method`, answered by the CORS middleware, which the
/// contract leaves out).
public struct ContractCheck: Sendable {
    private let validator: SpecSchemaValidator
    /// Operations by upper-cased method and path template.
    private let operations: [String: [String: SpecJSON]]

    /// A check against the OpenAPI document `data`.
    public init(document data: Data) throws {
        validator = try SpecSchemaValidator(document: data, checkFormats: true)
        var operations: [String: [String: SpecJSON]] = [:]
        for (template, item) in validator.document[key: "paths"]?.objectValue ?? [:] {
            for (method, operation) in item.objectValue ?? [:] where Self.methods.contains(method) {
                operations[method.uppercased(), default: [:]][template] = operation
            }
        }
        self.operations = operations
    }

    /// The contract in this checkout, parsed once per process.
    public static func chorus() throws -> ContractCheck {
        try loaded.get()
    }

    private static let loaded: Result<ContractCheck, any Error> = Result {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try ContractCheck(document: Data(contentsOf: root.appendingPathComponent("Sources/ChorusServer/Resources/openapi.json")))
    }

    private static let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

    /// What one answer amounts to.
    public struct Outcome: Sendable, Equatable {
        /// `METHOD /template` of the operation, or `nil` when no route matched (an exempt answer).
        public var operation: String?
        /// Where the answer departs from the contract; empty when it keeps it.
        public var violations: [String]

        public init(operation: String?, violations: [String]) {
            self.operation = operation
            self.violations = violations
        }
    }

    /// Checks one answer.
    ///
    /// - Parameters:
    ///   - route: The path template of the route that answered (`/mobile/calls/{call_sid}`), `nil` when none matched.
    ///   - body: The body when it was not streamed (`nil` for streams, whose content is not checked).
    public func check(
        method: String, route: String?, path: String, status: Int, contentType: String?, body: Data?,
        isPreflight: Bool = false
    ) -> Outcome {
        let label = "\(method) \(path) → \(status)"
        guard let route, status != 405 else {
            if isPreflight, method == "OPTIONS" { return Outcome(operation: nil, violations: []) }
            guard status == 404 || status == 405 else {
                return Outcome(operation: nil, violations: ["\(label): answered by no route (the contract documents no such operation)"])
            }
            return Outcome(operation: nil, violations: bodyProblems(label, errorResponse, contentType: contentType, body: body))
        }
        let operationMethod = method == "HEAD" && find("HEAD", route) == nil ? "GET" : method
        let name = "\(operationMethod) \(route)"
        guard let operation = find(operationMethod, route) else {
            return Outcome(operation: name, violations: ["\(label): \(name) is not in the contract"])
        }
        let responses = operation[key: "responses"]?.objectValue ?? [:]
        guard let documented = responses[String(status)] ?? responses["default"] else {
            let known = responses.keys.sorted().joined(separator: ", ")
            return Outcome(operation: name, violations: ["\(label): \(name) does not document status \(status) (documented: \(known))"])
        }
        let response = validator.resolvedNode(documented)
        if method == "HEAD" || status == 101 { return Outcome(operation: name, violations: []) }
        return Outcome(operation: name, violations: bodyProblems("\(label) (\(name))", response, contentType: contentType, body: body))
    }

    private var errorResponse: SpecJSON {
        .object(["content": .object(["application/json": .object(["schema": .object(["$ref": .string("#/components/schemas/ErrorResponse")])])])])
    }

    private func bodyProblems(_ label: String, _ response: SpecJSON, contentType: String?, body: Data?) -> [String] {
        let content = response[key: "content"]?.objectValue ?? [:]
        let mediaType = contentType.map { String($0.split(separator: ";")[0]).trimmingCharacters(in: .whitespaces).lowercased() }
        if content.isEmpty {
            if let body, !body.isEmpty {
                return ["\(label): the contract documents no content, the answer has \(body.count) bytes of \(mediaType ?? "no type")"]
            }
            return []
        }
        guard let mediaType else {
            if let body, body.isEmpty { return [] }
            return ["\(label): no Content-Type (documented: \(content.keys.sorted().joined(separator: ", ")))"]
        }
        guard let media = content[mediaType] else {
            return ["\(label): Content-Type \(mediaType) is not documented (documented: \(content.keys.sorted().joined(separator: ", ")))"]
        }
        guard mediaType == "application/json" || mediaType.hasSuffix("+json"), let body, let schema = media[key: "schema"] else { return [] }
        let instance: SpecJSON
        do {
            instance = try JSONDecoder().decode(SpecJSON.self, from: body)
        } catch {
            return ["\(label): the body is not JSON: \(String(decoding: body.prefix(200), as: UTF8.self))"]
        }
        return validator.problems(of: instance, against: schema, strictProperties: true).map { "\(label): \($0)" }
    }

    private func find(_ method: String, _ route: String) -> SpecJSON? {
        operations[method]?[route]
    }
}

/// Checks every answer of the server it is installed on with ``ContractCheck`` and records what it finds in a
/// ``ContractCheckRecorder`` (installed outermost, so it sees answers as clients do).
public struct ContractCheckMiddleware: AsyncMiddleware {
    let check: ContractCheck
    let recorder: ContractCheckRecorder

    public init(check: ContractCheck, recorder: ContractCheckRecorder) {
        self.check = check
        self.recorder = recorder
    }

    public func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let response: Response
        do {
            response = try await next.respond(to: request)
        } catch {
            recorder.record(operation: nil, violations: ["\(request.method.rawValue) \(request.url.path): an error escaped every middleware: \(error)"])
            throw error
        }
        let route = request.route.map { route in
            "/" + route.path.map { component -> String in
                switch component {
                case .constant(let text): text
                case .parameter(let name): "{\(name)}"
                case .anything: "*"
                case .catchall: "**"
                }
            }.joined(separator: "/")
        }
        let outcome = check.check(
            method: request.method.rawValue, route: route, path: request.url.path, status: Int(response.status.code),
            contentType: response.headers.first(name: .contentType), body: response.body.data,
            isPreflight: request.headers.first(name: .accessControlRequestMethod) != nil
        )
        recorder.record(operation: outcome.operation.map { "\($0) \(response.status.code)" }, violations: outcome.violations)
        return response
    }
}

/// What a server's ``ContractCheckMiddleware`` found: the violations and how many answers it checked.
public final class ContractCheckRecorder: Sendable {
    private struct State {
        var violations: [String] = []
        var checked: [String] = []
        var exempt = 0
    }

    private let state = NIOLockedValueBox(State())
    /// Serialises appends to the log between the servers of one test process.
    private static let logLock = NIOLock()

    public init() {}

    func record(operation: String?, violations: [String]) {
        state.withLockedValue { state in
            state.violations += violations
            if let operation { state.checked.append(operation) } else { state.exempt += 1 }
        }
    }

    /// Where answers departed from the contract, in order.
    public var violations: [String] { state.withLockedValue(\.violations) }

    /// `METHOD /template status` of each answer checked against an operation, in order.
    public var checked: [String] { state.withLockedValue(\.checked) }

    /// How many answers were exempt (unrouted 404s, CORS preflights).
    public var exempt: Int { state.withLockedValue(\.exempt) }

    /// Appends one line per checked answer (`METHOD /template status`), one per exempt one (`exempt`) and one per
    /// violation (`violation: ...`) to the file named by `CHORUS_CONTRACT_LOG`, if set: how a test run counts the
    /// answers it validated.
    public func appendToLog() {
        guard let path = ProcessInfo.processInfo.environment["CHORUS_CONTRACT_LOG"], !path.isEmpty else { return }
        let (checked, exempt, violations) = state.withLockedValue { ($0.checked, $0.exempt, $0.violations) }
        let lines = checked.map { "\($0)\n" }.joined() + String(repeating: "exempt\n", count: exempt)
            + violations.map { "violation: \($0.replacingOccurrences(of: "\n", with: " "))\n" }.joined()
        guard !lines.isEmpty else { return }
        Self.logLock.withLock {
            if !FileManager.default.fileExists(atPath: path) { FileManager.default.createFile(atPath: path, contents: nil) }
            guard let handle = FileHandle(forWritingAtPath: path) else { return }
            defer { try? handle.close() }
            _ = try? handle.seekToEnd()
            try? handle.write(contentsOf: Data(lines.utf8))
        }
    }
}
