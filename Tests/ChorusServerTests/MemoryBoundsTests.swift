import ChorusAPI
import ChorusServer
import Foundation
import Testing

/// What a long-running server keeps per call is bounded: the embedded emulators keep at most the configured number of
/// ended calls and request-log entries, however many calls are placed.
@Suite("Memory bounds")
struct MemoryBoundsTests {
    @Test("configuration: the sandbox's retention limits, their defaults and malformed values")
    func retentionConfiguration() throws {
        let defaults = try ChorusConfiguration.load(from: [:]).sandboxRetention
        #expect(defaults.requestLogEntries == 2_000 && defaults.requestLogBytes == 4 << 20)
        #expect(defaults.keptCalls == 100 && defaults.keptAudioBytes == 32 << 20)
        let configured = try ChorusConfiguration.load(from: [
            "CHORUS_SANDBOX_REQUEST_LOG_ENTRIES": "10", "CHORUS_SANDBOX_REQUEST_LOG_BYTES": "4096", "CHORUS_SANDBOX_KEPT_CALLS": "3",
            "CHORUS_SANDBOX_KEPT_AUDIO_BYTES": "65536",
        ]).sandboxRetention
        #expect(configured.requestLogEntries == 10 && configured.requestLogBytes == 4_096)
        #expect(configured.keptCalls == 3 && configured.keptAudioBytes == 65_536)
        for key in ["CHORUS_SANDBOX_REQUEST_LOG_ENTRIES", "CHORUS_SANDBOX_REQUEST_LOG_BYTES", "CHORUS_SANDBOX_KEPT_CALLS", "CHORUS_SANDBOX_KEPT_AUDIO_BYTES"] {
            for value in ["0", "-1", "many", "99999999999999999999999"] {
                #expect(throws: ConfigurationError.self, "\(key)=\(value)") { try ChorusConfiguration.load(from: [key: value]) }
            }
        }
    }

    @Test("the embedded emulators keep at most the configured ended calls and request-log entries", arguments: TestDatabase.all)
    func embeddedSandboxIsBounded(_ database: TestDatabase) async throws {
        let environment = ["CHORUS_SANDBOX_KEPT_CALLS": "2", "CHORUS_SANDBOX_REQUEST_LOG_ENTRIES": "5"]
        try await TestServer.run(on: database, environment: environment) { server in
            let token = try await server.register().accessToken
            var sids: [String] = []
            for index in 0..<4 {
                let number = "+1415555020\(index)"
                try await server.setCallee(number, behavior: "busy")
                let placed = try await server.request(
                    .POST, "/test/test-call", token: token, json: MakeCallRequest(phoneNumber: number, scenario: "default"))
                #expect(placed.status == 200, "test-call: \(placed.text)")
                let sid = try placed.decode(MakeCallResponse.self).callSid
                _ = try await server.waitForEnd(token, sid: sid)
                sids.append(sid)
            }
            // The server keeps its own history of every call; the emulator only the last two.
            #expect(try await server.history(token).callHistory.count == 4)
            try await server.eventually("the emulator forgets the oldest calls") {
                let calls = try await server.request(.GET, "/sandbox/calls").json["calls"] as? [[String: Any]] ?? []
                return calls.compactMap { $0["sid"] as? String } == Array(sids.suffix(2))
            }
            // The Realtime sessions opened while the calls rang are closed records now: two are kept.
            try await server.eventually("the emulator forgets the oldest Realtime sessions") {
                let sessions = try await server.request(.GET, "/sandbox/openai/realtime/sessions").json["sessions"] as? [[String: Any]] ?? []
                return sessions.count <= 2 && sessions.allSatisfy { !($0["closed_at"] is NSNull) && $0["closed_at"] != nil }
            }
            let requests = try await server.request(.GET, "/sandbox/requests").json["requests"] as? [[String: Any]] ?? []
            #expect(requests.count == 5)
        }
    }
}
