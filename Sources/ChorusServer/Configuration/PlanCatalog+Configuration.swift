import ChorusCore
import Foundation

extension PlanCatalog {
    /// The standard plans with the `CHORUS_TRIAL_*`, `CHORUS_BASIC_*`, `CHORUS_PREMIUM_*` and `CHORUS_ADDON_*` overrides.
    static func load(from reader: inout EnvironmentReader) -> PlanCatalog {
        var catalog = PlanCatalog.standard
        let positive = EnvironmentReader.integer(in: 1...Int.max)
        let nonNegative = EnvironmentReader.integer(in: 0...Int.max)
        // Days become seconds: at most 100 years, so the product always fits (a larger value is refused, not trapped on).
        let days = EnvironmentReader.integer(in: 1...36_500, of: "days")
        catalog.trial.calls = reader.value("CHORUS_TRIAL_CALLS", default: catalog.trial.calls, parse: nonNegative)
        catalog.trial.period = TimeInterval(reader.value("CHORUS_TRIAL_DAYS", default: 7, parse: days) * 86_400)
        catalog.trial.durationLimitSeconds = reader.value("CHORUS_TRIAL_CALL_SECONDS", default: 60, parse: positive)
        for tier in PlanTier.allCases {
            let prefix = "CHORUS_\(tier.rawValue.uppercased())"
            var terms = catalog.plan(tier)
            terms.callsPerCycle = reader.value("\(prefix)_CALLS", default: terms.callsPerCycle, parse: positive)
            terms.durationLimitSeconds = reader.value("\(prefix)_CALL_SECONDS", default: terms.durationLimitSeconds, parse: positive)
            terms.price = reader.string("\(prefix)_PRICE") ?? terms.price
            terms.productID = reader.string("\(prefix)_PRODUCT_ID") ?? terms.productID
            if let legacy = reader.string("\(prefix)_LEGACY_PRODUCT_IDS") {
                terms.legacyProductIDs = legacy.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            }
            switch tier {
            case .basic: catalog.basic = terms
            case .premium: catalog.premium = terms
            }
        }
        catalog.addon.calls = reader.value("CHORUS_ADDON_CALLS", default: catalog.addon.calls, parse: positive)
        catalog.addon.validity = TimeInterval(reader.value("CHORUS_ADDON_DAYS", default: 30, parse: days) * 86_400)
        catalog.addon.price = reader.string("CHORUS_ADDON_PRICE") ?? catalog.addon.price
        catalog.addon.productID = reader.string("CHORUS_ADDON_PRODUCT_ID") ?? catalog.addon.productID
        catalog.addon.durationLimitWithoutPlanSeconds = reader.value(
            "CHORUS_ADDON_CALL_SECONDS", default: catalog.addon.durationLimitWithoutPlanSeconds, parse: positive
        )
        return catalog
    }
}
