import ChorusAPI
import ChorusSandbox
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusServer

/// Numbers from outside that used to end the server with a trap (issue 16): each request is sent as a client, a
/// signed App Store payload or a sandbox control would send it, and the server must answer it and keep answering.
@Suite("Numbers from outside")
struct NumericInputTests {
    /// A minimal M4A: an `ftyp` box and a `moov` box holding a version-1 `mvhd` with `timescale` and `duration`.
    static func m4a(timescale: UInt32, duration: UInt64) -> Data {
        func be32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        func be64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }
        let ftyp = be32(20) + Array("ftypM4A ".utf8) + be32(0) + Array("M4A ".utf8)
        // mvhd version 1: version and flags, creation and modification times (8 bytes each), timescale, duration.
        let content: [UInt8] = [1, 0, 0, 0] + be64(0) + be64(0) + be32(timescale) + be64(duration)
        let mvhd = be32(UInt32(8 + content.count)) + Array("mvhd".utf8) + content
        let moov = be32(UInt32(8 + mvhd.count)) + Array("moov".utf8) + mvhd
        return Data(ftyp + moov)
    }

    @Test("an M4A whose mvhd claims 2^63 − 1 seconds is a 422, not a trap in the message", arguments: TestDatabase.all)
    func absurdRecordingDuration(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let alice = try await MessagingTests.person(server, name: "alice")
            for (timescale, duration) in [(UInt32(1), UInt64(Int64.max)), (1, UInt64(Int64.max) - 1_000), (1_000, UInt64(Int64.max))] {
                let reply = try await server.request(
                    .POST, "/audio", token: alice.token, body: Self.m4a(timescale: timescale, duration: duration),
                    headers: [("Content-Type", "audio/mp4")])
                #expect(reply.status == 422, "\(reply.text)")
                #expect(reply.detail?.hasPrefix("Recordings are limited to") == true, "\(reply.text)")
            }
            // A sane recording of the same shape is still read (one second).
            let second = try await server.request(
                .POST, "/audio", token: alice.token, body: Self.m4a(timescale: 1_000, duration: 1_000), headers: [("Content-Type", "audio/mp4")])
            #expect(second.status == 201, "\(second.text)")
            #expect(try second.decode(AudioUploadResponse.self).durationSeconds == 1)
        }
    }

    @Test("a signed transaction expiring at Int64.max milliseconds is stored as 9999-12-31, not trapped on", arguments: TestDatabase.all)
    func farFutureTransactionDates(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let token = try await server.register().accessToken
            // What Apple would sign if a transaction carried the largest millisecond count: the sandbox's genuine
            // transaction, its expiry replaced, signed again by the authority the server trusts outside production.
            let genuine = try await server.sandboxTransaction(productID: PurchasesTests.basic)
            var payload = try CompactJWS.payload(genuine.signedTransaction)
            payload["expiresDate"] = NSNumber(value: Int64.max)
            let authority = try AppStoreTestAuthority.loadOrCreate(directory: server.configuration.dataDirectory)
            let forged = try authority.sign(payload: try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]))

            let bought = try await server.request(
                .POST, "/mobile/purchase-subscription", token: token,
                json: PurchaseRequest(productID: PurchasesTests.basic, signedTransaction: forged))
            #expect(bought.status == 200, "\(bought.text)")
            let status = try await PurchasesTests.status(server, token)
            #expect(status.subscriptionStatus == "active")
            let end = try #require(status.subscriptionEndDate)
            #expect(ChorusJSON.formatDate(end) == "9999-12-31T23:59:59Z")
            // The server is still there for the next request.
            #expect(try await server.permission(token).canMakeCall)
        }
    }

    @Test("sandbox controls refuse durations that would overflow a timer (hangup 1e300 s, speed 1e-300, delays of Int.max ms)")
    func sandboxControlBounds() async throws {
        try await TestServer.run(on: .sqlite) { server in
            func put(_ path: String, _ json: String) async throws -> TestServer.Reply {
                try await server.request(.PUT, path, body: Data(json.utf8), headers: [("Content-Type", "application/json")])
            }
            let callee = "/sandbox/callees/%2B15550001616"
            for (json, field) in [
                (#"{"hangup_after_seconds": 1e300}"#, "hangup_after_seconds"), (#"{"talk_seconds": 9223372036854775807}"#, "talk_seconds"),
                (#"{"reply_after_ms": 9223372036854775807}"#, "reply_after_ms"),
                (#"{"first_line_after_ms": 9223372036854775807}"#, "first_line_after_ms"),
                (#"{"interrupt_after_ms": 9223372036854775807}"#, "interrupt_after_ms"),
            ] {
                let reply = try await put(callee, json)
                #expect(reply.status == 400, "\(json): \(reply.text)")
                #expect(reply.detail?.hasPrefix("\(field) must be between 0 and") == true, "\(json): \(reply.text)")
            }
            let longest = try await put(callee, #"{"hangup_after_seconds": 86400}"#)
            #expect((200..<300).contains(longest.status), "\(longest.text)")

            let behavior = "/sandbox/openai/realtime/behavior"
            for (json, field) in [
                (#"{"speed": 1e-300}"#, "speed"), (#"{"first_audio_delay_ms": 9223372036854775807}"#, "first_audio_delay_ms"),
                (#"{"fail_after_ms": 9223372036854775807}"#, "fail_after_ms"),
            ] {
                let reply = try await put(behavior, json)
                #expect(reply.status == 400, "\(json): \(reply.text)")
                #expect(reply.detail?.hasPrefix("\(field) must be between") == true, "\(json): \(reply.text)")
            }
            let bounds = try await put(behavior, #"{"speed": 0.01, "first_audio_delay_ms": 600000, "fail_after_ms": 3600000}"#)
            #expect((200..<300).contains(bounds.status), "\(bounds.text)")
        }
    }

    @Test("configuration durations that could not become timers or integers are refused at startup")
    func configurationBounds() throws {
        for (key, value) in [
            ("CHORUS_ACCESS_TOKEN_TTL", "1e300"), ("CHORUS_REFRESH_TOKEN_TTL", "1e19"), ("CHORUS_SANDBOX_RING_SECONDS", "1e300"),
            ("CHORUS_SANDBOX_TALK_SECONDS", "86401"), ("CHORUS_JOB_POLL_SECONDS", "1e300"), ("CHORUS_RATE_LIMITS", "user=5/1e300"),
            ("CHORUS_ACCESS_TOKEN_TTL", "inf"), ("CHORUS_SANDBOX_RING_SECONDS", "nan"), ("CHORUS_JOB_LEASE_SECONDS", "2"),
            ("CHORUS_JOB_LEASE_SECONDS", "1e300"),
        ] {
            #expect(throws: ConfigurationError.self, "\(key)=\(value)") { try ChorusConfiguration.load(from: LoopbackServer.baseEnvironment.merging([key: value]) { $1 }) }
        }
        let longest = try ChorusConfiguration.load(
            from: LoopbackServer.baseEnvironment.merging([
                "CHORUS_ACCESS_TOKEN_TTL": "315360000", "CHORUS_SANDBOX_RING_SECONDS": "3600", "CHORUS_SANDBOX_TALK_SECONDS": "86400",
                "CHORUS_JOB_POLL_SECONDS": "3600", "CHORUS_RATE_LIMITS": "user=5/86400", "CHORUS_JOB_LEASE_SECONDS": "3600",
            ]) { $1 })
        #expect(longest.accessTokenLifetime == 315_360_000 && longest.jobPollInterval == 3_600 && longest.jobLease == 3_600)
        #expect(try ChorusConfiguration.load(from: LoopbackServer.baseEnvironment).jobLease == 120)
    }

    @Test("a signed CallDuration of Int.max is held as a day, so the usage sums still add up", arguments: TestDatabase.all)
    func absurdCallDurations(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, sandboxTimeScale: LoopbackServer.fastCalls) { server in
            let token = try await server.register().accessToken
            // The emulator drops its own callbacks: the only status the server gets is the one sent here.
            try await server.setCallee("+14155550616", behavior: "answer", talkSeconds: 1, callbacks: false)
            let validator = server.app.chorus.twilioSignatures
            for _ in 0..<2 {
                let placed = try await server.makeCall(token, to: "+14155550616").decode(MakeCallResponse.self)
                let callID = try await server.request(.GET, "/mobile/calls/\(placed.callSid)", token: token).decode(CallHistoryItem.self).id
                let url = server.configuration.publicURL.absoluteString + "/call-end-webhook?call_id=\(callID)"
                let params = [("CallSid", placed.callSid), ("CallStatus", "completed"), ("CallDuration", "9223372036854775807")]
                let reply = try await server.request(
                    .POST, "/call-end-webhook?call_id=\(callID)", form: params.map { "\($0.0)=\($0.1)" }.joined(separator: "&"),
                    headers: [("X-Twilio-Signature", validator.signature(url: url, parameters: params))])
                #expect(reply.status == 204, "\(reply.text)")
                let item = try await server.request(.GET, "/mobile/calls/\(placed.callSid)", token: token).decode(CallHistoryItem.self)
                #expect(item.status == "completed" && item.durationSeconds == 86_400)
            }
            // Two durations of Int.max overflowed SUM in SQL (500); two days add up.
            let usage = try await server.usage(token)
            #expect(usage.totalCallDurationThisWeek == 2 * 86_400 && usage.totalCallDurationThisMonth == 2 * 86_400)
        }
    }

    @Test("the chorus command refuses a ring time and a subscription period no timer or date can hold (1e300 trapped)")
    func commandLineBounds() throws {
        let directory = try CLITests.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let ring = try CLITests.run(["sandbox", "--ring-seconds", "1e300"], environment: [:], in: directory)
        #expect(ring.status != 0 && ring.output.contains("--ring-seconds must be between 0 and 3600"), "\(ring.output)")
        let purchase = try CLITests.runSplit(
            [
                "sandbox", "appstore", "purchase", "--user", "buyer@example.com", "--product", "speech_assistant_basic_weekly",
                "--period-seconds", "1e300",
            ],
            environment: ["CHORUS_DATA_DIR": directory.path], in: directory)
        #expect(purchase.status == 1, "\(purchase.stderr)")
        #expect(purchase.stderr.contains("--period-seconds must be positive and at most 316224000"), "\(purchase.stderr)")
    }
}
