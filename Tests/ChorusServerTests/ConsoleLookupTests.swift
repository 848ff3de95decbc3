import ChorusAPI
import ChorusTestSupport
import Foundation
import SQLKit
import Testing

@testable import ChorusServer

/// The console's one search box (`GET /console/api/lookup?q=`) over loopback HTTP, the detail views it opens, and the
/// overview's count of users by their current plan.
@Suite("Console look-up")
struct ConsoleLookupTests {
    @Test("what the search box reads its input as, and what it refuses with what to type instead")
    func keys() {
        func read(_ text: String) -> ConsoleLookupKey? { try? ConsoleLookupKey.read(text).get() }
        #expect(read("  Mia@Family.TEST ") == .email("mia@family.test"))
        #expect(read("+1 (415) 555-0123") == .phoneNumber("+14155550123"))
        #expect(read("0044 20 7946 0958") == .phoneNumber("+442079460958"))
        #expect(read("+33.6.12.34.56.78") == .phoneNumber("+33612345678"))
        #expect(read("CA0123456789abcdef0123456789abcdef") == .callSid("CA0123456789abcdef0123456789abcdef"))
        #expect(read("ca0123abc") == .callSid("CA0123abc"))
        #expect(read("42") == .callID(42))
        #expect(read("0B2C3D4E-0000-4000-8000-000000000001") == .id("0b2c3d4e-0000-4000-8000-000000000001"))
        #expect(read("00000000-0000-4000-8000-000000000000") == .id("00000000-0000-4000-8000-000000000000"))
        #expect(read("story_0123abcd") == .id("story_0123abcd"))
        for refused in ["", "   ", "0", "4155550123", "+12", "+0123456789", "hello world", "a;b", String(repeating: "x", count: 400)] {
            #expect(read(refused) == nil, "\(refused)")
        }
        guard case .failure(let error) = ConsoleLookupKey.read("4155550123") else { Issue.record("read"); return }
        #expect(error.message.contains("country code"))
    }

    static func lookup(_ browser: ConsoleTests.Browser, _ cookies: [String: String], _ query: String) async throws -> ConsoleTests.Browser.Page {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return try await browser.send(.GET, "/console/api/lookup?q=\(query.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")", cookies: cookies)
    }

    static func found(_ page: ConsoleTests.Browser.Page) throws -> ConsoleLookupDTO {
        #expect(page.status == 200, "\(page.text)")
        return try ChorusJSON.makeDecoder().decode(ConsoleLookupDTO.self, from: Data(page.text.utf8))
    }

