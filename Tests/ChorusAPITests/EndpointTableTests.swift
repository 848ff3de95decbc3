import Foundation
import Testing

@testable import ChorusAPI

/// The endpoint table (``API``) against the contract (`openapi/openapi.json`): the same operations outside the
/// sandbox's emulators, each listed once, with the contract's success status. (That a server registers exactly the
/// table's routes is `ChorusServerTests.EndpointTableTests`.)
@Suite struct EndpointTableTests {
    /// Whether `template` belongs to the sandbox's emulators, which are in the contract but not in the table.
    static func isSandbox(_ template: String) -> Bool { template == "/sandbox" || template.hasPrefix("/sandbox/") }

    /// The contract's operations outside the sandbox, as `GET /mobile/usage-stats`, with their 1xx–3xx statuses, sorted.
    static func contractOperations() throws -> [String: [Int]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let data = try Data(contentsOf: root.appendingPathComponent("openapi/openapi.json"))
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var operations: [String: [Int]] = [:]
        for (template, methods) in paths where !isSandbox(template) {
            for (method, operation) in methods {
                guard let method = EndpointMethod(rawValue: method.uppercased()) else { continue }
                let responses = ((operation as? [String: Any])?["responses"] as? [String: Any])?.keys ?? [String: Any]().keys
                operations["\(method.rawValue) \(template)"] = responses.compactMap { Int($0) }.filter { (100..<400).contains($0) }.sorted()
            }
        }
        return operations
    }

    @Test func theTableListsEveryOperationOfTheContractOnce() throws {
        let table = API.all.map(\.description)
        let twice = Dictionary(grouping: table, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        #expect(twice.isEmpty, "listed twice: \(twice)")
        let contract = Set(try Self.contractOperations().keys)
        #expect(Set(table).subtracting(contract).isEmpty, "in the table, not in openapi.json: \(Set(table).subtracting(contract).sorted())")
        #expect(contract.subtracting(table).isEmpty, "in openapi.json, not in the table: \(contract.subtracting(table).sorted())")
    }

    /// The table's success status is one of the contract's, and its first unless the endpoint answers two and the
    /// table names the other: a creation (201, beside 200 for a replay) or an upgrade (101).
    @Test func successStatusesAreTheContracts() throws {
        let contract = try Self.contractOperations()
        for endpoint in API.all {
            let successes = contract[endpoint.description] ?? []
            #expect(successes.contains(endpoint.successStatus), "\(endpoint): the contract's \(successes), the table's \(endpoint.successStatus)")
            if endpoint.successStatus != 201, endpoint.successStatus != 101 {
                #expect(successes.first == endpoint.successStatus, "\(endpoint): the contract's \(successes), the table's \(endpoint.successStatus)")
            }
        }
    }

    @Test func templatesFillTheirParameters() {
        #expect(API.Calls.call.path("CA1") == "/mobile/calls/CA1")
        #expect(API.Calls.cancelScheduledCall.path("7") == "/mobile/scheduled-calls/7")
        #expect(API.Auth.providerUsage.path() == "/me/usage")
        #expect(API.Messaging.removeMember.path("c1", "u1") == "/conversations/c1/members/u1")
        #expect(API.Messaging.acceptInvitation.path("i1") == "/invitations/i1/accept")
        #expect(API.Stories.retryIllustration.path("s1", "3") == "/stories/s1/illustrations/3/retry")
        #expect(API.Stories.file.path("heroes", "h1", "avatar.png") == "/stories/files/heroes/h1/avatar.png")
        #expect(API.Operations.consoleReportStatus.path("r1") == "/console/api/reports/r1/status")
        #expect(API.Operations.health.path() == "/health")
        // A missing parameter is an empty segment, never a trap.
        #expect(API.Calls.call.path() == "/mobile/calls/")
    }

    /// The voice-data DTOs, kept once in ChorusAPI, round-trip the contract's field names.
    @Test func voiceDataErasureUsesTheContractsNames() throws {
        let erased = VoiceDataErasure(recordings: 2, transcripts: 1, clonedVoice: true, generatedSpeech: 3)
        let data = try ChorusJSON.makeEncoder().encode(erased)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == ["recordings", "transcripts", "cloned_voice", "generated_speech"])
        #expect(try ChorusJSON.makeDecoder().decode(VoiceDataErasure.self, from: data) == erased)
    }
}
