import Foundation

/// `GET /console/api/overview`: what the system is doing, for operators.
public struct ConsoleOverviewDTO: Codable, Sendable, Equatable {
    public var generatedAt: Date
    public var calls: ConsoleCallsDTO
    public var users: ConsoleUsersDTO
    public var spend: [ConsoleSpendDTO]
    public var jobs: ConsoleJobsDTO
    public var appStoreNotifications: [ConsoleCountDTO]
    /// Each provider operation used in the last 15 minutes on the answering instance.
    public var providers: [ConsoleProviderHealthDTO]

    public init(
        generatedAt: Date, calls: ConsoleCallsDTO, users: ConsoleUsersDTO, spend: [ConsoleSpendDTO], jobs: ConsoleJobsDTO,
        appStoreNotifications: [ConsoleCountDTO], providers: [ConsoleProviderHealthDTO]
    ) {
        self.providers = providers
        self.generatedAt = generatedAt
        self.calls = calls
        self.users = users
        self.spend = spend
        self.jobs = jobs
        self.appStoreNotifications = appStoreNotifications
    }

    enum CodingKeys: String, CodingKey {
        case calls, users, spend, jobs, providers
        case generatedAt = "generated_at"
        case appStoreNotifications = "app_store_notifications"
    }
}

/// A named count.
public struct ConsoleCountDTO: Codable, Sendable, Equatable {
    public var name: String
    public var count: Int

    public init(name: String, count: Int) {
        self.name = name
        self.count = count
    }
}

/// Calls: in progress now, and today's (UTC) figures; calls per hour over the last 24 hours.
public struct ConsoleCallsDTO: Codable, Sendable, Equatable {
    public var inProgress: Int
    public var today: Int
    public var answeredToday: Int
    public var endedToday: Int
    /// Answered calls among today's ended ones, 0–1; `nil` before any ended.
    public var answerRate: Double?
    public var endedReasons: [ConsoleCountDTO]
    /// Average talk time of today's answered calls, and their average limit, seconds.
    public var averageDurationSeconds: Double?
    public var averageLimitSeconds: Double?
    /// 24 counts, oldest hour first, ending with the current hour.
    public var perHour: [Int]

    public init(
        inProgress: Int, today: Int, answeredToday: Int, endedToday: Int, answerRate: Double?, endedReasons: [ConsoleCountDTO],
        averageDurationSeconds: Double?, averageLimitSeconds: Double?, perHour: [Int]
    ) {
        self.inProgress = inProgress
        self.today = today
        self.answeredToday = answeredToday
        self.endedToday = endedToday
        self.answerRate = answerRate
        self.endedReasons = endedReasons
        self.averageDurationSeconds = averageDurationSeconds
        self.averageLimitSeconds = averageLimitSeconds
        self.perHour = perHour
    }

    enum CodingKeys: String, CodingKey {
        case today
        case inProgress = "in_progress"
        case answeredToday = "answered_today"
        case endedToday = "ended_today"
        case answerRate = "answer_rate"
        case endedReasons = "ended_reasons"
        case averageDurationSeconds = "average_duration_seconds"
        case averageLimitSeconds = "average_limit_seconds"
        case perHour = "per_hour"
    }
}

/// Accounts, and those with an active subscription by plan tier.
public struct ConsoleUsersDTO: Codable, Sendable, Equatable {
    public var total: Int
    public var byPlan: [ConsoleCountDTO]

    public init(total: Int, byPlan: [ConsoleCountDTO]) {
        self.total = total
        self.byPlan = byPlan
    }

    enum CodingKeys: String, CodingKey {
        case total
        case byPlan = "by_plan"
    }
}

/// One feature's provider spend against its budgets, micro-dollars; the last 14 UTC days, oldest first.
public struct ConsoleSpendDTO: Codable, Sendable, Equatable {
    public var feature: String
    public var todayUSDMicros: Int64
    public var monthUSDMicros: Int64
    public var dailyBudgetUSDMicros: Int64?
    public var monthlyBudgetUSDMicros: Int64?
    public var perDay: [Int64]

    public init(
        feature: String, todayUSDMicros: Int64, monthUSDMicros: Int64, dailyBudgetUSDMicros: Int64?, monthlyBudgetUSDMicros: Int64?,
        perDay: [Int64]
    ) {
        self.feature = feature
        self.todayUSDMicros = todayUSDMicros
        self.monthUSDMicros = monthUSDMicros
        self.dailyBudgetUSDMicros = dailyBudgetUSDMicros
        self.monthlyBudgetUSDMicros = monthlyBudgetUSDMicros
        self.perDay = perDay
    }

