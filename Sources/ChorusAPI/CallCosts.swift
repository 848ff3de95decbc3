import Foundation

/// `GET /console/api/calls/{call_id}`: a call's detail as the app sees it (the number masked) with what it cost.
public struct ConsoleCallDetailDTO: Codable, Sendable, Equatable {
    public var detail: CallDetailResponse
    public var cost: UsageCostDTO

    public init(detail: CallDetailResponse, cost: UsageCostDTO) {
        self.detail = detail
        self.cost = cost
    }

    enum CodingKeys: String, CodingKey {
        case cost
    }

    /// The detail's fields sit at the top level, next to `cost`.
    public init(from decoder: any Decoder) throws {
        detail = try CallDetailResponse(from: decoder)
        cost = try decoder.container(keyedBy: CodingKeys.self).decode(UsageCostDTO.self, forKey: .cost)
    }

    public func encode(to encoder: any Encoder) throws {
        try detail.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(cost, forKey: .cost)
    }
}
