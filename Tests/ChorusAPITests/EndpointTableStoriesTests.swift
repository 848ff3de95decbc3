import Foundation
import Testing

@testable import ChorusAPI

/// The endpoint table's Stories and Operations areas against the contract: every endpoint is listed once, and its
/// method, path template and success status are those of `openapi/openapi.json`.
@Suite struct EndpointTableStoriesTests {
    /// `paths` of the contract: template → method (lowercase) → response statuses.
    static func contractOperations() throws -> [String: [String: [String]]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("openapi/openapi.json"))
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        return paths.mapValues { operations in
            operations.compactMapValues { operation in
                ((operation as? [String: Any])?["responses"] as? [String: Any]).map { Array($0.keys) }
            }
        }
    }

    /// An endpoint with its success status.
    static func entry<Body, Answer>(_ endpoint: Endpoint<Body, Answer>) -> (AnyEndpoint, Int) {
        (endpoint.erased, endpoint.successStatus)
    }

    /// Every endpoint of both areas with its success status (the same endpoints as the areas' `endpoints`).
    static let typed: [(AnyEndpoint, Int)] = [
        entry(API.Stories.createHero), entry(API.Stories.heroes), entry(API.Stories.hero), entry(API.Stories.updateHero),
        entry(API.Stories.deleteHero), entry(API.Stories.generateAvatar), entry(API.Stories.voices), entry(API.Stories.events),
        entry(API.Stories.createCustomEvent), entry(API.Stories.customEvents), entry(API.Stories.deleteCustomEvent),
        entry(API.Stories.assist), entry(API.Stories.createStory), entry(API.Stories.library), entry(API.Stories.story),
        entry(API.Stories.deleteStory), entry(API.Stories.progress), entry(API.Stories.retryIllustration), entry(API.Stories.file),
        entry(API.Operations.health), entry(API.Operations.openAPI), entry(API.Operations.metrics), entry(API.Operations.playground),
        entry(API.Operations.asset), entry(API.Operations.consoleLoginPage), entry(API.Operations.consoleLogin),
        entry(API.Operations.consolePage), entry(API.Operations.consoleLogout), entry(API.Operations.consoleOverview),
        entry(API.Operations.consoleLive), entry(API.Operations.consoleAudit), entry(API.Operations.consoleUser),
        entry(API.Operations.consoleCall), entry(API.Operations.consoleStory), entry(API.Operations.consoleRevokeSessions),
        entry(API.Operations.consoleGrantCalls), entry(API.Operations.consoleRefundCall), entry(API.Operations.consoleRerunJob),
        entry(API.Operations.consoleReports), entry(API.Operations.consoleReportStatus), entry(API.Operations.consoleOptOuts),
        entry(API.Operations.consoleRemoveOptOut),
    ]

    @Test func everyEndpointIsListedOnce() {
        let all = API.Stories.endpoints + API.Operations.endpoints
        #expect(Set(all).count == all.count, "duplicates: \(Dictionary(grouping: all, by: { $0 }).filter { $0.value.count > 1 }.keys)")
        #expect(API.Stories.endpoints.count == 19)
        #expect(API.Operations.endpoints.count == 23)
        #expect(Set(Self.typed.map(\.0)) == Set(all))
    }

    @Test func everyEndpointIsAnOperationOfTheContract() throws {
        let contract = try Self.contractOperations()
        for endpoint in API.Stories.endpoints + API.Operations.endpoints {
            let operation = contract[endpoint.template]?[endpoint.method.rawValue.lowercased()]
            #expect(operation != nil, "\(endpoint) is not in openapi.json")
        }
    }

    /// The table's success status is the contract's first success (`/stories/files/…` also answers 206 to a range).
    @Test func successStatusesAreTheContracts() throws {
        let contract = try Self.contractOperations()
        for (endpoint, status) in Self.typed {
            let statuses = contract[endpoint.template]?[endpoint.method.rawValue.lowercased()] ?? []
            let successes = statuses.compactMap(Int.init).filter { (200..<400).contains($0) }.sorted()
            #expect(successes.first == status, "\(endpoint): the contract's success statuses are \(successes), the table's \(status)")
        }
    }

    @Test func templatesFillTheirParameters() {
        #expect(API.Stories.story.path("s1") == "/stories/s1")
        #expect(API.Stories.retryIllustration.path("s1", "3") == "/stories/s1/illustrations/3/retry")
        #expect(API.Stories.file.path("heroes", "h1", "avatar.png") == "/stories/files/heroes/h1/avatar.png")
        #expect(API.Operations.consoleReportStatus.path("r1") == "/console/api/reports/r1/status")
        #expect(API.Operations.health.path() == "/health")
    }
}
