import AsyncHTTPClient
import ChorusProviders
import Foundation
import Testing
import Vapor

@testable import ChorusSandbox

/// Everything the emulators keep once a call is over is bounded: the request log, the ended calls with their
/// recordings, and the records of closed Realtime sessions.
@Suite("Sandbox retention")
struct SandboxRetentionTests {
    // MARK: Request log

    @Test func requestLogKeepsTheNewestEntriesUnderItsCountCap() {
        let recorder = SandboxRecorder(capacity: 50)
        for index in 1...500 { recorder.recordMessage(path: "/media", connection: "CA1", text: "frame \(index)") }
        let kept = recorder.requests()
        #expect(kept.count == 50)
        #expect(kept.map(\.id) == Array(451...500))
        #expect(recorder.usage.entries == 50)
    }

    @Test func requestLogStaysUnderItsByteCapWhileWrittenConcurrently() async {
        let maximumBytes = 64 << 10
        let recorder = SandboxRecorder(capacity: 1_000_000, maximumBytes: maximumBytes)
        let text = String(repeating: "a", count: 1_000)
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for index in 0..<500 { recorder.recordMessage(path: "/media", connection: "CA\(writer)", text: "\(index) \(text)") }
                }
            }
        }
        let kept = recorder.requests()
        let bytes = kept.reduce(0) { $0 + SandboxRecorder.size(of: $1) }
        #expect(bytes <= maximumBytes)
        #expect(recorder.usage.bytes == bytes)
        // About 1.3 KB per entry: the log is full, not emptied.
        #expect(kept.count >= maximumBytes / 1_400)
        #expect(kept.map(\.id) == Array((4_001 - kept.count)...4_000))
        recorder.reset()
        #expect(recorder.usage.entries == 0 && recorder.usage.bytes == 0)
    }

    @Test func requestLogOfTheServicesHonoursItsCapsOverHTTP() async throws {
        let services = SandboxServices(
            twilio: SandboxTwilio(accountSID: "AC1", authToken: "retention-token", httpClient: .shared),
            appStore: try SandboxAppStore.ephemeral(bundleID: "app.chorus"), requestLogEntries: 5)
        let server = SandboxServer(services: services)
        try await server.start()
        do {
            let base = try #require(server.baseURL).absoluteString
            for _ in 0..<20 {
                let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + "/calls"), timeout: .seconds(10))
                #expect(response.status == .ok)
                _ = try await response.body.collect(upTo: 1 << 20)
            }
            let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: base + "/requests"), timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 1 << 20)
            let list = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
            let requests = try #require(list["requests"] as? [[String: Any]])
            #expect(requests.count == 5)
            #expect(requests.compactMap { $0["id"] as? Int } == Array(16...20))
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    // MARK: Ended calls

    @Test func endedCallsBeyondTheRetentionAreForgotten() async throws {
        let accountSID = "AC00000000000000000000000000000009"
        let authToken = "retention-token-0123"
        let twilio = SandboxTwilio(
            accountSID: accountSID, authToken: authToken, httpClient: .shared,
            timing: .init(ringDelay: .seconds(1), talkDuration: .seconds(1), timeScale: 0.01), defaultBehavior: .busy,
            retention: SandboxTwilio.Retention(endedCalls: 3))
        let server = SandboxServer(services: SandboxServices(twilio: twilio, appStore: try SandboxAppStore.ephemeral(bundleID: "app.chorus")))
        try await server.start()
        do {
            let base = try #require(server.baseURL).absoluteString
            // Twelve calls placed at once, all busy: they end concurrently.
            let sids = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        var request = HTTPClientRequest(url: base + "/2010-04-01/Accounts/\(accountSID)/Calls.json")
                        request.method = .POST
                        request.headers.add(name: "Authorization", value: "Basic " + Data("\(accountSID):\(authToken)".utf8).base64EncodedString())
                        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
                        let form = [("To", "+1415555\(String(format: "%04d", index))"), ("From", "+15550001111"), ("Url", "http://127.0.0.1:1/twiml")]
                        request.body = .bytes(ByteBuffer(string: TwilioFormEncoding.encode(form)))
                        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
                        let body = try await response.body.collect(upTo: 1 << 20)
                        let json = try #require(try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])
                        return try #require(json["sid"] as? String)
                    }
                }
                var sids: [String] = []
                for try await sid in group { sids.append(sid) }
                return sids
            }
            #expect(sids.count == 12)
            let deadline = ContinuousClock.now + .seconds(10)
            while twilio.calls().contains(where: { $0.status != "busy" }) || twilio.calls().count > 3, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            let kept = twilio.calls()
            #expect(kept.count == 3)
            #expect(kept.allSatisfy { $0.status == "busy" })
            #expect(sids.filter { twilio.call(sid: $0) == nil }.count == 9)
            #expect(twilio.state.withLockedValue { ($0.calls.count, $0.order.count, $0.ended.count) } == (3, 3, 3))
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }

    @Test func endedCallsAudioStaysUnderItsCapAndTheNewestCallIsKept() async throws {
        // Each call records about 1.2 s (9,600 μ-law bytes) before the bridge closes its stream: more than a third of
        // the cap, so three calls never fit.
        let cap = 12_000
        try await withStreamHarness(retention: SandboxTwilio.Retention(endedCalls: 100, audioBytes: cap)) { harness in
            var sids: [String] = []
            for index in 0..<3 {
                let sid = try await harness.createCall(to: "+1415555100\(index)", twiml: "/twiml?mode=close")
                #expect(await harness.twilio.waitUntilEnded(sid: sid, timeout: .seconds(10)) != nil)
                #expect((harness.twilio.recording(sid: sid)?.count ?? 0) > 4_000)
                sids.append(sid)
            }
            let kept = sids.filter { harness.twilio.call(sid: $0) != nil }
            #expect(harness.twilio.call(sid: sids[0]) == nil)
            #expect(kept.last == sids[2])
            let audio = kept.reduce(0) { $0 + (harness.twilio.recording(sid: $1)?.count ?? 0) + (harness.twilio.playedAudio(sid: $1)?.count ?? 0) }
            #expect(audio <= cap)
            #expect(harness.twilio.state.withLockedValue { $0.endedAudioBytes } == audio)
        }
    }

    @Test func theNewestCallAloneOverTheAudioCapIsKeptWithItsAudioCutToTheCap() async throws {
        // The call records about 1.2 s (9,600 bytes), far more than the cap: it is kept, its recording cut to fit.
        let cap = 2_000
        try await withStreamHarness(retention: SandboxTwilio.Retention(endedCalls: 100, audioBytes: cap)) { harness in
            let sid = try await harness.createCall(to: "+14155551010", twiml: "/twiml?mode=close")
            #expect(await harness.twilio.waitUntilEnded(sid: sid, timeout: .seconds(10)) != nil)
            #expect(harness.twilio.call(sid: sid) != nil)
            #expect(harness.twilio.recording(sid: sid)?.count == cap)
            #expect(harness.twilio.state.withLockedValue { $0.endedAudioBytes } == cap)
        }
    }

    @Test func aCallKeepsAtMostItsAudioCapOfRecordingAndPlayedAudio() async throws {
        // One second kept: the AI plays 3 s (the `barge` bridge) and the call lasts about 3.5 s.
        try await withStreamHarness(mediaStreams: SandboxTwilio.MediaStreamOptions(keptAudioSeconds: 1)) { harness in
            let sid = try await harness.createCall(to: "+14155552000", twiml: "/twiml?mode=barge")
            _ = try await harness.waitForConnection(sid)
            try await Task.sleep(for: .milliseconds(3_500))
            try await harness.hangUp(sid)
            #expect(await harness.twilio.waitUntilEnded(sid: sid, timeout: .seconds(10)) != nil)
            #expect(harness.twilio.recording(sid: sid)?.count == 8_000)
            #expect(harness.twilio.playedAudio(sid: sid)?.count == 8_000)
            #expect((harness.twilio.mediaStream(sid: sid)?.aiAudioPlayedMs ?? 0) > 1_000)
        }
    }

    // MARK: Realtime sessions

    @Test func closedRealtimeSessionsBeyondTheRetentionAreForgottenAndOpenOnesAreAlwaysListed() async throws {
        let realtime = SandboxRealtime(apiKey: RealtimeHarness.apiKey, behavior: .testing, keptSessions: 2)
        let services = SandboxServices(
            twilio: SandboxTwilio(accountSID: "AC1", authToken: "sandbox-token-for-retention-tests", httpClient: .shared),
            appStore: try SandboxAppStore.ephemeral(bundleID: "app.chorus"), realtime: realtime)
        let server = SandboxServer(services: services)
        try await server.start()
        do {
            let url = "ws://127.0.0.1:\(try #require(server.port))/openai/v1/realtime?model=gpt-realtime"
            // Four sessions open at once: all listed, though only two closed ones are kept.
            var clients: [RealtimeTestClient] = []
            for _ in 0..<4 {
                let client = try await RealtimeTestClient.connect(to: url, key: RealtimeHarness.apiKey)
                _ = try await client.next("session.created")
                clients.append(client)
            }
            #expect(realtime.sessions().count == 4)
            let ids = realtime.sessions().map(\.id)
            // Once closed, a session's connection (its conversation, buffers and socket) is freed, not only unlisted.
            weak var connection = realtime.state.withLockedValue { $0.open.values.first }
            #expect(connection != nil)
            for client in clients { try await client.close() }
            let deadline = ContinuousClock.now + .seconds(5)
            while realtime.openSessionCount > 0 || realtime.sessions().count > 2 || connection != nil, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(connection == nil)
            let kept = realtime.sessions()
            #expect(kept.count == 2)
            #expect(kept.allSatisfy { !$0.isOpen })
            #expect(Set(kept.map(\.id)).isSubset(of: Set(ids)))
            // More sessions, one after the other: still the two newest.
            var newest: [String] = []
            for _ in 0..<3 {
                let client = try await RealtimeTestClient.connect(to: url, key: RealtimeHarness.apiKey)
                _ = try await client.next("session.created")
                newest.append(try #require(realtime.sessions().last?.id))
                try await client.close()
                while realtime.openSessionCount > 0, ContinuousClock.now < deadline + .seconds(5) { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(realtime.sessions().map(\.id) == Array(newest.suffix(2)))
        } catch {
            try? await server.shutdown()
            throw error
        }
        try await server.shutdown()
    }
}
