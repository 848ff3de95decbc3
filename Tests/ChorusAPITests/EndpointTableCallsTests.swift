import Foundation
import Testing

@testable import ChorusAPI

/// The endpoint table's Auth, Calls and Purchases areas against the contract: every endpoint is listed once, and
/// its method, path template and success status are those of `openapi/openapi.json`.
@Suite struct EndpointTableCallsTests {
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

    static let areas: [(String, [AnyEndpoint])] = [
        ("Auth", API.Auth.endpoints), ("Calls", API.Calls.endpoints), ("Purchases", API.Purchases.endpoints),
    ]

    @Test func everyEndpointIsListedOnce() {
        let all = Self.areas.flatMap(\.1)
        #expect(Set(all).count == all.count, "duplicates: \(Dictionary(grouping: all, by: { $0 }).filter { $0.value.count > 1 }.keys)")
        #expect(API.Auth.endpoints.count == 5)
        #expect(API.Calls.endpoints.count == 24)
        #expect(API.Purchases.endpoints.count == 4)
    }

    @Test func everyEndpointIsAnOperationOfTheContract() throws {
        let contract = try Self.contractOperations()
        for (area, endpoints) in Self.areas {
            for endpoint in endpoints {
                let operation = contract[endpoint.template]?[endpoint.method.rawValue.lowercased()]
                #expect(operation != nil, "\(area): \(endpoint) is not in openapi.json")
            }
        }
    }

    @Test func successStatusesAreTheContracts() throws {
        let contract = try Self.contractOperations()
        let typed: [(AnyEndpoint, Int)] = [
            (API.Auth.register.erased, API.Auth.register.successStatus),
            (API.Auth.logout.erased, API.Auth.logout.successStatus),
            (API.Calls.makeCall.erased, API.Calls.makeCall.successStatus),
            (API.Calls.deleteTranscript.erased, API.Calls.deleteTranscript.successStatus),
            (API.Calls.createCustomScenario.erased, API.Calls.createCustomScenario.successStatus),
            (API.Calls.deleteCustomScenario.erased, API.Calls.deleteCustomScenario.successStatus),
            (API.Calls.createReport.erased, API.Calls.createReport.successStatus),
            (API.Calls.statusCallback.erased, API.Calls.statusCallback.successStatus),
            (API.Calls.machineDetection.erased, API.Calls.machineDetection.successStatus),
            (API.Calls.mediaStream.erased, API.Calls.mediaStream.successStatus),
            (API.Purchases.appStoreNotification.erased, API.Purchases.appStoreNotification.successStatus),
        ]
        for (endpoint, status) in typed {
            let statuses = contract[endpoint.template]?[endpoint.method.rawValue.lowercased()] ?? []
            let successes = statuses.compactMap(Int.init).filter { (100..<300).contains($0) }
            #expect(successes == [status], "\(endpoint): the contract's success statuses are \(successes), the table's \(status)")
        }
    }

    @Test func templatesFillTheirParameters() {
        #expect(API.Calls.call.path("CA1") == "/mobile/calls/CA1")
        #expect(API.Calls.deleteTranscript.path("CA1") == "/mobile/calls/CA1/transcript")
        #expect(API.Calls.cancelScheduledCall.path("7") == "/mobile/scheduled-calls/7")
        #expect(API.Auth.providerUsage.path() == "/me/usage")
    }
}
