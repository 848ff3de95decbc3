extension API.Calls {
    // MARK: Usage and catalog

    /// `GET /mobile/usage-stats`: the user's plan, trial and usage counters.
    public static let usageStats = Endpoint<NoContent, UsageStatsResponse>(.get, "/mobile/usage-stats")
    /// `POST /mobile/check-call-permission`: whether a call may be placed now and, if not, why; charges nothing.
    public static let checkCallPermission = Endpoint<NoContent, CallPermissionResponse>(.post, "/mobile/check-call-permission")
    /// `GET /mobile/pricing`: the plans and the add-on pack with their App Store product ids.
    public static let pricing = Endpoint<NoContent, PricingResponse>(.get, "/mobile/pricing")
    /// `GET /mobile/scenarios`: the built-in scenarios.
    public static let scenarios = Endpoint<NoContent, ScenariosResponse>(.get, "/mobile/scenarios")
    /// `GET /mobile/voices`: the AI voices.
    public static let voices = Endpoint<NoContent, VoicesResponse>(.get, "/mobile/voices")
    /// `GET /mobile/voices/{voice_id}/preview`: a short spoken sample of the voice (audio; `Range`, `ETag`; no token).
    public static let voicePreview = Endpoint<NoContent, RawContent>(.get, "/mobile/voices/{voice_id}/preview")

    // MARK: Calls

    /// `POST /mobile/make-call`: places a call now and charges it (`Idempotency-Key` replays the first answer).
    public static let makeCall = Endpoint<MakeCallRequest, MakeCallResponse>(.post, "/mobile/make-call")
    /// `GET /mobile/call-history?limit=N`: the user's most recent calls, newest first.
    public static let callHistory = Endpoint<NoContent, CallHistoryResponse>(.get, "/mobile/call-history")
    /// `GET /mobile/calls/{call_sid}`: one call with its timeline, transcript and latency figures.
    public static let call = Endpoint<NoContent, CallDetailResponse>(.get, "/mobile/calls/{call_sid}")
    /// `GET /mobile/calls/{call_sid}/events`: the call's progress as server-sent events.
    public static let callEvents = Endpoint<NoContent, RawContent>(.get, "/mobile/calls/{call_sid}/events")
    /// `DELETE /mobile/calls/{call_sid}/transcript`: deletes the call's transcript for good.
    public static let deleteTranscript = Endpoint<NoContent, NoContent>(.delete, "/mobile/calls/{call_sid}/transcript")

    // MARK: Scheduled calls

    /// `POST /mobile/schedule-call`: schedules a call (`Idempotency-Key` replays the first answer).
    public static let scheduleCall = Endpoint<ScheduleCallRequest, ScheduledCallDTO>(.post, "/mobile/schedule-call")
    /// `GET /mobile/scheduled-calls`: the user's scheduled calls, whatever their status.
    public static let scheduledCalls = Endpoint<NoContent, ScheduledCallsResponse>(.get, "/mobile/scheduled-calls")
    /// `DELETE /mobile/scheduled-calls/{schedule_id}`: cancels a scheduled call; answers the cancelled schedule.
    public static let cancelScheduledCall = Endpoint<NoContent, ScheduledCallDTO>(.delete, "/mobile/scheduled-calls/{schedule_id}")

    // MARK: Custom scenarios

    /// `POST /mobile/custom-scenarios`: creates a custom scenario (201).
    public static let createCustomScenario = Endpoint<CreateCustomScenarioRequest, CustomScenarioDTO>(
        .post, "/mobile/custom-scenarios", status: 201)
    /// `GET /mobile/custom-scenarios`: the user's custom scenarios.
    public static let customScenarios = Endpoint<NoContent, CustomScenariosResponse>(.get, "/mobile/custom-scenarios")
    /// `DELETE /mobile/custom-scenarios/{scenario_id}`: deletes a custom scenario.
    public static let deleteCustomScenario = Endpoint<NoContent, NoContent>(.delete, "/mobile/custom-scenarios/{scenario_id}")

    // MARK: Reports

    /// `POST /mobile/reports`: reports a scenario or a call to the operators (201).
    public static let createReport = Endpoint<CreateReportRequest, ReportDTO>(.post, "/mobile/reports", status: 201)
    /// `GET /mobile/reports`: the user's reports, newest first.
    public static let reports = Endpoint<NoContent, ReportsResponse>(.get, "/mobile/reports")

    // MARK: Development helpers (not registered in production)

    /// `POST /test/bypass-rate-limit`: make-call without the rate limit (the call is charged).
    public static let bypassRateLimit = Endpoint<BypassRateLimitRequest, MakeCallResponse>(.post, "/test/bypass-rate-limit")
    /// `POST /test/test-call`: places a call without charging the allowance.
    public static let testCall = Endpoint<MakeCallRequest, MakeCallResponse>(.post, "/test/test-call")

    // MARK: Twilio (signed by Twilio, not by a user)

    /// `POST /call-end-webhook?call_id=N`: Twilio's status callback (form); 204.
    public static let statusCallback = Endpoint<RawContent, NoContent>(.post, "/call-end-webhook")
    /// `POST /twilio/machine-detection?call_id=N`: Twilio's answering-machine detection callback (form); 204.
    public static let machineDetection = Endpoint<RawContent, NoContent>(.post, "/twilio/machine-detection")
    /// `POST /twilio/voice?call_id=N`: the call's TwiML (form in, XML out).
    public static let voice = Endpoint<RawContent, RawContent>(.post, "/twilio/voice")
    /// `GET /media-stream`: Twilio's Media Stream, a WebSocket upgrade (101).
    public static let mediaStream = Endpoint<NoContent, RawContent>(.get, "/media-stream", status: 101)

    /// Every endpoint of this area, for the table API/all.
    public static let endpoints: [AnyEndpoint] = [
        usageStats.erased, checkCallPermission.erased, pricing.erased, scenarios.erased, voices.erased, voicePreview.erased,
        makeCall.erased, callHistory.erased, call.erased, callEvents.erased, deleteTranscript.erased,
        scheduleCall.erased, scheduledCalls.erased, cancelScheduledCall.erased,
        createCustomScenario.erased, customScenarios.erased, deleteCustomScenario.erased,
        createReport.erased, reports.erased,
        bypassRateLimit.erased, testCall.erased,
        statusCallback.erased, machineDetection.erased, voice.erased, mediaStream.erased,
    ]
}
