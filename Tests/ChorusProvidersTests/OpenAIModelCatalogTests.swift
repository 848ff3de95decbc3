import ChorusCore
import ChorusProviders
import Foundation
import Testing

/// Issue 22: reading `GET /v1/models` tolerantly — extra members ignored, unreadable dates reported per model, never a trap.
@Suite("OpenAI model list")
struct OpenAIModelCatalogTests {
    @Test("dates, nulls, extra members; unreadable dates per model; entries without an id skipped")
    func tolerant() throws {
        let body = #"""
            {"object":"list","data":[
              {"id":"tts-1","object":"model","created":1,"owned_by":"openai-internal","shutdown_date":"2027-01-06","extra":{"a":[1]}},
              {"id":"gpt-5.5","object":"model","created":1,"owned_by":"system","shutdown_date":null},
              {"id":"gpt-transcribe","object":"model","created":1,"owned_by":"system"},
              {"id":"odd","shutdown_date":"2027-02-30"},
              {"id":"numeric","shutdown_date":20270106},
              {"id":"tts-1","shutdown_date":"2030-01-01"},
              {"object":"model","shutdown_date":"2027-01-06"},
              {"id":7}
            ],"has_more":false}
            """#
        let listing = try OpenAIModelCatalog.listing(from: Data(body.utf8))
        #expect(listing["tts-1"] == .listed(shutdownDate: CalendarDay(iso: "2027-01-06")))
        #expect(listing["gpt-5.5"] == .listed(shutdownDate: nil))
        #expect(listing["gpt-transcribe"] == .listed(shutdownDate: nil))
        #expect(listing["odd"] == .listedWithUnreadableDate("2027-02-30"))
        #expect(listing["numeric"] == .listedWithUnreadableDate("not a string"))
        #expect(listing.count == 5)
    }

    @Test("a body that is not a model list is an invalid response, never a trap")
    func malformed() {
        for body in ["", "[]", #"{"data":{}}"#, #"{"data":[1,2]}"#, "{", #"{"object":"list"}"#, String(repeating: "[", count: 10_000)] {
            #expect(throws: ProviderError.self, "\(body.prefix(20))") { try OpenAIModelCatalog.listing(from: Data(body.utf8)) }
        }
    }
}
