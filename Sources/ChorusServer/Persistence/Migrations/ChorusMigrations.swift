import FluentKit

/// The schema, one migration per table group. Timestamps are stored as epoch milliseconds (BIGINT) so every
/// comparison is dialect-neutral and exact; ids of user-facing rows are auto-increment integers (the contract's
/// `id`/`schedule_id` are numbers), users are UUID strings.
enum ChorusMigrations {
    static let all: [any Migration] = [
        CreateAccounts(),
        CreateCalls(),
        CreatePurchases(),
        CreateJobs(),
        CreateCallBridge(),
        CreateSubscriptionLifecycle(),
        CreateMessaging(),
        AddSpeechCacheExpiry(),
        CreateMetering(),
        CreateStories(),
        CreateConsole(),
        CreateConversationInvitations(),
        CreateUsageLimits(),
        CreateContentReports(),
        CreateNumberLimits(),
        AddScenarioVoicemail(),
        CreateDoNotCall(),
        CreateRateLimitWindows(),
        CreateCallCosts(),
        AddVoiceProfileConfirmation(),
        CreatePlaybacks(),
    ]
}
