extension API.Operations {
    // MARK: The server

    /// `GET /health`: 200 once migrations ran and the database answers, 503 (same body) otherwise.
    public static let health = Endpoint<NoContent, HealthResponse>(.get, "/health")
    /// `GET /openapi.json`: the contract bundled with the server (served as stored).
    public static let openAPI = Endpoint<NoContent, RawContent>(.get, "/openapi.json")
    /// `GET /metrics`: Prometheus text for a scraper with the metrics token.
    public static let metrics = Endpoint<NoContent, RawContent>(.get, "/metrics")
    /// `GET /playground`: the browser playground's page.
    public static let playground = Endpoint<NoContent, RawContent>(.get, "/playground")
    /// `GET /assets/{file}`: a stylesheet or module of the console and playground, with an `ETag`.
    public static let asset = Endpoint<NoContent, RawContent>(.get, "/assets/{file}")
    /// `GET /`: outside production, a page saying what this server is, with links (absent in production).
    public static let home = Endpoint<NoContent, RawContent>(.get, "/")
    /// `GET /favicon.ico`: the icon of the HTML pages (ICO), cached, with an `ETag`.
    public static let favicon = Endpoint<NoContent, RawContent>(.get, "/favicon.ico")
    /// `GET /favicon.svg`: the same icon as SVG, which the pages link.
    public static let faviconSVG = Endpoint<NoContent, RawContent>(.get, "/favicon.svg")

    // MARK: The console's pages

    /// `GET /console/login`: the sign-in page.
    public static let consoleLoginPage = Endpoint<NoContent, RawContent>(.get, "/console/login")
    /// `POST /console/login`: the sign-in form; 303 to the console with a session cookie.
    public static let consoleLogin = Endpoint<RawContent, RawContent>(.post, "/console/login", status: 303)
    /// `GET /console`: the overview page.
    public static let consolePage = Endpoint<NoContent, RawContent>(.get, "/console")
    /// `POST /console/logout`: ends the session; 303 to the sign-in page.
    public static let consoleLogout = Endpoint<NoContent, RawContent>(.post, "/console/logout", status: 303)

    // MARK: The console's API

    /// `GET /console/api/overview`: calls, accounts, spend, jobs, App Store notifications, provider health.
    public static let consoleOverview = Endpoint<NoContent, ConsoleOverviewDTO>(.get, "/console/api/overview")
    /// `GET /console/api/live`: the calls in progress and their transcripts as server-sent events.
    public static let consoleLive = Endpoint<NoContent, RawContent>(.get, "/console/api/live")
    /// `GET /console/api/audit`: the last operator actions, newest first.
    public static let consoleAudit = Endpoint<NoContent, ConsoleAuditDTO>(.get, "/console/api/audit")
    /// `GET /console/api/users/{user_id}`: an account's drill-down.
    public static let consoleUser = Endpoint<NoContent, ConsoleUserDTO>(.get, "/console/api/users/{user_id}")
    /// `GET /console/api/calls/{call_id}`: a call's detail, the number masked, and what it cost.
    public static let consoleCall = Endpoint<NoContent, ConsoleCallDetailDTO>(.get, "/console/api/calls/{call_id}")
    /// `GET /console/api/stories/{story_id}`: a story with its stages, files and costs, its owner and failed jobs.
    public static let consoleStory = Endpoint<NoContent, ConsoleStoryDetailDTO>(.get, "/console/api/stories/{story_id}")
    /// `GET /console/api/lookup?q=`: users, calls and stories by email, phone number, call SID, call id or id.
    public static let consoleLookup = Endpoint<NoContent, ConsoleLookupDTO>(.get, "/console/api/lookup")
    /// `POST /console/api/users/{user_id}/revoke-sessions`: signs a user out everywhere.
    public static let consoleRevokeSessions = Endpoint<NoContent, ConsoleActionResultDTO>(.post, "/console/api/users/{user_id}/revoke-sessions")
    /// `POST /console/api/users/{user_id}/grant-calls`: adds calls to a user's quota.
    public static let consoleGrantCalls = Endpoint<ConsoleGrantCallsRequest, ConsoleActionResultDTO>(
        .post, "/console/api/users/{user_id}/grant-calls")
    /// `POST /console/api/calls/{call_id}/refund`: gives a charged call back.
    public static let consoleRefundCall = Endpoint<NoContent, ConsoleActionResultDTO>(.post, "/console/api/calls/{call_id}/refund")
    /// `POST /console/api/jobs/{job_id}/rerun`: runs a failed job again.
    public static let consoleRerunJob = Endpoint<NoContent, ConsoleActionResultDTO>(.post, "/console/api/jobs/{job_id}/rerun")
    /// `GET /console/api/reports?status=`: the content report queue, oldest first.
    public static let consoleReports = Endpoint<NoContent, ConsoleReportsDTO>(.get, "/console/api/reports")
    /// `POST /console/api/reports/{report_id}/status`: moves a report along the queue.
    public static let consoleReportStatus = Endpoint<ConsoleReportStatusRequest, ConsoleActionResultDTO>(
        .post, "/console/api/reports/{report_id}/status")
    /// `GET /console/api/opt-outs`: the do-not-call list's figures.
    public static let consoleOptOuts = Endpoint<NoContent, ConsoleOptOutsDTO>(.get, "/console/api/opt-outs")
    /// `POST /console/api/opt-outs/remove`: takes a number off the do-not-call list.
    public static let consoleRemoveOptOut = Endpoint<ConsoleRemoveOptOutRequest, ConsoleActionResultDTO>(.post, "/console/api/opt-outs/remove")

    /// Every endpoint of this area, for the table API/all.
    public static let endpoints: [AnyEndpoint] = [
        health.erased, openAPI.erased, metrics.erased, playground.erased, asset.erased, home.erased, favicon.erased, faviconSVG.erased,
        consoleLoginPage.erased, consoleLogin.erased, consolePage.erased, consoleLogout.erased,
        consoleOverview.erased, consoleLive.erased, consoleAudit.erased, consoleUser.erased, consoleCall.erased, consoleStory.erased, consoleLookup.erased,
        consoleRevokeSessions.erased, consoleGrantCalls.erased, consoleRefundCall.erased, consoleRerunJob.erased,
        consoleReports.erased, consoleReportStatus.erased, consoleOptOuts.erased, consoleRemoveOptOut.erased,
    ]
}
