import ChorusAPI
import ChorusCore
import ChorusSandbox
import Foundation
import SQLKit
import Testing

@testable import ChorusServer

/// Issue 16 §2, denial of wallet: stored transcriptions and summaries, per-product budgets and per-user daily
/// operations refused before any provider call (also under concurrency), the global daily cap on trial calls and
/// signups limited per address and network.
@Suite("Spend limits")
struct SpendLimitTests {
    /// The requests the sandbox providers received whose path contains `path`.
    static func providerRequests(_ server: TestServer, _ path: String, bodyContains: String? = nil) async throws -> Int {
        let requests = try await server.request(.GET, "/sandbox/requests").json["requests"] as? [[String: Any]] ?? []
        return requests.filter { request in
            guard (request["path"] as? String)?.contains(path) == true else { return false }
            guard let bodyContains else { return true }
            return (request["body"] as? String)?.contains(bodyContains) == true
        }.count
    }

    static func upload(_ server: TestServer, _ person: MessagingTests.Person, text: String) async throws -> AudioUploadResponse {
        let recording = SandboxAudioFiles.speechWAV(text: text, voice: "alice")
        let reply = try await server.request(.POST, "/audio", token: person.token, body: recording, headers: [("Content-Type", "audio/wav")])
        #expect(reply.status == 201, "\(reply.text)")
        return try reply.decode(AudioUploadResponse.self)
    }

    static func transcribe(
        _ server: TestServer, _ person: MessagingTests.Person, _ audioID: String, language: String? = nil
    ) async throws -> TestServer.Reply {
        try await server.request(.POST, "/transcriptions", token: person.token, json: TranscriptionRequestDTO(audioID: audioID, language: language))
    }

    /// Seconds until the next UTC midnight as the server computes it, give or take the test's own duration.
    static func expectRetryAfterNextDay(_ reply: TestServer.Reply, _ what: String) {
        let retryAfter = reply.headers.first(name: "Retry-After").flatMap(Int.init) ?? -1
        let expected = UTCBoundary.secondsUntilNext(.day, after: Date())
        #expect(abs(retryAfter - expected) <= 120 && retryAfter > 0, "\(what): Retry-After \(retryAfter), expected about \(expected)")
    }

