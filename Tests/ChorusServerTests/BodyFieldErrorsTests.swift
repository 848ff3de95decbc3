import ChorusAPI
import ChorusTestSupport
import Foundation
import Testing

@testable import ChorusServer

/// Issue 20: a JSON body with several wrongly typed (or missing) fields answers 422 listing every one, in the shape of
/// the other validation errors, not only the first the decoder met.
@Suite("Body field errors")
struct BodyFieldErrorsTests {
    typealias Expected = [[String: String]]

    static func errors(_ reply: TestServer.Reply) -> Expected? {
        reply.json["errors"] as? [[String: String]]
    }

    static func raw(_ json: String) -> Data { Data(json.utf8) }

    @Test("every bad field of register, make-call, schedule-call, heroes and conversations bodies is reported", arguments: TestDatabase.all)
    func everyBadField(_ database: TestDatabase) async throws {
        try await TestServer.run(on: database) { server in
            func post(_ path: String, _ json: String, token: String? = nil) async throws -> TestServer.Reply {
                try await server.request(
                    .POST, path, token: token, body: Self.raw(json), headers: [("Content-Type", "application/json"), ("X-App-Type", "mobile")])
            }
            let register = try await post("/auth/register", #"{"email": 5, "password": true}"#)
            #expect(register.status == 422)
            #expect(register.detail == "Validation error")
            #expect(
                Self.errors(register) == [
                    ["field": "email", "message": "Expected a string"], ["field": "password", "message": "Expected a string"],
                ], "\(register.text)")

            // A wrong type and a missing field together.
            let partial = try await post("/auth/register", #"{"email": ["a@example.com"]}"#)
            #expect(
                Self.errors(partial) == [
                    ["field": "email", "message": "Expected a string"], ["field": "password", "message": "Field required"],
                ], "\(partial.text)")

            let token = try await server.register().accessToken
            let call = try await post("/mobile/make-call", #"{"phone_number": 4155550100, "scenario": {"id": "x"}}"#, token: token)
            #expect(call.status == 422)
            #expect(
                Self.errors(call) == [
                    ["field": "phone_number", "message": "Expected a string"], ["field": "scenario", "message": "Expected a string"],
                ], "\(call.text)")

            // A value of the right JSON type the DTO refuses (a date) is reported with the others.
            let schedule = try await post("/mobile/schedule-call", #"{"phone_number": false, "scheduled_time": "tomorrow"}"#, token: token)
            #expect(schedule.status == 422)
            #expect(
                Self.errors(schedule) == [
                    ["field": "phone_number", "message": "Expected a string"],
                    ["field": "scheduled_time", "message": "Expected an ISO-8601 date-time such as 2024-01-15T14:30:00Z"],
                ], "\(schedule.text)")

            // Array elements: each bad element by its index; a null where a value is required says so.
            let hero = try await post(
                "/heroes", #"{"name": 1, "traits": ["brave", 2, null], "appearance": null, "avatar_prompt": {}}"#, token: token)
            #expect(hero.status == 422)
            #expect(
                Self.errors(hero) == [
                    ["field": "name", "message": "Expected a string"],
                    ["field": "traits[1]", "message": "Expected a string"],
                    ["field": "traits[2]", "message": "Expected a string, got null"],
                    ["field": "appearance", "message": "Expected a string, got null"],
                    ["field": "avatar_prompt", "message": "Expected a string"],
                ], "\(hero.text)")
            let heroArray = try await post("/heroes", #"{"traits": "brave"}"#, token: token)
            #expect(
                Self.errors(heroArray) == [
                    ["field": "name", "message": "Field required"], ["field": "traits", "message": "Expected an array"],
                    ["field": "appearance", "message": "Field required"],
                ], "\(heroArray.text)")

            let conversation = try await post("/conversations", #"{"kind": 5, "member_emails": "a@example.com"}"#, token: token)
            #expect(conversation.status == 422)
            #expect(
                Self.errors(conversation) == [
                    ["field": "kind", "message": "Expected a string"], ["field": "member_emails", "message": "Expected an array"],
                ], "\(conversation.text)")

            // A fraction where an integer is expected: Foundation does not name the field, the answer says what is wrong.
            let story = try await post(
                "/stories", #"{"hero_id": "h", "length_minutes": 1.5, "language": "en", "voice": "v", "illustration_count": 0}"#, token: token)
            #expect(story.status == 422)
            #expect(
                Self.errors(story) == [
                    ["field": "body", "message": "A number does not fit its field (a fraction or too large where an integer is expected)"]
                ], "\(story.text)")

            // Bodies that are not JSON objects keep their single answer.
            let notJSON = try await post("/auth/register", "{")
            #expect(Self.errors(notJSON) == [["field": "body", "message": "The body is not valid JSON"]], "\(notJSON.text)")
            let array = try await post("/auth/register", "[1, 2]")
            #expect(Self.errors(array) == [["field": "body", "message": "Expected an object"]], "\(array.text)")
        }
    }

