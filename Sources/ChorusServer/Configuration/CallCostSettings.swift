import ChorusCore
import Foundation

extension ChorusConfiguration {
    /// What calls may spend (issue 18): the Calls budget across all users, micro-dollars per UTC day and month
    /// (`CHORUS_CALLS_DAILY_BUDGET_USD`, default 250; `CHORUS_CALLS_MONTHLY_BUDGET_USD`, default 5,000; `off`: no
    /// limit). Every call reserves its estimate (``PriceTable/callEstimateMicrodollars(model:telephonyProvider:durationSeconds:)``)
    /// before the telephony provider is asked to place it; a call whose estimate does not fit is refused with 503.
    public struct CallCostSettings: Sendable, Equatable {
        public var dailyBudgetMicrodollars: Int64?
        public var monthlyBudgetMicrodollars: Int64?
        /// The telephony provider's key in the price table (`telephony_usd_per_minute`).
        public var telephonyProvider = "twilio"

        public init(dailyBudgetMicrodollars: Int64?, monthlyBudgetMicrodollars: Int64?) {
            self.dailyBudgetMicrodollars = dailyBudgetMicrodollars
            self.monthlyBudgetMicrodollars = monthlyBudgetMicrodollars
        }

        public static let standard = CallCostSettings(dailyBudgetMicrodollars: 250_000_000, monthlyBudgetMicrodollars: 5_000_000_000)

        /// The Calls budget.
        public var budget: FeatureBudget {
            FeatureBudget(dailyMicrodollars: dailyBudgetMicrodollars, monthlyMicrodollars: monthlyBudgetMicrodollars)
        }

        static func load(from reader: inout EnvironmentReader) -> CallCostSettings {
            func budget(_ key: String, _ defaultMicros: Int64?) -> Int64? {
                reader.value(key, default: defaultMicros, accepts: EnvironmentReader.dollarAmount + ", or off") { text -> Int64?? in
                    if text == "off" { return .some(nil) }
                    guard let value = EnvironmentReader.microdollars(text) else { return nil }
                    return .some(value)
                }
            }
            return CallCostSettings(
                dailyBudgetMicrodollars: budget("CHORUS_CALLS_DAILY_BUDGET_USD", standard.dailyBudgetMicrodollars),
                monthlyBudgetMicrodollars: budget("CHORUS_CALLS_MONTHLY_BUDGET_USD", standard.monthlyBudgetMicrodollars))
        }
    }
}
