import Foundation

/// What a call cost (issue 18): its metered provider usage (the realtime model's responses, the telephony minutes),
/// micro-dollars, per operation and model.
public struct CallCostDTO: Codable, Sendable, Equatable {
    public var usdMicros: Int64
    public var items: [UsageItem]

    public init(usdMicros: Int64, items: [UsageItem]) {
        self.usdMicros = usdMicros
        self.items = items
    }

    enum CodingKeys: String, CodingKey {
        case items
        case usdMicros = "usd_micros"
    }
}

/// `GET /console/api/calls/{call_id}`: a call's detail as the app sees it (the number masked) with what it cost.
public struct ConsoleCallDetailDTO: Codable, Sendable, Equatable {
    public var detail: CallDetailResponse
    public var cost: CallCostDTO

    public init(detail: CallDetailResponse, cost: CallCostDTO) {
        self.detail = detail
        self.cost = cost
    }

    enum CodingKeys: String, CodingKey {
        case cost
    }

    /// The detail's fields sit at the top level, next to `cost`.
    public init(from decoder: any Decoder) throws {
        detail = try CallDetailResponse(from: decoder)
        cost = try decoder.container(keyedBy: CodingKeys.self).decode(CallCostDTO.self, forKey: .cost)
    }

    public func encode(to encoder: any Encoder) throws {
        try detail.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(cost, forKey: .cost)
    }
}
