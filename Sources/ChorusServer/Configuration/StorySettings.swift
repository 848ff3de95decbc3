import ChorusCore
import Foundation

extension ChorusConfiguration {
    /// Stories (seed 004): models, illustration pacing and limits, budgets.
    public struct StorySettings: Sendable, Equatable {
        /// The chat model writing stories, scenes, visual profiles and event suggestions (`CHORUS_STORIES_TEXT_MODEL`).
        public var textModel: String
        /// The image model drawing avatars and illustrations (`CHORUS_STORIES_IMAGE_MODEL`).
        public var imageModel: String
        /// Image size and quality sent with each picture.
        public var imageSize: String
        public var imageQuality: String
        /// The speech model narrating stories (`CHORUS_STORIES_TTS_MODEL`, default `gpt-realtime-2.1-mini` on the Realtime
        /// API; the `/v1/audio/speech` models `tts-1`, `tts-1-hd`, `gpt-4o-mini-tts…` still work until 2027-01-06).
        public var speechModel: String
        /// Moderation model used as a second opinion on user-supplied text; `nil` turns it off.
        public var moderationModel: String?
        /// Illustrations drawn at once, and the pause between batches.
        public var illustrationBatchSize: Int
        public var illustrationBatchSpacing: TimeInterval
        /// How long one picture may take before it counts as a timeout.
        public var illustrationTimeout: TimeInterval
        /// Attempts per picture (rate limits and timeouts), first included.
        public var illustrationAttempts: Int
        /// The most illustrations a story may have without and with a paid plan.
        public var freeIllustrations: Int
        public var premiumIllustrations: Int
        /// Spend limits of the feature (provider costs of all users), micro-dollars.
        public var dailyBudgetMicrodollars: Int64?
        public var monthlyBudgetMicrodollars: Int64?
        /// Story operations one user may start per UTC day (`CHORUS_STORIES_USER_DAILY_OPERATIONS`; `nil`: no limit):
        /// each story and retried illustration, and each provider call made for the user's own request (avatars, the
        /// event assistant).
        public var dailyOperationsPerUser: Int?

        static func load(from reader: inout EnvironmentReader) -> StorySettings {
            func budget(_ key: String, _ defaultUSD: Int64) -> Int64? {
                reader.value(key, default: Int64?.some(defaultUSD * 1_000_000), accepts: EnvironmentReader.dollarAmount + ", or off") { text -> Int64?? in
                    if text == "off" { return .some(nil) }
                    guard let value = EnvironmentReader.microdollars(text) else { return nil }
                    return .some(value)
                }
            }
            return StorySettings(
                textModel: reader.string("CHORUS_STORIES_TEXT_MODEL") ?? "gpt-5.4-mini",
                imageModel: reader.string("CHORUS_STORIES_IMAGE_MODEL") ?? "gpt-image-2",
                imageSize: reader.string("CHORUS_STORIES_IMAGE_SIZE") ?? "1024x1024",
                imageQuality: reader.string("CHORUS_STORIES_IMAGE_QUALITY") ?? "medium",
                speechModel: reader.string("CHORUS_STORIES_TTS_MODEL") ?? "gpt-realtime-2.1-mini",
                moderationModel: reader.value("CHORUS_STORIES_MODERATION_MODEL", default: String?.some("omni-moderation-latest"), accepts: "a model name, or off") {
                    $0 == "off" ? String?.none : String?.some($0)
                },
                illustrationBatchSize: reader.value("CHORUS_STORIES_ILLUSTRATION_BATCH", default: 3, parse: EnvironmentReader.integer(in: 1...8)),
                illustrationBatchSpacing: reader.value(
                    "CHORUS_STORIES_ILLUSTRATION_SPACING_SECONDS", default: 2, parse: EnvironmentReader.number(in: 0...60, of: "seconds")),
                illustrationTimeout: reader.value(
                    "CHORUS_STORIES_ILLUSTRATION_TIMEOUT_SECONDS", default: 30, parse: EnvironmentReader.number(above: 0, atMost: 600, of: "seconds")),
                illustrationAttempts: reader.value("CHORUS_STORIES_ILLUSTRATION_ATTEMPTS", default: 4, parse: EnvironmentReader.integer(in: 1...10)),
                freeIllustrations: reader.value("CHORUS_STORIES_FREE_ILLUSTRATIONS", default: 3, parse: EnvironmentReader.integer(in: 0...8)),
                premiumIllustrations: reader.value("CHORUS_STORIES_PREMIUM_ILLUSTRATIONS", default: 8, parse: EnvironmentReader.integer(in: 0...8)),
                dailyBudgetMicrodollars: budget("CHORUS_STORIES_DAILY_BUDGET_USD", 50),
                monthlyBudgetMicrodollars: budget("CHORUS_STORIES_MONTHLY_BUDGET_USD", 1_000),
                dailyOperationsPerUser: reader.countOrOff("CHORUS_STORIES_USER_DAILY_OPERATIONS", default: 300, in: 0...10_000_000))
        }

        /// The feature's limits (``ProductLimits``).
        public var limits: ProductLimits {
            ProductLimits(
                budget: FeatureBudget(dailyMicrodollars: dailyBudgetMicrodollars, monthlyMicrodollars: monthlyBudgetMicrodollars),
                userDailyOperations: dailyOperationsPerUser)
        }
    }
}
