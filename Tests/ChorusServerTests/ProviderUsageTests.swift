import ChorusAPI
import ChorusSandbox
import Foundation
import SQLKit
import Testing

@testable import ChorusServer

/// Every provider call is metered with its feature, user and request id; `GET /me/usage` reports a user's own.
@Suite("Provider usage metering")
struct ProviderUsageTests {
    typealias Person = MessagingTests.Person

    @Test("transcription, speech and urgency calls are metered to the user they worked for", arguments: TestDatabase.all)
    func meteredPerUser(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            let mom = try await VoiceTests.adult(server, name: "mom")
            let dad = try await VoiceTests.adult(server, name: "dad")
            let conversation = try await server.startConversation(
                mom.token, CreateConversationRequest(kind: "direct", memberEmails: [dad.email]), acceptedBy: [dad.token])

            // Mom transcribes a recording and sends a text the urgency model reads; dad hears it spoken.
            let recording = SandboxAudioFiles.speechWAV(text: "Pick up Emma at five, please.", voice: "mom")
            let audio = try await server.request(.POST, "/audio", token: mom.token, body: recording, headers: [("Content-Type", "audio/wav")])
                .decode(AudioUploadResponse.self)
            let transcribed = try await server.request(
                .POST, "/transcriptions", token: mom.token, json: TranscriptionRequestDTO(audioID: audio.audioID),
                headers: [("X-Request-ID", "req-transcribe-1")])
            #expect(transcribed.status == 200, "\(transcribed.text)")
            let message = try await MessagingTests.send(server, mom, to: conversation.id, text: "Dinner is at seven tonight.")
            #expect(try await VoiceTests.speech(server, dad, message: message.id).status == 200)

            try await server.eventually("the urgency reading is metered") {
                let report = try await server.request(.GET, "/me/usage", token: mom.token).decode(ProviderUsageReport.self)
                return report.features.first?.items.contains { $0.operation == "chat" } == true
            }
            let momReport = try await server.request(.GET, "/me/usage", token: mom.token).decode(ProviderUsageReport.self)
            #expect(momReport.period == "month")
            #expect(momReport.features.map(\.feature) == ["voice_messages"])
            let momItems = try #require(momReport.features.first?.items)
            let transcription = try #require(momItems.first { $0.operation == "transcription" })
            #expect(transcription.model == "gpt-transcribe" && transcription.calls == 1 && transcription.audioSeconds > 1)
            #expect(transcription.usdMicros > 0)
            let chat = try #require(momItems.first { $0.operation == "chat" })
            #expect(chat.inputTokens > 0 && chat.outputTokens > 0 && chat.usdMicros > 0)
            #expect(!momItems.contains { $0.operation == "speech" })
            #expect(momReport.totalUSDMicros == momItems.reduce(0) { $0 + $1.usdMicros })

            let dadReport = try await server.request(.GET, "/me/usage?period=day", token: dad.token).decode(ProviderUsageReport.self)
            let speech = try #require(dadReport.features.first?.items.first { $0.operation == "speech" })
            #expect(speech.model == "gpt-realtime-2.1-mini" && speech.characters == "Dinner is at seven tonight.".count && speech.usdMicros > 0)
            #expect(dadReport.features.first?.items.contains { $0.operation == "transcription" } == false)

            // The request id travels with the usage row; the spend ledger matches the rows.
            let sql = server.app.db as! any SQLDatabase
            let row = try #require(try await sql.raw("SELECT request_id, user_id FROM provider_usage WHERE operation = 'transcription'").first())
            #expect(try row.decode(column: "request_id", as: String.self) == "req-transcribe-1")
            #expect(try row.decode(column: "user_id", as: String.self) == mom.id)
            try await Self.expectLedgerMatchesRows(sql)

            #expect(try await server.request(.GET, "/me/usage?period=year", token: mom.token).status == 422)
            #expect(try await server.request(.GET, "/me/usage").status == 401)
        }
    }

    @Test("concurrent metered calls keep the spend ledger equal to the sum of the rows", arguments: TestDatabase.all)
    func concurrentLedger(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database, environment: ["CHORUS_VOICE_URGENCY": "keywords", "CHORUS_VOICE_DAILY_GENERATIONS": "100"]) {
            server in
            let mom = try await VoiceTests.adult(server, name: "mom")
            let dad = try await VoiceTests.adult(server, name: "dad")
            let conversation = try await server.startConversation(
                mom.token, CreateConversationRequest(kind: "direct", memberEmails: [dad.email]), acceptedBy: [dad.token])
            var ids: [String] = []
            for index in 0..<30 {
                ids.append(try await MessagingTests.send(server, mom, to: conversation.id, text: "Reminder number \(index) for the week.").id)
            }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for id in ids { group.addTask { try await VoiceTests.speech(server, dad, message: id).status } }
                var all: [Int] = []
                for try await status in group { all.append(status) }
                return all
            }
            #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            let sql = server.app.db as! any SQLDatabase
            #expect(
                try await sql.raw("SELECT COUNT(*) AS n FROM provider_usage WHERE operation = 'speech'").first()?.decode(column: "n", as: Int.self)
                    == 30)
            try await Self.expectLedgerMatchesRows(sql)
            let report = try await server.request(.GET, "/me/usage", token: dad.token).decode(ProviderUsageReport.self)
            #expect(report.features.first?.items.first?.calls == 30)
        }
    }

    /// `feature_spend` (day and month) equals the sum of `provider_usage` per feature.
    static func expectLedgerMatchesRows(_ sql: any SQLDatabase) async throws {
        let rows = try await sql.raw("SELECT feature, CAST(SUM(usd_micros) AS BIGINT) AS total FROM provider_usage GROUP BY feature").all()
        #expect(!rows.isEmpty)
        for row in rows {
            let feature = try row.decode(column: "feature", as: String.self)
            let total = try row.decode(column: "total", as: Int64.self)
            let ledger = try await sql.raw("SELECT period, usd_micros FROM feature_spend WHERE feature = \(bind: feature)").all()
            #expect(ledger.count == 2)
            for entry in ledger { #expect(try entry.decode(column: "usd_micros", as: Int64.self) == total) }
        }
    }
}
