import Foundation

/// How long an instance asked to stop (SIGTERM) keeps serving the calls it has, and when it is done. Pure: the server
/// observes its calls, requests and jobs and feeds them in; this decides whether to wait or stop.
public enum DrainTiming {
    /// Margin over the ringing and the longest call: the stream connecting after the answer, the bridge hanging up
    /// at the limit, the final status callback arriving.
    public static let marginSeconds = 30

    /// After the last call of this instance ended here, how long the drain waits for the final status callbacks of
    /// the calls it bridged (past it, the reconciliation job asks the provider).
    public static let finalStatusWaitSeconds = 10

    /// The longest a drain waits: a call placed just before the signal rings for up to the ring timeout, then runs up
    /// to the longest duration limit of any plan, then the margin. Never traps: an absurd limit gives a long, finite
    /// bound.
    public static func maximumSeconds(longestCallLimitSeconds: Int) -> Int {
        let (withRing, ringOverflow) = max(0, longestCallLimitSeconds).addingReportingOverflow(CallTiming.ringTimeoutSeconds)
        let (total, marginOverflow) = withRing.addingReportingOverflow(marginSeconds)
        return ringOverflow || marginOverflow ? Int.max : total
    }
}

extension PlanCatalog {
    /// The longest any call may last: the trial's, each plan's and the add-on's duration limits.
    public var longestCallLimitSeconds: Int {
        max(trial.durationLimitSeconds, basic.durationLimitSeconds, premium.durationLimitSeconds, addon.durationLimitWithoutPlanSeconds)
    }
}

/// What a draining instance still has in hand, observed now and then.
public struct DrainObservation: Sendable, Equatable {
    /// Calls in progress here: media-stream bridges open, and calls placed here still ringing (their realtime session
    /// prepared, not yet taken by a stream or ended).
    public var callsInProgress: Int
    /// Calls whose stream ended here and whose final status is not stored yet.
    public var callsAwaitingFinalStatus: Int
    /// Requests admitted before the drain began and still being handled (a call placement among them).
    public var requestsInFlight: Int
    /// Jobs still running their current step.
    public var jobsRunning: Int

    public init(callsInProgress: Int, callsAwaitingFinalStatus: Int, requestsInFlight: Int, jobsRunning: Int) {
        self.callsInProgress = callsInProgress
        self.callsAwaitingFinalStatus = callsAwaitingFinalStatus
        self.requestsInFlight = requestsInFlight
        self.jobsRunning = jobsRunning
    }
}

/// A drain from its signal to its end: waits while calls, requests or jobs are in progress, at most `maximumSeconds`;
/// a second signal ends it at once.
public struct DrainProgress: Sendable, Equatable {
    /// How a drain ended.
    public enum Outcome: String, Sendable, Equatable {
        /// Nothing was left in progress: every call ran to its end.
        case drained
        /// The maximum passed with calls, requests or jobs still in progress (they are cut).
        case deadlinePassed = "deadline_passed"
        /// A second signal: stop at once.
        case interrupted
    }

    /// Whether to keep waiting.
    public enum Decision: Sendable, Equatable {
        case wait
        case stop(Outcome)
    }

    /// Seconds (on any monotonic clock) when the drain began.
    public let began: Double
    public let maximumSeconds: Double
    public let finalStatusWaitSeconds: Double
    /// Since when no call has been in progress here (the final-status wait runs from then).
    public private(set) var quietSince: Double?
    public private(set) var outcome: Outcome?

    public init(began: Double, maximumSeconds: Double, finalStatusWaitSeconds: Double = Double(DrainTiming.finalStatusWaitSeconds)) {
        self.began = began
        self.maximumSeconds = max(0, maximumSeconds)
        self.finalStatusWaitSeconds = max(0, finalStatusWaitSeconds)
    }

    /// When the drain gives up waiting.
    public var deadline: Double { began + maximumSeconds }

    /// Decides on what is in progress at `now`. Once stopped, stays stopped with the same outcome.
    public mutating func observe(_ observation: DrainObservation, at now: Double) -> Decision {
        if let outcome { return .stop(outcome) }
        let calls = observation.callsInProgress > 0
        if calls {
            quietSince = nil
        } else if quietSince == nil {
            quietSince = now
        }
        let awaitingStatus = !calls && observation.callsAwaitingFinalStatus > 0 && now - (quietSince ?? now) < finalStatusWaitSeconds
        let busy = calls || awaitingStatus || observation.requestsInFlight > 0 || observation.jobsRunning > 0
        if !busy { return stop(.drained) }
        if now >= deadline { return stop(.deadlinePassed) }
        return .wait
    }

    /// A second signal.
    public mutating func interrupt() -> Decision {
        if let outcome { return .stop(outcome) }
        return stop(.interrupted)
    }

    private mutating func stop(_ outcome: Outcome) -> Decision {
        self.outcome = outcome
        return .stop(outcome)
    }
}