    enum CodingKeys: String, CodingKey {
        case feature
        case todayUSDMicros = "today_usd_micros"
        case monthUSDMicros = "month_usd_micros"
        case dailyBudgetUSDMicros = "daily_budget_usd_micros"
        case monthlyBudgetUSDMicros = "monthly_budget_usd_micros"
        case perDay = "per_day"
    }
}

/// The durable job queue.
public struct ConsoleJobsDTO: Codable, Sendable, Equatable {
    public var pending: Int
    public var running: Int
    public var failed: Int
    /// Failed jobs by kind.
    public var failedByKind: [ConsoleCountDTO]

    public init(pending: Int, running: Int, failed: Int, failedByKind: [ConsoleCountDTO]) {
        self.pending = pending
        self.running = running
        self.failed = failed
        self.failedByKind = failedByKind
    }

    enum CodingKeys: String, CodingKey {
        case pending, running, failed
        case failedByKind = "failed_by_kind"
    }
}

/// One audited operator action.
public struct ConsoleAuditEntryDTO: Codable, Sendable, Equatable {
    public var id: Int
    public var actor: String
    public var action: String
    public var target: String
    public var detail: String?
    public var createdAt: Date

    public init(id: Int, actor: String, action: String, target: String, detail: String?, createdAt: Date) {
        self.id = id
        self.actor = actor
        self.action = action
        self.target = target
        self.detail = detail
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case id, actor, action, target, detail
        case createdAt = "created_at"
    }
}

/// `GET /console/api/audit`.
public struct ConsoleAuditDTO: Codable, Sendable, Equatable {
    public var entries: [ConsoleAuditEntryDTO]

    public init(entries: [ConsoleAuditEntryDTO]) { self.entries = entries }
}

/// The answer to an operator action.
public struct ConsoleActionResultDTO: Codable, Sendable, Equatable {
    public var action: String
    public var target: String
    public var detail: String

    public init(action: String, target: String, detail: String) {
        self.action = action
        self.target = target
        self.detail = detail
    }
}

/// `POST /console/api/users/{user_id}/grant-calls`: extra calls for a user, valid `days` from now.
public struct ConsoleGrantCallsRequest: Codable, Sendable, Equatable {
    public var calls: Int
    public var days: Int

    public init(calls: Int, days: Int) {
        self.calls = calls
        self.days = days
    }
}

/// `GET /console/api/users/{user_id}`: an account as an operator sees it. No password; phone numbers masked.
public struct ConsoleUserDTO: Codable, Sendable, Equatable {
    public var id: String
    public var email: String
    public var role: String
    public var createdAt: Date
    /// What the app's usage screen shows the user.
    public var usage: UsageStatsResponse
    public var subscriptions: [ConsoleSubscriptionDTO]
    /// The 20 most recent calls, numbers masked.
    public var recentCalls: [CallHistoryItem]
    public var totalCalls: Int
    /// AI provider consumption this month (UTC).
    public var providerUsage: [UsageItem]
    /// App sessions (refresh-token families) not revoked.
    public var activeSessions: Int
    /// The 20 most recent stories.
    public var recentStories: [ConsoleStorySummaryDTO]

    public init(
        id: String, email: String, role: String, createdAt: Date, usage: UsageStatsResponse, subscriptions: [ConsoleSubscriptionDTO],
        recentCalls: [CallHistoryItem], totalCalls: Int, providerUsage: [UsageItem], activeSessions: Int, recentStories: [ConsoleStorySummaryDTO]
    ) {
        self.activeSessions = activeSessions
        self.recentStories = recentStories
        self.id = id
        self.email = email
        self.role = role
        self.createdAt = createdAt
        self.usage = usage
        self.subscriptions = subscriptions
        self.recentCalls = recentCalls
        self.totalCalls = totalCalls
        self.providerUsage = providerUsage
    }

    enum CodingKeys: String, CodingKey {
        case id, email, role, usage, subscriptions
        case createdAt = "created_at"
        case recentCalls = "recent_calls"
        case totalCalls = "total_calls"
        case providerUsage = "provider_usage"
        case activeSessions = "active_sessions"
        case recentStories = "recent_stories"
    }
}

