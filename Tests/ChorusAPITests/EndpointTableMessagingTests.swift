import Foundation
import Testing

@testable import ChorusAPI

/// The endpoint table's Messaging area against the contract: every endpoint is listed once, and its method, path
/// template and success status are those of `openapi/openapi.json`.
@Suite struct EndpointTableMessagingTests {
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

    typealias M = API.Messaging

    /// Every endpoint of the area with its success status.
    static let statuses: [(AnyEndpoint, Int)] = [
        (M.profile.erased, M.profile.successStatus), (M.updateProfile.erased, M.updateProfile.successStatus),
        (M.exportVoiceData.erased, M.exportVoiceData.successStatus), (M.eraseVoiceData.erased, M.eraseVoiceData.successStatus),
        (M.createConversation.erased, M.createConversation.successStatus), (M.conversations.erased, M.conversations.successStatus),
        (M.conversation.erased, M.conversation.successStatus), (M.addMembers.erased, M.addMembers.successStatus),
        (M.removeMember.erased, M.removeMember.successStatus), (M.markRead.erased, M.markRead.successStatus),
        (M.invitations.erased, M.invitations.successStatus), (M.acceptInvitation.erased, M.acceptInvitation.successStatus),
        (M.declineInvitation.erased, M.declineInvitation.successStatus), (M.blockInviter.erased, M.blockInviter.successStatus),
        (M.messages.erased, M.messages.successStatus), (M.sendMessage.erased, M.sendMessage.successStatus),
        (M.searchMessages.erased, M.searchMessages.successStatus), (M.editMessage.erased, M.editMessage.successStatus),
        (M.deleteMessage.erased, M.deleteMessage.successStatus), (M.markHeard.erased, M.markHeard.successStatus),
        (M.star.erased, M.star.successStatus), (M.unstar.erased, M.unstar.successStatus), (M.speech.erased, M.speech.successStatus),
        (M.uploadAudio.erased, M.uploadAudio.successStatus), (M.audio.erased, M.audio.successStatus),
        (M.transcribe.erased, M.transcribe.successStatus), (M.speechAudio.erased, M.speechAudio.successStatus),
        (M.createVoiceProfile.erased, M.createVoiceProfile.successStatus), (M.voiceProfile.erased, M.voiceProfile.successStatus),
        (M.deleteVoiceProfile.erased, M.deleteVoiceProfile.successStatus), (M.defaultVoices.erased, M.defaultVoices.successStatus),
        (M.summary.erased, M.summary.successStatus), (M.storedSummary.erased, M.storedSummary.successStatus),
        (M.playback.erased, M.playback.successStatus), (M.digest.erased, M.digest.successStatus),
        (M.setDigest.erased, M.setDigest.successStatus), (M.realtime.erased, M.realtime.successStatus),
    ]

    @Test func everyEndpointIsListedOnce() {
        let all = M.endpoints
        #expect(Set(all).count == all.count, "duplicates: \(Dictionary(grouping: all, by: { $0 }).filter { $0.value.count > 1 }.keys)")
        #expect(all.count == 37)
        #expect(Set(all) == Set(Self.statuses.map(\.0)))
    }

    @Test func everyEndpointIsAnOperationOfTheContract() throws {
        let contract = try Self.contractOperations()
        for endpoint in M.endpoints {
            #expect(contract[endpoint.template]?[endpoint.method.rawValue.lowercased()] != nil, "\(endpoint) is not in openapi.json")
        }
    }

    /// The table's success status is one of the contract's (some answer two: 200 or 201 for a replay, 200 or 206 for a
    /// range), and the first of them unless the endpoint creates (201) or upgrades (101).
    @Test func successStatusesAreTheContracts() throws {
        let contract = try Self.contractOperations()
        for (endpoint, status) in Self.statuses {
            let statuses = contract[endpoint.template]?[endpoint.method.rawValue.lowercased()] ?? []
            let successes = statuses.compactMap(Int.init).filter { (100..<300).contains($0) }.sorted()
            #expect(successes.contains(status), "\(endpoint): the contract's success statuses are \(successes), the table's \(status)")
            if status != 201, status != 101 { #expect(successes.first == status, "\(endpoint): \(successes) vs \(status)") }
        }
    }

    @Test func templatesFillTheirParameters() {
        #expect(M.removeMember.path("c1", "u1") == "/conversations/c1/members/u1")
        #expect(M.storedSummary.path("c1", "s1") == "/conversations/c1/summaries/s1")
        #expect(M.speech.path("m1") == "/messages/m1/speech")
        #expect(M.acceptInvitation.path("i1") == "/invitations/i1/accept")
        #expect(M.realtime.path() == "/ws")
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
