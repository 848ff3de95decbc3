import ChorusAPI
import ChorusCore
import Crypto
import Foundation
import Vapor

/// The operator console (`/console`, admin accounts only).
///
/// Sessions are a random token in the `chorus_console` cookie (`HttpOnly`, `SameSite=Strict`, `Path=/console`,
/// `Secure` when the public URL is https), stored hashed for 12 hours; the mobile bearer tokens are never accepted
/// here. The role is checked on every request, so `chorus admin revoke` ends a session at its next request (403).
/// Every change (`POST`) must carry the session's CSRF token in `X-CSRF-Token` or a `csrf_token` form field; the
/// sign-in form is protected by a double-submit cookie (`chorus_console_csrf`). Every operator action is audited.
struct ConsoleController: RouteCollection {
    let services: ChorusServices
    /// The model lifecycle check's last report, shown at the top of the overview.
    let modelLifecycle: ModelLifecycleWatch

    static let sessionCookie = "chorus_console"
    static let loginCookie = "chorus_console_csrf"
    static let sessionLifetime: TimeInterval = 12 * 3_600

    func boot(routes: any RoutesBuilder) throws {
        routes.on(API.Operations.consoleLoginPage, use: loginPage)
        routes.on(API.Operations.consoleLogin, use: login)
        let authed = routes.grouped(ConsoleAuthenticator(services: services))
        authed.on(API.Operations.consolePage, use: overviewPage)
        authed.on(API.Operations.consoleLogout, use: logout)
        authed.on(API.Operations.consoleOverview, use: overview)
        authed.on(API.Operations.consoleLive, use: live)
        authed.on(API.Operations.consoleAudit, use: audit)
        authed.on(API.Operations.consoleUser, use: user)
        authed.on(API.Operations.consoleCall, use: call)
        authed.on(API.Operations.consoleStory, use: story)
        authed.on(API.Operations.consoleLookup, use: lookup)
        authed.on(API.Operations.consoleRevokeSessions, use: revokeSessions)
        authed.on(API.Operations.consoleGrantCalls, use: grantCalls)
        authed.on(API.Operations.consoleRefundCall, use: refundCall)
        authed.on(API.Operations.consoleRerunJob, use: rerunJob)
        authed.on(API.Operations.consoleReports, use: reports)
        authed.on(API.Operations.consoleReportStatus, use: changeReportStatus)
        authed.on(API.Operations.consoleOptOuts, use: optOuts)
        authed.on(API.Operations.consoleRemoveOptOut, use: removeOptOut)
    }

    // MARK: - Signing in

    @Sendable
    func loginPage(_ req: Request) async throws -> Response {
        let token = ChorusApp.randomHex(64)
        let response = Self.html(ConsolePages.login(csrfToken: token, message: req.query[String.self, at: "message"]))
        response.cookies[Self.loginCookie] = cookie(token, maxAge: 600)
        return response
    }