/// One App Store subscription of an account.
public struct ConsoleSubscriptionDTO: Codable, Sendable, Equatable {
    public var productID: String
    public var tier: String?
    public var purchaseDate: Date
    public var expiresAt: Date
    public var willRenew: Bool
    public var active: Bool

    public init(productID: String, tier: String?, purchaseDate: Date, expiresAt: Date, willRenew: Bool, active: Bool) {
        self.productID = productID
        self.tier = tier
        self.purchaseDate = purchaseDate
        self.expiresAt = expiresAt
        self.willRenew = willRenew
        self.active = active
    }

    enum CodingKeys: String, CodingKey {
        case tier, active
        case productID = "product_id"
        case purchaseDate = "purchase_date"
        case expiresAt = "expires_at"
        case willRenew = "will_renew"
    }
}

/// A call in progress, as `GET /console/api/live` shows it (phone number masked).
public struct ConsoleLiveCallDTO: Codable, Sendable, Equatable {
    public var id: Int
    public var callSid: String?
    public var userID: String
    public var phoneNumber: String
    public var scenario: String
    /// `initiated`, `queued`, `ringing` or `in-progress`.
    public var status: String
    public var createdAt: Date
    public var answeredAt: Date?
    public var durationLimit: Int

    public init(
        id: Int, callSid: String?, userID: String, phoneNumber: String, scenario: String, status: String, createdAt: Date,
        answeredAt: Date?, durationLimit: Int
    ) {
        self.id = id
        self.callSid = callSid
        self.userID = userID
        self.phoneNumber = phoneNumber
        self.scenario = scenario
        self.status = status
        self.createdAt = createdAt
        self.answeredAt = answeredAt
        self.durationLimit = durationLimit
    }

    enum CodingKeys: String, CodingKey {
        case id, scenario, status
        case callSid = "call_sid"
        case userID = "user_id"
        case phoneNumber = "phone_number"
        case createdAt = "created_at"
        case answeredAt = "answered_at"
        case durationLimit = "duration_limit"
    }
}

/// The `calls` event of `GET /console/api/live`: every call in progress, sent when the stream opens and again
/// whenever one starts, changes or ends.
public struct ConsoleLiveDTO: Codable, Sendable, Equatable {
    public var generatedAt: Date
    public var calls: [ConsoleLiveCallDTO]

    public init(generatedAt: Date, calls: [ConsoleLiveCallDTO]) {
        self.generatedAt = generatedAt
        self.calls = calls
    }

    enum CodingKeys: String, CodingKey {
        case calls
        case generatedAt = "generated_at"
    }
}

/// One provider operation's health on the answering instance over the last 15 minutes: every exchange counts,
/// retries included. A failure is no answer, a timeout, 408, 429, a 5xx, or 401/403; other answers mean the provider
/// works.
public struct ConsoleProviderHealthDTO: Codable, Sendable, Equatable {
    /// `openai`, `elevenlabs`, `twilio`, `s3` or `openai_realtime`.
    public var provider: String
    public var operation: String
    public var calls: Int
    public var failures: Int
    /// Failures among all exchanges, 0–1.
    public var errorRate: Double
    /// `ok` (under 5 % failed), `degraded` (5 % or more) or `down` (half or more, at least 3).
    public var status: String
    public var failuresByKind: [ConsoleCountDTO]
    public var p50Ms: Int?
    public var p95Ms: Int?
    public var lastFailureAt: Date?
    public var lastFailure: String?

    public init(
        provider: String, operation: String, calls: Int, failures: Int, errorRate: Double, status: String, failuresByKind: [ConsoleCountDTO],
        p50Ms: Int?, p95Ms: Int?, lastFailureAt: Date?, lastFailure: String?
    ) {
        self.provider = provider
        self.operation = operation
        self.calls = calls
        self.failures = failures
        self.errorRate = errorRate
        self.status = status
        self.failuresByKind = failuresByKind
        self.p50Ms = p50Ms
        self.p95Ms = p95Ms
        self.lastFailureAt = lastFailureAt
        self.lastFailure = lastFailure
    }

    enum CodingKeys: String, CodingKey {
        case provider, operation, calls, failures, status
        case errorRate = "error_rate"
        case failuresByKind = "failures_by_kind"
        case p50Ms = "p50_ms"
        case p95Ms = "p95_ms"
        case lastFailureAt = "last_failure_at"
        case lastFailure = "last_failure"
    }
}

