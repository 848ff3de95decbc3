import Foundation

/// `GET /console/api/opt-outs`: the do-not-call list's figures (issue 17). Numbers are never listed: the list holds
/// keyed hashes only.
public struct ConsoleOptOutsDTO: Codable, Sendable, Equatable {
    /// Numbers on the list.
    public var total: Int
    /// Added in the last 24 hours.
    public var lastDay: Int
    /// Added in the last 7 days.
    public var lastWeek: Int
    /// Opted out by saying so.
    public var bySpeech: Int
    /// Opted out by pressing the opt-out key.
    public var byKey: Int

    public init(total: Int, lastDay: Int, lastWeek: Int, bySpeech: Int, byKey: Int) {
        self.total = total
        self.lastDay = lastDay
        self.lastWeek = lastWeek
        self.bySpeech = bySpeech
        self.byKey = byKey
    }

    enum CodingKeys: String, CodingKey {
        case total
        case lastDay = "last_day"
        case lastWeek = "last_week"
        case bySpeech = "by_speech"
        case byKey = "by_key"
    }
}

/// `POST /console/api/opt-outs/remove`: takes a number off the do-not-call list, on its owner's request.
public struct ConsoleRemoveOptOutRequest: Codable, Sendable, Equatable {
    /// The number, E.164.
    public var phoneNumber: String

    public init(phoneNumber: String) { self.phoneNumber = phoneNumber }

    enum CodingKeys: String, CodingKey {
        case phoneNumber = "phone_number"
    }
}
