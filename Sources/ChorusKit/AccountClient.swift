import ChorusAPI
import Foundation

/// The signed-in account across products. Reached through ``ChorusClient/account``.
public struct AccountClient: Sendable {
    let session: APISession

    /// A usage period for ``providerUsage(in:)``.
    public enum UsagePeriod: String, Sendable, CaseIterable {
        /// The current UTC day.
        case day
        /// The current UTC month.
        case month
    }

    /// What the user's requests and background work consumed at the AI providers in the current UTC day or month
    /// (tokens, characters, images, audio seconds) and what it cost, per feature (`calls`, `voice_messages`,
    /// `stories`), operation and model. Costs are micro-dollars (1,000,000 = $1).
    public func providerUsage(in period: UsagePeriod = .month) async throws -> ProviderUsageReport {
        try await session.send(API.Auth.providerUsage.request(query: [URLQueryItem(name: "period", value: period.rawValue)]))
    }
}