    @Test("a recording is transcribed once per language; concurrent requests make one provider call", arguments: TestDatabase.all)
    func transcriptionsAreStored(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_VOICE_URGENCY": "keywords"]) { server in
            let alice = try await MessagingTests.person(server, name: "alice")
            let said = "Pick up Emma from soccer at five, please."
            let audio = try await Self.upload(server, alice, text: said)
            let first = try await Self.transcribe(server, alice, audio.audioID)
            #expect(first.status == 200, "\(first.text)")
            for _ in 0..<3 {
                let again = try await Self.transcribe(server, alice, audio.audioID)
                #expect(try again.status == 200 && again.decode(TranscriptionResponse.self) == first.decode(TranscriptionResponse.self))
                #expect(again.headers.first(name: "Server-Timing") == "provider;dur=0.0")
            }
            #expect(try await Self.providerRequests(server, "audio/transcriptions") == 1)
            // Another language is another transcription, once.
            for _ in 0..<2 { #expect(try await Self.transcribe(server, alice, audio.audioID, language: "fr").status == 200) }
            #expect(try await Self.providerRequests(server, "audio/transcriptions") == 2)

            // Twelve concurrent requests for a new recording: one provider call, one transcript for all.
            let other = try await Self.upload(server, alice, text: "Dinner is at seven tonight.")
            let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for _ in 0..<12 { group.addTask { try await Self.transcribe(server, alice, other.audioID) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.allSatisfy { $0.status == 200 }, "\(replies.map(\.status))")
            #expect(Set(replies.compactMap { try? $0.decode(TranscriptionResponse.self).transcript }) == ["Dinner is at seven tonight."])
            #expect(try await Self.providerRequests(server, "audio/transcriptions") == 3)

            // Erasing the voice data erases the stored transcripts with their recordings.
            func stored() async throws -> Int {
                try await (server.app.db as! any SQLDatabase).raw("SELECT COUNT(*) AS n FROM audio_transcripts").first()?
                    .decode(column: "n", as: Int.self) ?? -1
            }
            #expect(try await stored() == 3)
            #expect(try await server.request(.DELETE, "/me/voice-data", token: alice.token).status == 200)
            #expect(try await stored() == 0)
        }
    }

    @Test("the user's daily operations: 8 concurrent transcriptions, 3 allowed, 3 provider calls", arguments: TestDatabase.all)
    func userDailyOperations(_ database: TestDatabase) async throws {
        let environment = ["CHORUS_VOICE_USER_DAILY_OPERATIONS": "3", "CHORUS_VOICE_URGENCY": "keywords"]
        try await TestServer.run(on: database, environment: environment) { server in
            let alice = try await MessagingTests.person(server, name: "alice")
            var recordings: [String] = []
            for index in 0..<8 { recordings.append(try await Self.upload(server, alice, text: "Message number \(index).").audioID) }
            let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for id in recordings { group.addTask { try await Self.transcribe(server, alice, id) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.filter { $0.status == 200 }.count == 3, "\(replies.map(\.status))")
            let refused = replies.filter { $0.status == 429 }
            #expect(refused.count == 5)
            for reply in refused {
                #expect(reply.detail == "You've reached today's limit of 3 voice operations. Try again tomorrow.", "\(reply.text)")
                Self.expectRetryAfterNextDay(reply, "429")
            }
            #expect(try await Self.providerRequests(server, "audio/transcriptions") == 3)
            // Another user has their own operations.
            let bob = try await MessagingTests.person(server, name: "bob")
            let bobs = try await Self.upload(server, bob, text: "Bob's own message.")
            #expect(try await Self.transcribe(server, bob, bobs.audioID).status == 200)
        }
    }

    @Test("the voice budget: 8 concurrent transcriptions by 8 users, 3 fit, 3 provider calls", arguments: TestDatabase.all)
    func productBudget(_ database: TestDatabase) async throws {
        // gpt-transcribe (the default) at $0.0045 a minute, billed by the whole second: the budget holds three and a half
        // estimates of these recordings.
        let text = "Please bring the blue folder to school tomorrow."
        let seconds = SandboxAudioFiles.durationSeconds(of: SandboxAudioFiles.speechWAV(text: text, voice: "alice")) ?? 0
        let estimate = PriceTable.standard.transcriptionCostMicrodollars(
            model: "gpt-transcribe", seconds: ((seconds * 1_000).rounded() / 1_000).rounded(.up))
        #expect(estimate > 10)
        let budget = estimate * 3 + estimate / 2
        let environment = [
            "CHORUS_VOICE_DAILY_BUDGET_USD": String(format: "%.6f", Double(budget) / 1_000_000), "CHORUS_VOICE_URGENCY": "keywords",
        ]
        try await TestServer.run(on: database, environment: environment) { server in
            var people: [(MessagingTests.Person, String)] = []
            for index in 0..<8 {
                let person = try await MessagingTests.person(server, name: "user\(index)")
                people.append((person, try await Self.upload(server, person, text: text).audioID))
            }
            let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for (person, audioID) in people { group.addTask { try await Self.transcribe(server, person, audioID) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let statuses = replies.map(\.status)
            #expect(statuses.filter { $0 == 200 }.count == 3, "\(statuses)")
            let refused = replies.filter { reply in reply.status == 503 }
            #expect(refused.count == 5, "\(statuses) \(refused.map(\.status))")
            for reply in refused {
                #expect(reply.detail == "This feature has reached its daily spending limit. Please try again later.", "\(reply.status) \(reply.text)")
                Self.expectRetryAfterNextDay(reply, "503")
            }
            #expect(try await Self.providerRequests(server, "audio/transcriptions") == 3)
            // What was metered: three transcriptions, within the budget.
            var calls = 0
            var spent: Int64 = 0
            for (person, _) in people {
                let report = try await server.request(.GET, "/me/usage", token: person.token).decode(ProviderUsageReport.self)
                for item in report.features.flatMap(\.items) where item.operation == "transcription" {
                    calls += item.calls
                    spent += item.usdMicros
                }
            }
            #expect(calls == 3 && spent <= budget, "\(calls) calls, \(spent) of \(budget)")
        }
    }

    @Test("summaries: any selection of the same messages is answered from storage; a daily limit per user", arguments: TestDatabase.all)
    func summaries(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_VOICE_DAILY_SUMMARIES": "1", "CHORUS_VOICE_URGENCY": "keywords"]) { server in
            let alice = try await MessagingTests.person(server, name: "alice")
            let bob = try await MessagingTests.person(server, name: "bob")
            let conversation = try await server.request(
                .POST, "/conversations", token: alice.token, json: CreateConversationRequest(kind: "direct", memberEmails: [bob.email])
            ).decode(ConversationDTO.self)
            let start = Date().addingTimeInterval(-5)
            for index in 0..<20 { _ = try await MessagingTests.send(server, alice, to: conversation.id, text: "Plan item \(index): bring snacks.") }
            func summary(_ body: SummaryRequest) async throws -> TestServer.Reply {
                try await server.request(.POST, "/conversations/\(conversation.id)/summary", token: alice.token, json: body)
            }
            // Six identical requests at once: one generation (the daily limit of 1 would refuse a second), one answer.
            let firsts = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for _ in 0..<6 { group.addTask { try await summary(SummaryRequest(last: 20)) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(firsts.map(\.status) == Array(repeating: 200, count: 6), "\(firsts.map(\.text))")
            #expect(Set(try firsts.map { try $0.decode(SummaryResponse.self).summaryID }).count == 1)
            let first = firsts[0]
            // `since` before the first message covers the same twenty messages: the stored summary, no second call.
            let same = try await summary(SummaryRequest(since: start))
            #expect(same.status == 200, "\(same.text)")
            #expect(try same.decode(SummaryResponse.self).cached && same.decode(SummaryResponse.self).summaryID == first.decode(SummaryResponse.self).summaryID)
            #expect(try await summary(SummaryRequest(last: 20)).decode(SummaryResponse.self).cached)
            #expect(try await Self.providerRequests(server, "chat/completions", bodyContains: ConversationSummary.schemaName) == 1)
            // A new message makes another selection: Alice's one summary of the day is used.
            _ = try await MessagingTests.send(server, alice, to: conversation.id, text: "One more thing: the bus leaves at eight.")
            let refused = try await summary(SummaryRequest(last: 20))
            #expect(refused.status == 429, "\(refused.text)")
            #expect(refused.detail?.contains("today's limit of 1 summaries") == true)
            Self.expectRetryAfterNextDay(refused, "429")
            #expect(try await Self.providerRequests(server, "chat/completions", bodyContains: ConversationSummary.schemaName) == 1)
        }
    }

    @Test("stories: each story is one of the user's daily operations, 5 concurrent stories against room for 2", arguments: TestDatabase.all)
    func storyOperations(_ database: TestDatabase) async throws {
        let environment = StoriesTests.environment.merging(["CHORUS_STORIES_USER_DAILY_OPERATIONS": "2"]) { $1 }
        try await TestServer.run(on: database, environment: environment) { server in
            let parent = try await MessagingTests.person(server, name: "parent")
            let hero = try await StoriesTests.hero(server, parent)
            let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for _ in 0..<5 {
                    group.addTask {
                        try await server.request(
                            .POST, "/stories", token: parent.token,
                            json: CreateStoryRequest(
                                heroID: hero.id, eventID: "birthday", lengthMinutes: 1, language: "en", voice: "nova", illustrationCount: 0))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let statuses = replies.map(\.status)
            #expect(statuses.filter { $0 == 202 }.count == 2, "\(statuses)")
            let refused = replies.filter { reply in reply.status == 429 }
            #expect(refused.count == 3, "\(statuses)")
            for reply in refused {
                #expect(reply.detail == "You've reached today's limit of 2 story operations. Try again tomorrow.", "\(reply.text)")
                Self.expectRetryAfterNextDay(reply, "429")
            }
            // The two admitted stories finish: their own provider calls are not refused by the limit.
            let accepted = try replies.filter { $0.status == 202 }.map { try $0.decode(StoryAcceptedDTO.self).id }
            for id in accepted {
                try await server.eventually(timeout: .seconds(40), "story \(id) is finished") {
                    StoriesTests.finished(try await StoriesTests.story(server, parent, id))
                }
                #expect(try await StoriesTests.story(server, parent, id).stages.narration == "succeeded")
            }
            // The refused ones made no story at all.
            let list = try await server.request(.GET, "/stories", token: parent.token)
            #expect((list.json["stories"] as? [Any])?.count == 2, "\(list.text)")
        }
    }

    @Test("trial calls: a daily cap across all accounts, 6 concurrent trial calls by 6 accounts, 2 placed", arguments: TestDatabase.all)
    func trialCallsPerDay(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_TRIAL_CALLS_PER_DAY": "2"]) { server in
            var tokens: [String] = []
            for _ in 0..<6 { tokens.append(try await server.register().accessToken) }
            let replies = try await withThrowingTaskGroup(of: TestServer.Reply.self) { group in
                for (index, token) in tokens.enumerated() {
                    group.addTask { try await server.makeCall(token, to: "+1415555\(String(format: "%04d", index))") }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.filter { $0.status == 200 }.count == 2, "\(replies.map(\.status))")
            let refused = replies.filter { $0.status == 503 }
            #expect(refused.count == 4)
            for reply in refused {
                #expect(reply.detail?.hasPrefix("Free trial calls are paused for today.") == true, "\(reply.text)")
                Self.expectRetryAfterNextDay(reply, "503")
            }
            let requests = try await server.request(.GET, "/sandbox/requests").json["requests"] as? [[String: Any]] ?? []
            #expect(requests.filter { ($0["method"] as? String) == "POST" && (($0["path"] as? String) ?? "").hasSuffix("/Calls.json") }.count == 2)
            // A refused account kept its trial: nothing was charged.
            var untouched = 0
            for token in tokens where try await server.usage(token).trialCallsUsed == 0 { untouched += 1 }
            #expect(untouched == 4)
        }
    }

    @Test("signups: limited per client address and per network, a refused or duplicate signup costs nothing", arguments: TestDatabase.all)
    func signups(_ database: TestDatabase) async throws {
        func register(_ server: TestServer, _ email: String) async throws -> TestServer.Reply {
            try await server.request(.POST, "/auth/register", json: RegisterRequest(email: email, password: "correct horse battery"))
        }
        try await TestServer.run(on: database, environment: ["CHORUS_SIGNUPS_PER_IP": "2"]) { server in
            #expect(try await register(server, "first@example.com").status == 200)
            #expect(try await register(server, "first@example.com").status == 400)  // already registered: not counted
            #expect(try await register(server, "second@example.com").status == 200)
            let refused = try await register(server, "third@example.com")
            #expect(refused.status == 429, "\(refused.text)")
            #expect(refused.detail == "Too many accounts were created from your address today. Please try again tomorrow.")
            Self.expectRetryAfterNextDay(refused, "429")
            let login = try await server.request(.POST, "/auth/login", form: "username=third%40example.com&password=correct+horse+battery")
            #expect(login.status == 401)
        }
        // Loopback is one network (127.0.0.0/24): its limit applies even when the address's is higher.
        try await TestServer.run(on: database, environment: ["CHORUS_SIGNUPS_PER_IP": "10", "CHORUS_SIGNUPS_PER_NETWORK": "1"]) { server in
            // Yesterday's counters are dropped by today's first admission (the table holds about one day).
            let sql = server.app.db as! any SQLDatabase
            try await sql.raw("INSERT INTO admission_counters (scope, period, used) VALUES ('signup-ip:192.0.2.1', '2000-01-01', 3)").run()
            #expect(try await register(server, "one@example.com").status == 200)
            let old = try await sql.raw("SELECT used FROM admission_counters WHERE period = '2000-01-01'").all()
            #expect(old.isEmpty)
            let refused = try await register(server, "two@example.com")
            #expect(refused.status == 429 && refused.detail?.contains("your network") == true, "\(refused.text)")
        }
    }

    @Test("admission limits: on by default in production, off in development, validated")
    func admissionConfiguration() throws {
        let cwd = FileManager.default.temporaryDirectory
        let production = try ChorusConfiguration.load(from: ["CHORUS_ENVIRONMENT": "production"], workingDirectory: cwd)
        #expect(production.admission == .production)
        #expect(production.admission.trialCallsPerDay == 200 && production.admission.signupsPerAddress == 5)
        #expect(try ChorusConfiguration.load(from: [:], workingDirectory: cwd).admission == .off)
        let custom = try ChorusConfiguration.load(
            from: [
                "CHORUS_ENVIRONMENT": "production", "CHORUS_TRIAL_CALLS_PER_DAY": "off", "CHORUS_SIGNUP_NETWORK_PREFIXES": "16,48",
                "CHORUS_VOICE_USER_DAILY_OPERATIONS": "off", "CHORUS_STORIES_USER_DAILY_OPERATIONS": "12",
            ], workingDirectory: cwd)
        #expect(custom.admission.trialCallsPerDay == nil && custom.admission.signupsPerNetwork == 50)
        #expect(custom.admission.network == NetworkPrefix(ipv4PrefixLength: 16, ipv6PrefixLength: 48))
        #expect(custom.voiceMessages.limits.userDailyOperations == nil && custom.stories.limits.userDailyOperations == 12)
        for (key, value) in [
            ("CHORUS_SIGNUP_NETWORK_PREFIXES", "24"), ("CHORUS_SIGNUP_NETWORK_PREFIXES", "40,64"), ("CHORUS_SIGNUPS_PER_IP", "-1"),
            ("CHORUS_VOICE_DAILY_SUMMARIES", "many"), ("CHORUS_VOICE_USER_DAILY_OPERATIONS", "1e9"),
        ] {
            #expect(throws: ConfigurationError.self, "\(key)=\(value)") { try ChorusConfiguration.load(from: [key: value], workingDirectory: cwd) }
        }
    }
}
