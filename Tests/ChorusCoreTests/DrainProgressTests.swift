import ChorusCore
import Foundation
import Testing

@Suite struct DrainProgressTests {
    static func observation(calls: Int = 0, awaiting: Int = 0, requests: Int = 0, jobs: Int = 0) -> DrainObservation {
        DrainObservation(callsInProgress: calls, callsAwaitingFinalStatus: awaiting, requestsInFlight: requests, jobsRunning: jobs)
    }

    @Test func theMaximumIsTheRingingTheLongestCallAndTheMargin() {
        #expect(DrainTiming.maximumSeconds(longestCallLimitSeconds: 120) == 30 + 120 + 30)
        #expect(PlanCatalog.standard.longestCallLimitSeconds == 120)
        #expect(DrainTiming.maximumSeconds(longestCallLimitSeconds: PlanCatalog.standard.longestCallLimitSeconds) == 180)
        var catalog = PlanCatalog.standard
        catalog.addon.durationLimitWithoutPlanSeconds = 900
        #expect(catalog.longestCallLimitSeconds == 900)
    }

    @Test func anyLimitGivesABoundWithoutTrapping() {
        #expect(DrainTiming.maximumSeconds(longestCallLimitSeconds: .max) == .max)
        #expect(DrainTiming.maximumSeconds(longestCallLimitSeconds: .max - 40) == .max)
        #expect(DrainTiming.maximumSeconds(longestCallLimitSeconds: -5) == 60)
    }

    @Test func nothingInProgressStopsAtOnce() {
        var drain = DrainProgress(began: 100, maximumSeconds: 180)
        #expect(drain.observe(Self.observation(), at: 100) == .stop(.drained))
        #expect(drain.outcome == .drained)
    }

    @Test func aCallInProgressIsWaitedForThenItsFinalStatusBriefly() {
        var drain = DrainProgress(began: 0, maximumSeconds: 180, finalStatusWaitSeconds: 10)
        #expect(drain.observe(Self.observation(calls: 1, jobs: 1), at: 1) == .wait)
        #expect(drain.observe(Self.observation(calls: 1), at: 60) == .wait)
        // The stream ended: its final status has not arrived yet.
        #expect(drain.observe(Self.observation(awaiting: 1), at: 61) == .wait)
        #expect(drain.quietSince == 61)
        #expect(drain.observe(Self.observation(awaiting: 1), at: 70) == .wait)
        // It arrived.
        #expect(drain.observe(Self.observation(), at: 71) == .stop(.drained))
    }

    @Test func aFinalStatusThatNeverArrivesIsWaitedForOnlyBriefly() {
        var drain = DrainProgress(began: 0, maximumSeconds: 180, finalStatusWaitSeconds: 10)
        #expect(drain.observe(Self.observation(calls: 2), at: 0) == .wait)
        #expect(drain.observe(Self.observation(awaiting: 2), at: 5) == .wait)
        // Another call still runs: the final-status wait starts again when it ends.
        #expect(drain.observe(Self.observation(calls: 1, awaiting: 1), at: 14) == .wait)
        #expect(drain.quietSince == nil)
        #expect(drain.observe(Self.observation(awaiting: 2), at: 20) == .wait)
        #expect(drain.observe(Self.observation(awaiting: 2), at: 29.9) == .wait)
        #expect(drain.observe(Self.observation(awaiting: 2), at: 30) == .stop(.drained))
    }

    @Test func requestsAndJobsInProgressAreWaitedFor() {
        var drain = DrainProgress(began: 0, maximumSeconds: 60)
        #expect(drain.observe(Self.observation(requests: 1), at: 0) == .wait)
        #expect(drain.observe(Self.observation(jobs: 3), at: 1) == .wait)
        #expect(drain.observe(Self.observation(), at: 2) == .stop(.drained))
    }

    @Test func theMaximumCutsWhatIsLeft() {
        var drain = DrainProgress(began: 10, maximumSeconds: 180)
        #expect(drain.deadline == 190)
        #expect(drain.observe(Self.observation(calls: 1), at: 189.9) == .wait)
        #expect(drain.observe(Self.observation(calls: 1), at: 190) == .stop(.deadlinePassed))
        // Stopped stays stopped.
        #expect(drain.observe(Self.observation(), at: 191) == .stop(.deadlinePassed))
        #expect(drain.interrupt() == .stop(.deadlinePassed))
    }

    @Test func aSecondSignalStopsAtOnce() {
        var drain = DrainProgress(began: 0, maximumSeconds: 180)
        #expect(drain.observe(Self.observation(calls: 1), at: 1) == .wait)
        #expect(drain.interrupt() == .stop(.interrupted))
        #expect(drain.observe(Self.observation(), at: 2) == .stop(.interrupted))
        #expect(DrainProgress.Outcome.deadlinePassed.rawValue == "deadline_passed")
    }

    @Test func aNegativeMaximumIsZero() {
        var drain = DrainProgress(began: 0, maximumSeconds: -1, finalStatusWaitSeconds: -1)
        #expect(drain.maximumSeconds == 0 && drain.finalStatusWaitSeconds == 0)
        #expect(drain.observe(Self.observation(calls: 1), at: 0) == .stop(.deadlinePassed))
    }
}