    @Test("by email, phone number (two users called it), call SID, call id, user id and story id; unknown keys 404 with what was looked for; bad input 422", arguments: TestDatabase.all)
    func lookUp(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: StoriesTests.environment) { server in
            let (browser, cookies, _) = try await ConsoleTests.operatorSession(server)
            defer { Task { await browser.shutdown() } }
            let mia = try await MessagingTests.person(server, name: "mia")
            let sam = try await MessagingTests.person(server, name: "sam")
            #expect(try await server.makeCall(mia.token, to: "+14155550123").status == 200)
            #expect(try await server.makeCall(sam.token, to: "+14155550123").status == 200)
            let miaCall = try #require(try await server.history(mia.token).callHistory.first)
            let samCall = try #require(try await server.history(sam.token).callHistory.first)
            let hero = try await StoriesTests.hero(server, mia)
            let storyID = try await StoriesTests.create(server, mia, hero: hero.id, minutes: 1, illustrations: 0)

            // Email: case and spaces do not matter.
            let byEmail = try Self.found(try await Self.lookup(browser, cookies, "  \(mia.email.uppercased()) "))
            #expect(byEmail.keyKind == "email" && byEmail.query == mia.email && byEmail.onDoNotCallList == nil)
            #expect(byEmail.matches == [ConsoleLookupMatchDTO(kind: "user", id: mia.id, label: mia.email, userID: mia.id, userEmail: mia.email)])

            // A phone number as people write it; two users called it: both, then both calls, newest first.
            let byNumber = try Self.found(try await Self.lookup(browser, cookies, "+1 (415) 555-0123"))
            #expect(byNumber.keyKind == "phone_number" && byNumber.query == "+14155550123" && byNumber.onDoNotCallList == false)
            #expect(byNumber.matches.map(\.kind) == ["user", "user", "call", "call"])
            #expect(byNumber.matches.map(\.id) == [sam.id, mia.id, String(samCall.id), String(miaCall.id)])
            #expect(byNumber.matches.allSatisfy { !$0.label.contains("+14155550123") }, "numbers masked in labels")
            #expect(byNumber.matches[2].label.hasPrefix("Call \(samCall.id) to +14•••••••23, "))

            // Call SID and call id: the call and its owner.
            let bySid = try Self.found(try await Self.lookup(browser, cookies, miaCall.callSid))
            #expect(bySid.keyKind == "call_sid" && bySid.matches.count == 1)
            let sidMatch = try #require(bySid.matches.first)
            #expect(sidMatch.kind == "call" && sidMatch.id == String(miaCall.id) && sidMatch.userID == mia.id && sidMatch.userEmail == mia.email)
            let byCallID = try Self.found(try await Self.lookup(browser, cookies, String(samCall.id)))
            #expect(byCallID.keyKind == "call_id" && byCallID.matches.map(\.userID) == [sam.id])

            // Ids: a user's, a story's (with its owner).
            let byUserID = try Self.found(try await Self.lookup(browser, cookies, sam.id.uppercased()))
            #expect(byUserID.keyKind == "id" && byUserID.matches.map(\.kind) == ["user"] && byUserID.matches.first?.userEmail == sam.email)
            let byStoryID = try Self.found(try await Self.lookup(browser, cookies, storyID))
            #expect(byStoryID.matches.map(\.kind) == ["story"] && byStoryID.matches.first?.userID == mia.id, "\(byStoryID)")

            // Unknown keys: 404, saying what was looked for.
            for (query, detail) in [
                ("nobody@family.test", "No account has the email nobody@family.test"),
                ("+1 415 555 0999", "No call was placed to +14155550999"),
                ("CA00000000000000000000000000000000", "No call has the SID CA00000000000000000000000000000000"),
                ("999999", "No call has the id 999999"),
                ("00000000-0000-4000-8000-000000000000", "No user or story has the id 00000000-0000-4000-8000-000000000000"),
            ] {
                let page = try await Self.lookup(browser, cookies, query)
                #expect(page.status == 404 && page.json["detail"] as? String == detail, "\(query): \(page.text)")
            }
            // Input that is none of the keys: 422 on `q`, with what to type.
            for query in ["", "4155550123", "what?"] {
                let page = try await Self.lookup(browser, cookies, query)
                let errors = page.json["errors"] as? [[String: Any]] ?? []
                #expect(page.status == 422 && errors.first?["field"] as? String == "q", "\(query): \(page.text)")
            }
            #expect(try await browser.send(.GET, "/console/api/lookup?q=x").status == 401)

            // The detail views the matches open: the account with its sessions and stories, the story with its owner.
            let account = try ChorusJSON.makeDecoder().decode(
                ConsoleUserDTO.self, from: Data(try await browser.send(.GET, "/console/api/users/\(mia.id)", cookies: cookies).text.utf8))
            #expect(account.activeSessions == 1 && account.recentStories.map(\.id) == [storyID] && account.recentStories.first?.heroName == "Mia")
            let storyPage = try await browser.send(.GET, "/console/api/stories/\(storyID)", cookies: cookies)
            #expect(storyPage.status == 200, "\(storyPage.text)")
            let story = try ChorusJSON.makeDecoder().decode(ConsoleStoryDetailDTO.self, from: Data(storyPage.text.utf8))
            #expect(story.story.id == storyID && story.userID == mia.id && story.userEmail == mia.email && story.failedJobs.isEmpty)

            // A job of the story that failed for good is listed on the story (to run again); other stories' are not.
            let store = ChorusStore(sql: server.app.db as! any SQLDatabase, reader: nil, writeGate: WriteGate())
            let jobID = try await store.jobs.enqueueJob(kind: "no_such_job", payload: "\(storyID)#1", runAt: Date(), now: Date(), maxAttempts: 1)
            let otherJob = try await store.jobs.enqueueJob(kind: "no_such_job", payload: "\(storyID)x", runAt: Date(), now: Date(), maxAttempts: 1)
            try await server.eventually("the jobs fail") {
                try await (server.app.db as! any SQLDatabase).raw(
                    "SELECT COUNT(*) AS n FROM jobs WHERE status = 'failed' AND id IN (\(bind: Int64(jobID)), \(bind: Int64(otherJob)))"
                ).first()?.decode(column: "n", as: Int.self) == 2
            }
            let failed = try ChorusJSON.makeDecoder().decode(
                ConsoleStoryDetailDTO.self, from: Data(try await browser.send(.GET, "/console/api/stories/\(storyID)", cookies: cookies).text.utf8))
            #expect(failed.failedJobs.map(\.id) == [jobID] && failed.failedJobs.first?.kind == "no_such_job", "\(failed.failedJobs)")

            // A story its user deleted is gone from the look-up, the account's view and the story view.
            let deleted = try await server.request(.DELETE, "/stories/\(storyID)", token: mia.token)
            #expect((200..<300).contains(deleted.status), "\(deleted.text)")
            let gone = try await Self.lookup(browser, cookies, storyID)
            #expect(gone.status == 404 && gone.json["detail"] as? String == "No user or story has the id \(storyID)", "\(gone.text)")
            let after = try ChorusJSON.makeDecoder().decode(
                ConsoleUserDTO.self, from: Data(try await browser.send(.GET, "/console/api/users/\(mia.id)", cookies: cookies).text.utf8))
            #expect(after.recentStories.isEmpty)
            #expect(try await browser.send(.GET, "/console/api/stories/\(storyID)", cookies: cookies).status == 404)
        }
    }

    @Test("the overview counts each user once, by the plan that decides their limits: basic then premium is one premium user", arguments: TestDatabase.all)
    func usersByCurrentPlan(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let (browser, cookies, _) = try await ConsoleTests.operatorSession(server)
            defer { Task { await browser.shutdown() } }
            let upgraded = try await server.register()
            try await server.buy(upgraded.accessToken, productID: PurchasesTests.basic)
            try await server.buy(upgraded.accessToken, productID: PurchasesTests.premium)
            let basic = try await server.register()
            try await server.buy(basic.accessToken, productID: PurchasesTests.basic)
            let overview = try ChorusJSON.makeDecoder().decode(
                ConsoleOverviewDTO.self, from: Data(try await browser.send(.GET, "/console/api/overview", cookies: cookies).text.utf8))
            #expect(overview.users.byPlan == [ConsoleCountDTO(name: "basic", count: 1), ConsoleCountDTO(name: "premium", count: 1)])
        }
    }
}