    /// The sign-in form: email, password and the form's CSRF token (which must equal the `chorus_console_csrf`
    /// cookie). Only admins get a session; others get 403.
    @Sendable
    func login(_ req: Request) async throws -> Response {
        if let limit = services.configuration.rateLimits.auth {
            try await services.checkSharedRateLimit("console-auth:\(req.clientIP)", limit, store: req.store, logger: req.logger)
        }
        struct Form: Decodable {
            var email: String?
            var password: String?
            var csrfToken: String?

            enum CodingKeys: String, CodingKey {
                case email, password
                case csrfToken = "csrf_token"
            }
        }
        let form = (try? req.content.decode(Form.self, as: .urlEncodedForm)) ?? Form()
        guard let expected = req.cookies[Self.loginCookie]?.string, let presented = form.csrfToken, ConstantTime.equals(expected, presented)
        else { return Self.html(ConsolePages.message("The sign-in form expired. Please reload the page and try again."), status: .forbidden) }
        let email = (form.email ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        let user = email.isEmpty ? nil : try await req.store.accounts.user(email: email)
        let valid = try await services.passwords.verify(form.password ?? "", against: user?.passwordHash, on: req.application.threadPool)
        guard valid, let user else {
            req.logger.notice("console sign-in failed")
            return Self.redirect("/console/login?message=Incorrect%20email%20or%20password")
        }
        guard try await req.store.console.role(userID: user.id) == "admin" else {
            req.logger.notice("console sign-in refused: not an admin", metadata: ["user_id": .string(user.id)])
            return Self.html(ConsolePages.message("This account is not an administrator of the console."), status: .forbidden)
        }
        let (token, tokenHash) = TokenIssuer.newOpaqueToken()
        let now = services.now()
        try await req.store.console.createConsoleSession(
            tokenHash: tokenHash, userID: user.id, csrfToken: ChorusApp.randomHex(64), now: now,
            expiresAt: now.addingTimeInterval(Self.sessionLifetime))
        req.logger.notice("console sign-in", metadata: ["user_id": .string(user.id)])
        let response = Self.redirect("/console")
        response.cookies[Self.sessionCookie] = cookie(token, maxAge: Int(Self.sessionLifetime))
        response.cookies[Self.loginCookie] = cookie("", maxAge: 0)
        return response
    }

    @Sendable
    func logout(_ req: Request) async throws -> Response {
        if let token = req.cookies[Self.sessionCookie]?.string {
            try await req.store.console.deleteConsoleSession(tokenHash: TokenIssuer.hash(opaqueToken: token))
        }
        let response = Self.redirect("/console/login")
        response.cookies[Self.sessionCookie] = cookie("", maxAge: 0)
        return response
    }

    private func cookie(_ value: String, maxAge: Int) -> HTTPCookies.Value {
        HTTPCookies.Value(
            string: value, maxAge: maxAge, path: "/console", isSecure: services.configuration.publicURL.scheme == "https", isHTTPOnly: true,
            sameSite: .strict)
    }

    // MARK: - Pages

    @Sendable
    func overviewPage(_ req: Request) async throws -> Response {
        Self.html(
            ConsolePages.overview(
                email: try req.consoleSession.email, csrfToken: try req.consoleSession.csrfToken,
                modelLifecycle: ConsolePages.modelLifecycle(modelLifecycle.latest, models: modelLifecycle.models.count)))
    }

    // MARK: - API

    /// Calls, accounts by current plan, spend against budgets, the job queue, App Store notifications and provider health.
    @Sendable
    func overview(_ req: Request) async throws -> ConsoleOverviewDTO {
        let now = services.now()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let dayStart = calendar.startOfDay(for: now)
        let currentHour = now.epochMillis / 3_600_000
        let hoursSince = Self.chartStart(now)
        let spendSince = "day:" + VoiceUsagePolicy.period(now.addingTimeInterval(-13 * 86_400), monthly: false)
        let figures = try await req.store.console.consoleFigures(now: now, dayStart: dayStart, hoursSince: hoursSince, spendSince: spendSince)

        let calls = ConsoleCallsDTO(
            inProgress: figures.callsInProgress, today: figures.callsToday, answeredToday: figures.answeredToday, endedToday: figures.endedToday,
            answerRate: figures.endedToday == 0 ? nil : Double(figures.answeredToday) / Double(figures.endedToday),
            endedReasons: figures.endedReasons.map { ConsoleCountDTO(name: $0.0, count: $0.1) },
            averageDurationSeconds: figures.averageDuration, averageLimitSeconds: figures.averageLimit,
            perHour: (0..<24).map { figures.callsPerHour[currentHour - 23 + Int64($0)] ?? 0 })
        let tiers = try await Self.usersByPlan(req.store, services.entitlements, now: now)
        let users = ConsoleUsersDTO(
            total: figures.users, byPlan: tiers.sorted { $0.key < $1.key }.map { ConsoleCountDTO(name: $0.key, count: $0.value) })
        let days = (0..<14).map { "day:" + VoiceUsagePolicy.period(now.addingTimeInterval(Double($0 - 13) * 86_400), monthly: false) }
        let settings = services.configuration
        var spend: [ConsoleSpendDTO] = []
        for feature in MeteredFeature.allCases {
            let spent = try await req.store.metering.featureSpend(feature, at: now)
            let budget: (Int64?, Int64?) =
                switch feature {
                case .stories: (settings.stories.dailyBudgetMicrodollars, settings.stories.monthlyBudgetMicrodollars)
                case .voiceMessages: (settings.voiceMessages.dailyBudgetMicrodollars, settings.voiceMessages.monthlyBudgetMicrodollars)
                case .calls: (settings.callCosts.dailyBudgetMicrodollars, settings.callCosts.monthlyBudgetMicrodollars)
                }
            let perDay = figures.spendPerDay[feature.rawValue] ?? [:]
            spend.append(
                ConsoleSpendDTO(
                    feature: feature.rawValue, todayUSDMicros: spent.day, monthUSDMicros: spent.month, dailyBudgetUSDMicros: budget.0,
                    monthlyBudgetUSDMicros: budget.1, perDay: days.map { perDay[$0] ?? 0 }))
        }
        let jobs = ConsoleJobsDTO(
            pending: figures.jobs["pending"] ?? 0, running: figures.jobs["running"] ?? 0, failed: figures.jobs["failed"] ?? 0,
            failedByKind: figures.failedJobsByKind.map { ConsoleCountDTO(name: $0.0, count: $0.1) })
        return ConsoleOverviewDTO(
            generatedAt: now, calls: calls, users: users, spend: spend, jobs: jobs,
            appStoreNotifications: figures.notifications.map { ConsoleCountDTO(name: $0.0, count: $0.1) },
            providers: services.providerHealth.figures().map { item in
                ConsoleProviderHealthDTO(
                    provider: item.provider, operation: item.operation, calls: item.calls, failures: item.failures,
                    errorRate: item.errorRate, status: item.status.rawValue,
                    failuresByKind: item.failuresByKind.sorted { $0.key < $1.key }.map { ConsoleCountDTO(name: $0.key, count: $0.value) },
                    p50Ms: item.p50Milliseconds, p95Ms: item.p95Milliseconds, lastFailureAt: item.lastFailureAt, lastFailure: item.lastFailure)
            })
    }

    /// Users with an active plan, by the tier of the plan that decides their limits now (``EntitlementEvaluator/current``):
    /// a user who upgraded from basic to premium holds both subscriptions until the basic one lapses, and counts once,
    /// as premium.
    static func usersByPlan(_ store: ChorusStore, _ entitlements: EntitlementEvaluator, now: Date) async throws -> [String: Int] {
        let byUser = Dictionary(grouping: try await store.console.possiblyActiveSubscriptions(now: now), by: \.userID)
        var tiers: [String: Int] = [:]
        for subscriptions in byUser.values {
            if let current = entitlements.current(subscriptions.map(\.snapshot), at: now), current.isActive {
                tiers[current.tier.rawValue, default: 0] += 1
            }
        }
        return tiers
    }

    /// `GET /console/api/live`: server-sent events of the calls in progress. A `calls` event (``ConsoleLiveDTO``) when
    /// the stream opens and whenever a call starts, changes or ends (at most 4 per second), and a `transcript` event
    /// (``CallProgressDTO``) for every line spoken on a call. Every 15 s the session is checked again (a revoked
    /// operator's stream ends) and the list is sent again.
    @Sendable
    func live(_ req: Request) async throws -> Response {
        let token = req.cookies[Self.sessionCookie]?.string ?? ""
        let stream = HubEventStream(hub: services.messaging.hub, key: ChorusServices.consoleCallsChannel)
        let services = services
        let store = try req.store
        return stream.response { sse in
            var lastSent = ContinuousClock.now - .seconds(1)
            var pending = false
            func sendCalls() async throws {
                let calls = try await store.calls.liveCalls(since: Self.chartStart(services.now())).map { call in
                    ConsoleLiveCallDTO(
                        id: call.id, callSid: call.callSid, userID: call.userID, phoneNumber: Self.maskPhoneNumber(call.phoneNumber),
                        scenario: call.scenario, status: call.status.rawValue, createdAt: call.createdAt, answeredAt: call.answeredAt,
                        durationLimit: call.durationLimit)
                }
                try await sse.send("calls", ConsoleLiveDTO(generatedAt: services.now(), calls: calls))
                lastSent = .now
                pending = false
            }
            try await sendCalls()
            let decoder = ChorusJSON.makeDecoder()
            for await text in stream.events {
                if text.isEmpty {
                    guard let session = try await store.console.consoleSession(tokenHash: TokenIssuer.hash(opaqueToken: token), now: services.now()),
                        session.admin
                    else { return }
                    // The list is read again too: a call that ends without an event (released before reaching the
                    // provider) leaves it within 15 s.
                    try await sendCalls()
                } else if text == HubEventStream.recheck {
                    if pending { try await sendCalls() }
                } else if let event = try? decoder.decode(RealtimeEventDTO.self, from: Data(text.utf8)), let progress = event.call {
                    if progress.type == "transcript" {
                        try await sse.send("transcript", progress)
                    } else if ContinuousClock.now - lastSent >= .milliseconds(250) {
                        try await sendCalls()
                    } else if !pending {
                        pending = true
                        stream.wake(after: .milliseconds(250))
                    }
                }
            }
        }
    }

    /// The start of the calls-per-hour chart (the hour 23 hours before the current one); calls older than that and
    /// still not over are not counted as in progress (their final callback was lost).
    static func chartStart(_ now: Date) -> Date { Date(epochMillis: (now.epochMillis / 3_600_000 - 23) * 3_600_000) }

    /// The last 100 operator actions, newest first.
    @Sendable
    func audit(_ req: Request) async throws -> ConsoleAuditDTO {
        let entries = try await req.store.console.auditLog(limit: 100).map {
            ConsoleAuditEntryDTO(id: $0.id, actor: $0.actorEmail, action: $0.action, target: $0.target, detail: $0.detail, createdAt: $0.createdAt)
        }
        return ConsoleAuditDTO(entries: entries)
    }

    // MARK: - Drill-down

    /// An account: role, the app's usage figures, subscriptions, recent calls (numbers masked), this month's AI
    /// consumption, app sessions not revoked, recent stories. Never the password hash.
    @Sendable
    func user(_ req: Request) async throws -> ConsoleUserDTO {
        guard let id = req.parameters.get("user_id"), let account = try await req.store.console.consoleUser(id: id) else {
            throw APIError.notFound("User not found")
        }
        let now = services.now()
        let placement = CallPlacement(services: services, store: try req.store, logger: req.logger)
        let usageAccount = try await placement.account(userID: id)
        let position = services.policy.position(of: usageAccount, at: now)
        let windows = UsageWindows.of(position, registeredAt: usageAccount.registeredAt)
        let tally = try await req.store.usage.callTally(userID: id, windows: windows)
        let subscriptions = try await req.store.purchases.subscriptions(userID: id).map { record in
            ConsoleSubscriptionDTO(
                productID: record.snapshot.productID, tier: services.entitlements.tier(of: record.snapshot.productID)?.rawValue,
                purchaseDate: record.snapshot.purchaseDate, expiresAt: record.snapshot.expiresAt, willRenew: record.snapshot.willRenew,
                active: services.entitlements.entitlement(record.snapshot, at: now)?.isActive ?? false)
        }
        let history = try await req.store.calls.callHistory(userID: id, limit: 20)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let month = calendar.dateInterval(of: .month, for: now)?.start ?? now
        return ConsoleUserDTO(
            id: id, email: account.email, role: account.role, createdAt: account.createdAt,
            usage: UsageReport.usageStats(position, account: usageAccount, windows: windows, tally: tally), subscriptions: subscriptions,
            recentCalls: history.calls.compactMap(\.historyItem).map(Self.masked), totalCalls: history.total,
            providerUsage: try await req.store.metering.usageTotals(userID: id, since: month).map(UsageItem.init),
            activeSessions: try await req.store.console.activeSessionCount(userID: id),
            recentStories: try await req.store.stories.stories(userID: id, before: nil, limit: 20).map { story in
                ConsoleStorySummaryDTO(
                    id: story.id, title: story.title, heroName: story.snapshot.heroName, status: Self.storyStatus(story), createdAt: story.createdAt)
            })
    }

    /// A call: timeline, ended reason, transcript, latency figures, what it cost (issue 18); the number masked.
    @Sendable
    func call(_ req: Request) async throws -> ConsoleCallDetailDTO {
        guard let id = req.parameters.get("call_id", as: Int.self), let record = try await req.store.calls.call(id: id),
            var detail = try await CallsController.detail(record, store: req.store)
        else { throw APIError.notFound("Call not found") }
        detail.call = Self.masked(detail.call)
        let costs = try await req.store.metering.subjectCosts(CallCosts.subject(id))
        return ConsoleCallDetailDTO(detail: detail, cost: UsageCostDTO(usdMicros: costs.clampedSum { $0.usdMicros }, items: costs.map(UsageItem.init)))
    }

    /// A story: its stages, text, scenes, files and costs, its owner and its jobs that failed for good.
    @Sendable
    func story(_ req: Request) async throws -> ConsoleStoryDetailDTO {
        guard let id = req.parameters.get("story_id"), let record = try await req.store.stories.story(id: id, userID: nil), record.cancelledAt == nil,
            let email = try await req.store.console.consoleUserEmail(id: record.userID)
        else {
            throw APIError.notFound("Story not found")
        }
        return ConsoleStoryDetailDTO(
            story: try await services.storyDTO(record, store: req.store), userID: record.userID, userEmail: email,
            failedJobs: try await req.store.console.failedJobs(storyID: id).map { ConsoleFailedJobDTO(id: $0.id, kind: $0.kind, lastError: $0.lastError) })
    }

    static func masked(_ item: CallHistoryItem) -> CallHistoryItem {
        var item = item
        item.phoneNumber = maskPhoneNumber(item.phoneNumber)
        return item
    }

    /// `+14155550123` → `+14•••••••23`: the country code's first digits and the last two stay.
    static func maskPhoneNumber(_ number: String) -> String {
        let characters = Array(number)
        guard characters.count > 5 else { return String(repeating: "•", count: characters.count) }
        return String(characters.prefix(3)) + String(repeating: "•", count: characters.count - 5) + String(characters.suffix(2))
    }

    /// Signs a user out everywhere: their app sessions (refresh tokens, and access tokens at their next request here,
    /// within ``SessionCheck/lifetime`` on other instances) and console sessions. Audited.
    @Sendable
    func revokeSessions(_ req: Request) async throws -> ConsoleActionResultDTO {
        let operator_ = try req.consoleSession
        guard let userID = req.parameters.get("user_id"), try await req.store.accounts.userExists(id: userID) else {
            throw APIError.notFound("User not found")
        }
        let now = services.now()
        let revoked = try await req.store.console.revokeAllSessions(userID: userID, now: now)
        services.sessions.forgetAll()  // the user's access tokens stop working now, not when they expire
        let detail = "\(revoked) app session\(revoked == 1 ? "" : "s") revoked"
        try await audited(req, operator_, action: "revoke_sessions", target: "user:\(userID)", detail: detail)
        return ConsoleActionResultDTO(action: "revoke_sessions", target: "user:\(userID)", detail: detail)
    }

    /// Adds calls to a user's quota: an add-on bucket of `calls` (1–100) valid `days` (1–365) from now. Audited.
    @Sendable
    func grantCalls(_ req: Request) async throws -> ConsoleActionResultDTO {
        let operator_ = try req.consoleSession
        let body = try req.body(of: API.Operations.consoleGrantCalls)
        var errors: [FieldError] = []
        if !(1...100).contains(body.calls) { errors.append(FieldError(field: "calls", message: "Use 1 to 100")) }
        if !(1...365).contains(body.days) { errors.append(FieldError(field: "days", message: "Use 1 to 365")) }
        guard errors.isEmpty else { throw APIError.validation(summary: "The grant is not valid", errors: errors) }
        guard let userID = req.parameters.get("user_id"), try await req.store.accounts.userExists(id: userID) else {
            throw APIError.notFound("User not found")
        }
        let now = services.now()
        let bucket = QuotaBucket(
            key: QuotaBucket.addonKey(transactionID: "console-\(UUID().uuidString.lowercased())"), kind: .addon, periodStart: now,
            periodEnd: now.addingTimeInterval(Double(body.days) * 86_400), capacity: body.calls, used: 0)
        try await req.store.usage.insertBucket(bucket, userID: userID)
        let detail = "\(body.calls) call\(body.calls == 1 ? "" : "s") for \(body.days) day\(body.days == 1 ? "" : "s")"
        try await audited(req, operator_, action: "grant_calls", target: "user:\(userID)", detail: detail)
        return ConsoleActionResultDTO(action: "grant_calls", target: "user:\(userID)", detail: detail)
    }

    /// Gives a charged call back to its user's quota (once: concurrent refunds of one call refund it once). Audited.
    @Sendable
    func refundCall(_ req: Request) async throws -> ConsoleActionResultDTO {
        let operator_ = try req.consoleSession
        guard let id = req.parameters.get("call_id", as: Int.self) else { throw APIError.notFound("Call not found") }
        switch try await req.store.console.refundCall(id: id, now: services.now()) {
        case .notFound: throw APIError.notFound("Call not found")
        case .notCharged: throw APIError.detail(.conflict, "This call is not charged (never charged, or refunded already)")
        case .refunded(let userID):
            let detail = "1 call returned to user \(userID)"
            try await audited(req, operator_, action: "refund_call", target: "call:\(id)", detail: detail)
            return ConsoleActionResultDTO(action: "refund_call", target: "call:\(id)", detail: detail)
        }
    }

    /// Runs a failed job again, now, with its attempts reset. Audited.
    @Sendable
    func rerunJob(_ req: Request) async throws -> ConsoleActionResultDTO {
        let operator_ = try req.consoleSession
        guard let id = req.parameters.get("job_id", as: Int.self) else { throw APIError.notFound("Job not found") }
        guard try await req.store.console.rerunFailedJob(id: id, now: services.now()) else {
            throw APIError.detail(.conflict, "Only a failed job can be run again")
        }
        services.jobSignal.notify()
        try await audited(req, operator_, action: "rerun_job", target: "job:\(id)", detail: "queued")
        return ConsoleActionResultDTO(action: "rerun_job", target: "job:\(id)", detail: "queued")
    }

    func audited(_ req: Request, _ operator_: ConsoleSession, action: String, target: String, detail: String) async throws {
        try await req.store.console.recordAudit(actor: operator_, action: action, target: target, detail: detail, now: services.now())
        req.logger.notice("console action", metadata: ["action": .string(action), "target": .string(target), "operator": .string(operator_.userID)])
    }

    // MARK: - Helpers

    static func html(_ body: String, status: HTTPResponseStatus = .ok) -> Response {
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .contentType, value: "text/html; charset=utf-8")
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        headers.replaceOrAdd(
            name: "Content-Security-Policy",
            value:
                "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' blob:; frame-ancestors 'none'"
        )
        return Response(status: status, headers: headers, body: .init(string: body))
    }

