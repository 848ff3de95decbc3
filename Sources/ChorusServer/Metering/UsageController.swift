import ChorusAPI
import ChorusCore
import Foundation
import Vapor

/// `GET /me/usage?period=day|month`: the signed-in user's provider consumption and its cost in the current UTC day or
/// month (default), per feature, operation and model.
struct UsageController: RouteCollection {
    let services: ChorusServices

    func boot(routes: any RoutesBuilder) throws {
        routes.grouped(UserAuthenticator(services: services)).on(API.Auth.providerUsage, use: usage)
    }

    @Sendable
    func usage(_ req: Request) async throws -> ProviderUsageReport {
        let user = try req.user
        let period = req.query[String.self, at: "period"] ?? "month"
        guard period == "day" || period == "month" else { throw APIError.invalid("period", "Use day or month") }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let now = services.now()
        let since = calendar.dateInterval(of: period == "day" ? .day : .month, for: now)?.start ?? now
        let totals = try await req.store.metering.usageTotals(userID: user.id, since: since)
        let features = MeteredFeature.allCases.compactMap { feature -> FeatureUsage? in
            let items = totals.filter { $0.feature == feature }
            guard !items.isEmpty else { return nil }
            return FeatureUsage(
                feature: feature.rawValue, usdMicros: items.clampedSum { $0.usdMicros },
                items: items.map(UsageItem.init))
        }
        return ProviderUsageReport(period: period, since: since, totalUSDMicros: features.clampedSum { $0.usdMicros }, features: features)
    }
}

extension UsageItem {
    /// The wire form of one row of totals.
    init(_ total: UsageTotal) {
        self.init(
            operation: total.operation.rawValue, model: total.model, calls: total.calls, inputTokens: total.consumption.inputTokens,
            outputTokens: total.consumption.outputTokens, characters: total.consumption.characters, images: total.consumption.images,
            audioSeconds: total.consumption.audioSeconds, usdMicros: total.usdMicros)
    }
}