/// `GET /console/api/lookup?q=`: what one search box found. The server reads `q` as an email, a phone number (E.164,
/// spaces, dashes, dots and brackets ignored, `00` read as `+`), a Twilio call SID (`CA…`), a call id (digits) or a
/// user or story id, and answers every match: one for a unique key, several when the input is ambiguous (a number
/// several users called, an id that is both a user's and a story's).
public struct ConsoleLookupDTO: Codable, Sendable, Equatable {
    /// The input as read (trimmed; a phone number normalised to E.164).
    public var query: String
    /// `email`, `phone_number`, `call_sid`, `call_id` or `id`.
    public var keyKind: String
    public var matches: [ConsoleLookupMatchDTO]
    /// For a phone number: whether it is on the do-not-call list (looked up by its keyed hash); else `nil`.
    public var onDoNotCallList: Bool?

    public init(query: String, keyKind: String, matches: [ConsoleLookupMatchDTO], onDoNotCallList: Bool?) {
        self.query = query
        self.keyKind = keyKind
        self.matches = matches
        self.onDoNotCallList = onDoNotCallList
    }

    enum CodingKeys: String, CodingKey {
        case query, matches
        case keyKind = "key_kind"
        case onDoNotCallList = "on_do_not_call_list"
    }
}

/// One thing a console look-up found: open it with `GET /console/api/{users|calls|stories}/{id}`.
public struct ConsoleLookupMatchDTO: Codable, Sendable, Equatable {
    /// `user`, `call` or `story`.
    public var kind: String
    public var id: String
    /// A line that names it for a person (an email; a call's masked number, status and time; a story's title).
    public var label: String
    /// The owner of a call or story (the user itself for a user).
    public var userID: String
    public var userEmail: String

    public init(kind: String, id: String, label: String, userID: String, userEmail: String) {
        self.kind = kind
        self.id = id
        self.label = label
        self.userID = userID
        self.userEmail = userEmail
    }

    enum CodingKeys: String, CodingKey {
        case kind, id, label
        case userID = "user_id"
        case userEmail = "user_email"
    }
}

/// A story in an account's console view.
public struct ConsoleStorySummaryDTO: Codable, Sendable, Equatable {
    public var id: String
    public var title: String?
    public var heroName: String
    /// `in_progress`, `ready`, `failed` or `cancelled`.
    public var status: String
    public var createdAt: Date

    public init(id: String, title: String?, heroName: String, status: String, createdAt: Date) {
        self.id = id
        self.title = title
        self.heroName = heroName
        self.status = status
        self.createdAt = createdAt
    }

    enum CodingKeys: String, CodingKey {
        case id, title, status
        case heroName = "hero_name"
        case createdAt = "created_at"
    }
}

/// A job that failed for good, which an operator can run again (`POST /console/api/jobs/{job_id}/rerun`).
public struct ConsoleFailedJobDTO: Codable, Sendable, Equatable {
    public var id: Int
    public var kind: String
    public var lastError: String?

    public init(id: Int, kind: String, lastError: String?) {
        self.id = id
        self.kind = kind
        self.lastError = lastError
    }

    enum CodingKeys: String, CodingKey {
        case id, kind
        case lastError = "last_error"
    }
}

/// `GET /console/api/stories/{story_id}`: the story as the app sees it (its fields at the top level), its owner and
/// its jobs that failed for good.
public struct ConsoleStoryDetailDTO: Codable, Sendable, Equatable {
    public var story: StoryDTO
    public var userID: String
    public var userEmail: String
    public var failedJobs: [ConsoleFailedJobDTO]

    public init(story: StoryDTO, userID: String, userEmail: String, failedJobs: [ConsoleFailedJobDTO]) {
        self.story = story
        self.userID = userID
        self.userEmail = userEmail
        self.failedJobs = failedJobs
    }

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case userEmail = "user_email"
        case failedJobs = "failed_jobs"
    }

    public init(from decoder: any Decoder) throws {
        story = try StoryDTO(from: decoder)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        userID = try c.decode(String.self, forKey: .userID)
        userEmail = try c.decode(String.self, forKey: .userEmail)
        failedJobs = try c.decode([ConsoleFailedJobDTO].self, forKey: .failedJobs)
    }

    public func encode(to encoder: any Encoder) throws {
        try story.encode(to: encoder)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(userID, forKey: .userID)
        try c.encode(userEmail, forKey: .userEmail)
        try c.encode(failedJobs, forKey: .failedJobs)
    }
}
