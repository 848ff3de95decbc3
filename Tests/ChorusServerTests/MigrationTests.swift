import FluentKit
import Testing

@testable import ChorusServer

@Suite struct MigrationTests {
    /// Fluent records each migration's name in the database and runs every name it has not recorded: renaming one
    /// (its type, or its module) would run it again on an existing database. The names and their order are fixed.
    @Test func namesAndOrderAreFixed() {
        #expect(ChorusMigrations.all.map(\.name) == [
            "ChorusServer.CreateAccounts",
            "ChorusServer.CreateCalls",
            "ChorusServer.CreatePurchases",
            "ChorusServer.CreateJobs",
            "ChorusServer.CreateCallBridge",
            "ChorusServer.CreateSubscriptionLifecycle",
            "ChorusServer.CreateMessaging",
            "ChorusServer.AddSpeechCacheExpiry",
            "ChorusServer.CreateMetering",
            "ChorusServer.CreateStories",
            "ChorusServer.CreateConsole",
            "ChorusServer.CreateConversationInvitations",
            "ChorusServer.CreateUsageLimits",
            "ChorusServer.CreateContentReports",
            "ChorusServer.CreateNumberLimits",
            "ChorusServer.AddScenarioVoicemail",
            "ChorusServer.CreateDoNotCall",
            "ChorusServer.CreateRateLimitWindows",
            "ChorusServer.CreateCallCosts",
            "ChorusServer.AddVoiceProfileConfirmation",
            "ChorusServer.CreatePlaybacks",
        ])
    }
}
