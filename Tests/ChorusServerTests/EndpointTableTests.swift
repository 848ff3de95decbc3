import ChorusAPI
import Foundation
import Testing
import Vapor

@testable import ChorusServer

/// A running server registers exactly the routes of the endpoint table (``API``), each once; the sandbox's emulators
/// (`/sandbox/**`) are mounted beside the API. (The table against the contract is `ChorusAPITests.EndpointTableTests`.)
@Suite("Endpoint table")
struct EndpointTableTests {
    /// Whether `template` belongs to the sandbox's emulators rather than the API.
    static func isSandbox(_ template: String) -> Bool { template == "/sandbox" || template.hasPrefix("/sandbox/") }

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
