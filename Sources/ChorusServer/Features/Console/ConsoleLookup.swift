import ChorusAPI
import ChorusCore
import Foundation
import Vapor

/// What one console search box's input is read as (server-side, so every client reads it the same way).
enum ConsoleLookupKey: Equatable, Sendable {
    case email(String)
    /// E.164, the way calls store their number.
    case phoneNumber(String)
    case callSid(String)
    case callID(Int64)
    /// A user's or a story's id.
    case id(String)

    static let help =
        "Type an email, a phone number with its country code (+14155550123), a Twilio call SID (CA…), a call id (digits) or a user or story id"

    /// A failure, saying what to type instead, when the input is none of them.
    static func read(_ input: String) -> Result<ConsoleLookupKey, LookupInputError> {
        let text = input.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return .failure(LookupInputError(message: help)) }
        guard text.count <= 320 else { return .failure(LookupInputError(message: "Too long for a look-up. " + help)) }
        if text.contains("@") { return .success(.email(text.lowercased())) }
        if UUID(uuidString: text) != nil { return .success(.id(text.lowercased())) }
        if text.count > 2, text.prefix(2).uppercased() == "CA", text.dropFirst(2).allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
            return .success(.callSid("CA" + text.dropFirst(2)))
        }
        // A phone number as people write it: spaces, dashes, dots and brackets are ignored, a leading 00 is +.
        var compact = text.filter { !" -.()\u{00A0}".contains($0) }
        if compact.hasPrefix("00") { compact = "+" + compact.dropFirst(2) }
        if compact.hasPrefix("+") {
            guard PhoneNumber.isE164(compact) else {
                return .failure(LookupInputError(message: "\(text) is not a phone number: use + and the country code, then 8 to 15 digits in all"))
            }
            return .success(.phoneNumber(compact))
        }
        if text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            // Call ids are small; a long run of digits is a number typed without its country code.
            guard text.count <= 9, let id = Int64(text), id > 0 else {
                return .failure(
                    LookupInputError(message: "\(text) looks like a phone number without its country code: type it with + and the country code (+1 415 555 0123)"))
            }
            return .success(.callID(id))
        }
        if (8...64).contains(text.count), text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) {
            return .success(.id(text.lowercased()))
        }
        return .failure(LookupInputError(message: help))
    }

    var kind: String {
        switch self {
        case .email: "email"
        case .phoneNumber: "phone_number"
        case .callSid: "call_sid"
        case .callID: "call_id"
        case .id: "id"
        }
    }

    var text: String {
        switch self {
        case .email(let text), .phoneNumber(let text), .callSid(let text), .id(let text): text
        case .callID(let id): String(id)
        }
    }
}

struct LookupInputError: Error, Equatable {
    var message: String
}

extension ConsoleController {
    /// `GET /console/api/lookup?q=`: users, calls and stories by email, phone number, call SID, call id or id (see
    /// ``ConsoleLookupDTO``). 422 for input that is none of them, 404 when nothing matches.
    @Sendable
    func lookup(_ req: Request) async throws -> ConsoleLookupDTO {
        let key: ConsoleLookupKey
        switch ConsoleLookupKey.read(req.query[String.self, at: "q"] ?? "") {
        case .success(let read): key = read
        case .failure(let error): throw APIError.invalid("q", error.message)
        }
        let console = try req.store.console
        var matches: [ConsoleLookupMatchDTO] = []
        var onDoNotCallList: Bool?
        func user(_ id: String, _ email: String) -> ConsoleLookupMatchDTO {
            ConsoleLookupMatchDTO(kind: "user", id: id, label: email, userID: id, userEmail: email)
        }
        func calls(_ found: [ConsoleCallMatch]) -> [ConsoleLookupMatchDTO] {
            found.map { call in
                ConsoleLookupMatchDTO(
                    kind: "call", id: String(call.id),
                    label: "Call \(call.id) to \(Self.maskPhoneNumber(call.phoneNumber)), \(call.status), \(ChorusJSON.formatDate(call.createdAt))",
                    userID: call.userID, userEmail: call.userEmail)
            }
        }
        let notFound: String
        switch key {
        case .email(let email):
            if let found = try await console.consoleUser(email: email) { matches.append(user(found.id, found.email)) }
            notFound = "No account has the email \(email)"
        case .phoneNumber(let number):
            let found = try await console.consoleCalls(phoneNumber: number)
            // Everyone who called the number first (usually one), then the calls, newest first.
            var seen = Set<String>()
            for call in found where seen.insert(call.userID).inserted { matches.append(user(call.userID, call.userEmail)) }
            matches += calls(found)
            let listed = try await req.store.destinations.isOptedOut(hash: services.numberHasher.hash(number))
            onDoNotCallList = listed
            notFound = "No call was placed to \(number)" + (listed ? "; the number is on the do-not-call list" : "")
        case .callSid(let sid):
            matches = calls(try await console.consoleCalls(callSid: sid))
            notFound = "No call has the SID \(sid)"
        case .callID(let id):
            matches = calls(try await console.consoleCalls(id: id))
            notFound = "No call has the id \(id)"
        case .id(let id):
            if let email = try await console.consoleUserEmail(id: id) { matches.append(user(id, email)) }
            if let story = try await req.store.stories.story(id: id, userID: nil),
                let email = try await console.consoleUserEmail(id: story.userID)
            {
                let title = story.title ?? "Untitled story about \(story.snapshot.heroName)"
                matches.append(
                    ConsoleLookupMatchDTO(
                        kind: "story", id: story.id, label: "\(title) (\(Self.storyStatus(story)))", userID: story.userID, userEmail: email))
            }
            notFound = "No user or story has the id \(id)"
        }
        guard !matches.isEmpty else { throw APIError.notFound(notFound) }
        return ConsoleLookupDTO(query: key.text, keyKind: key.kind, matches: matches, onDoNotCallList: onDoNotCallList)
    }

    /// `in_progress`, `ready`, `failed` or `cancelled`.
    static func storyStatus(_ story: StoryRecord) -> String {
        if story.cancelledAt != nil { return "cancelled" }
        let stages = story.stagesDTO
        if story.failure != nil || [stages.text, stages.scenes, stages.narration, stages.illustrations].contains(.failed) { return "failed" }
        return story.isFinished ? "ready" : "in_progress"
    }
}