    static func redirect(_ location: String) -> Response {
        var headers = HTTPHeaders()
        headers.replaceOrAdd(name: .location, value: location)
        headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return Response(status: .seeOther, headers: headers)
    }
}

/// Admits console requests with a live session of an admin; checks the CSRF token of every change.
struct ConsoleAuthenticator: AsyncMiddleware {
    let services: ChorusServices

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let wantsPage = request.method == .GET && !request.url.path.hasPrefix("/console/api")
        guard let token = request.cookies[ConsoleController.sessionCookie]?.string, !token.isEmpty,
            let (session, admin) = try await request.store.console.consoleSession(tokenHash: TokenIssuer.hash(opaqueToken: token), now: services.now())
        else {
            if wantsPage { return ConsoleController.redirect("/console/login") }
            throw APIError.detail(.unauthorized, "Sign in to the console first")
        }
        guard admin else { throw APIError.detail(.forbidden, "This account is not an administrator of the console") }
        if request.method != .GET && request.method != .HEAD {
            let presented =
                request.headers.first(name: "X-CSRF-Token")
                ?? (try? request.content.get(String.self, at: "csrf_token"))
            guard let presented, ConstantTime.equals(presented, session.csrfToken) else {
                request.logger.warning("console change refused: missing or wrong CSRF token")
                throw APIError.detail(.forbidden, "Missing or invalid CSRF token")
            }
        }
        request.storage[ConsoleSessionKey.self] = session
        return try await next.respond(to: request)
    }
}

struct ConsoleSessionKey: StorageKey {
    typealias Value = ConsoleSession
}

extension Request {
    /// The operator of a console request (set by ``ConsoleAuthenticator``).
    var consoleSession: ConsoleSession {
        get throws {
            guard let session = storage[ConsoleSessionKey.self] else { throw APIError.detail(.unauthorized, "Sign in to the console first") }
            return session
        }
    }
}