    struct Address: Decodable {
        var street: String
        var number: Int
    }

    struct Person: Decodable {
        var name: String
        var age: Int
        var home: Address
        var work: Address?
        var tags: [String]
        var scores: [String: Double]
        var born: Date?
    }

    static func collect(_ json: String) -> [FieldError] {
        let decoder = ChorusJSON.makeDecoder()
        do {
            _ = try decoder.decode(Person.self, from: raw(json))
            return []
        } catch let error as DecodingError {
            return BodyFieldErrors.all(Person.self, body: raw(json), first: error, decoder: decoder)
        } catch {
            Issue.record("unexpected \(error)")
            return []
        }
    }

    @Test("nested members: each bad field by its path; an object sent as a number is one error, not one per member")
    func nestedMembers() {
        let errors = Self.collect(
            #"""
            {"name": "Ann", "age": "ten", "home": {"street": 12, "number": "1"}, "work": 7, "tags": [1, "x", {}],
             "scores": {"math": "A", "art": 2}, "born": "yesterday"}
            """#)
        #expect(
            errors.map(\.field) == ["age", "home.street", "home.number", "work", "tags[0]", "tags[2]", "scores.math", "born"],
            "\(errors)")
        #expect(errors.first { $0.field == "work" }?.message == "Expected an object")
        #expect(errors.first { $0.field == "tags[2]" }?.message == "Expected a string")

        // Foundation reports a fraction for an integer without its field, as if the JSON were malformed: the answer
        // says what it is instead of "not valid JSON".
        let fraction = Self.collect(#"{"name": "Ann", "age": 1.5, "home": {"street": "x", "number": 1}, "tags": [], "scores": {}}"#)
        #expect(
            fraction == [
                FieldError(field: "body", message: "A number does not fit its field (a fraction or too large where an integer is expected)")
            ], "\(fraction)")
        #expect(Self.collect("{").map(\.message) == ["The body is not valid JSON"])

        // A DTO's own rule about the whole body is said as the DTO says it.
        struct OneOf: Decodable {
            init(from decoder: any Decoder) throws {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Give exactly one of a or b"))
            }
        }
        let ruleDecoder = ChorusJSON.makeDecoder()
        do {
            _ = try ruleDecoder.decode(OneOf.self, from: Self.raw("{}"))
            Issue.record("decoded")
        } catch let error as DecodingError {
            let rule = BodyFieldErrors.all(OneOf.self, body: Self.raw("{}"), first: error, decoder: ruleDecoder)
            #expect(rule == [FieldError(field: "body", message: "Give exactly one of a or b")])
        } catch {
            Issue.record("unexpected \(error)")
        }

        // Missing nested members, and a nested object missing altogether (one error, not one per member).
        let missing = Self.collect(#"{"home": {"number": "1"}, "scores": {}}"#)
        #expect(missing.map(\.field) == ["name", "age", "home.street", "home.number", "tags"], "\(missing)")
        let noHome = Self.collect(#"{"name": "Ann", "age": 3, "tags": [], "scores": {}}"#)
        #expect(noHome.map(\.field) == ["home"], "\(noHome)")
        #expect(noHome.first?.message == "Field required")

        // A body full of wrong values stops at the bound instead of working forever.
        let many = (0..<200).map { #"{"street": \#($0), "number": "n"}"# }.joined(separator: ",")
        struct Many: Decodable { var items: [Address] }
        let decoder = ChorusJSON.makeDecoder()
        let body = Self.raw(#"{"items": [\#(many)]}"#)
        do {
            _ = try decoder.decode(Many.self, from: body)
            Issue.record("decoded a body of wrong values")
        } catch let error as DecodingError {
            let all = BodyFieldErrors.all(Many.self, body: body, first: error, decoder: decoder)
            #expect(all.count > 1 && all.count <= BodyFieldErrors.maxRounds, "\(all.count)")
            #expect(all.first?.field == "items[0].street")
        } catch {
            Issue.record("unexpected \(error)")
        }
        // A large bad body gets fewer rounds: never more than the work budget in bytes decoded.
        let large = Self.raw(#"{"items": [\#(many)], "padding": "\#(String(repeating: "x", count: 300_000))"}"#)
        do {
            _ = try decoder.decode(Many.self, from: large)
            Issue.record("decoded a body of wrong values")
        } catch let error as DecodingError {
            let all = BodyFieldErrors.all(Many.self, body: large, first: error, decoder: decoder)
            #expect(all.count >= 1 && all.count <= BodyFieldErrors.workBudget / large.count, "\(all.count)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
