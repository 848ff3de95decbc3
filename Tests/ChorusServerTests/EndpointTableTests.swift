import ChorusAPI
import Foundation
import Testing
import Vapor

@testable import ChorusServer

/// The endpoint table (``API``), the routes a running server registered and the contract (`openapi/openapi.json`) list
/// the same operations, each once. The sandbox's emulators (`/sandbox/**`) are mounted beside the API and are in the
/// contract but not in the table.
@Suite("Endpoint table")
struct EndpointTableTests {
    /// Whether `template` belongs to the sandbox's emulators rather than the API.
    static func isSandbox(_ template: String) -> Bool { template == "/sandbox" || template.hasPrefix("/sandbox/") }

    /// The operations of the contract (outside the sandbox), in the table's form.
    static func contractOperations() throws -> [AnyEndpoint] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("openapi/openapi.json"))
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        return paths.flatMap { template, operations in
            operations.keys.compactMap { key in EndpointMethod(rawValue: key.uppercased()).map { AnyEndpoint(method: $0, template: template) } }
        }
        .filter { !isSandbox($0.template) }
    }

    /// The routes `app` registered (outside the sandbox) as `GET /stories/{story_id}`, the table's descriptions: `:name`
    /// becomes `{name}`.
    static func registeredRoutes(_ app: Application) -> [String] {
        app.routes.all.compactMap { route -> String? in
            let segments = route.path.map { component -> String in
                switch component {
                case .constant(let text): text
                case .parameter(let name): "{\(name)}"
                case .anything: "*"
                case .catchall: "**"
                }
            }
            let template = "/" + segments.joined(separator: "/")
            return isSandbox(template) ? nil : "\(route.method.rawValue) \(template)"
        }
    }

    static func duplicates<Item: Hashable & CustomStringConvertible>(_ items: [Item]) -> [String] {
        Dictionary(grouping: items, by: { $0 }).filter { $0.value.count > 1 }.keys.map(\.description).sorted()
    }

    static func sorted<Item: CustomStringConvertible>(_ items: Set<Item>) -> [String] { items.map(\.description).sorted() }

    @Test("the table lists every operation once, and only the contract's")
    func tableIsTheContract() throws {
        let table = API.all
        #expect(Self.duplicates(table).isEmpty, "listed twice: \(Self.duplicates(table))")
        let contract = Set(try Self.contractOperations())
        let tableSet = Set(table)
        #expect(!tableSet.contains { Self.isSandbox($0.template) }, "the sandbox's emulators are not in the table")
        #expect(tableSet.subtracting(contract).isEmpty, "in the table, not in openapi.json: \(Self.sorted(tableSet.subtracting(contract)))")
        #expect(contract.subtracting(tableSet).isEmpty, "in openapi.json, not in the table: \(Self.sorted(contract.subtracting(tableSet)))")
    }

    @Test("a server registers exactly the table's routes, each once")
    func serverRoutesAreTheTable() async throws {
        try await TestServer.run(on: .sqlite, environment: ["CHORUS_METRICS_TOKEN": "metrics-token-for-the-table-test"]) { server in
            let routes = Self.registeredRoutes(server.app)
            #expect(Self.duplicates(routes).isEmpty, "registered twice: \(Self.duplicates(routes))")
            let registered = Set(routes)
            let table = Set(API.all.map(\.description))
            #expect(table.subtracting(registered).isEmpty, "in the table, not registered: \(Self.sorted(table.subtracting(registered)))")
            #expect(registered.subtracting(table).isEmpty, "registered, not in the table: \(Self.sorted(registered.subtracting(table)))")
        }
    }
}
