import ChorusAPI
import ChorusCore
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// Whether this instance is draining (asked to stop: SIGTERM), and the requests it admitted that are still being
/// handled. Shared by the middleware that refuses new requests, `/health`, and ``ChorusApp/drain(_:maximum:)``.
final class DrainState: Sendable {
    private struct State {
        var draining = false
        var requestsInFlight = 0
    }

    private let state = NIOLockedValueBox(State())

    var isDraining: Bool { state.withLockedValue { $0.draining } }
    var requestsInFlight: Int { state.withLockedValue { $0.requestsInFlight } }

    /// Starts draining; `false` when already draining.
    @discardableResult
    func begin() -> Bool {
        state.withLockedValue { state in
            defer { state.draining = true }
            return !state.draining
        }
    }

    /// Counts a request in, unless the instance drains and the request is not one that must stay open.
    func admit(staysOpen: Bool) -> Bool {
        state.withLockedValue { state in
            guard staysOpen || !state.draining else { return false }
            state.requestsInFlight += 1
            return true
        }
    }

    func finished() {
        state.withLockedValue { $0.requestsInFlight -= 1 }
    }
}

/// While the instance drains, refuses new requests with 503, `Retry-After` and `Connection: close` (so clients and
/// load balancers go to another instance), except what the calls in progress need to end normally and what watches
/// the drain: `/health`, `/metrics`, Twilio's callbacks (status, answering-machine detection, the call's TwiML), the
/// media-stream WebSocket, and the embedded provider emulators under `/sandbox` (the outside world of a development
/// server). Counts the requests it lets through, so the drain waits for them.
struct DrainMiddleware: AsyncMiddleware {
    static let retryAfterSeconds = 5
    static let detail = "This server instance is restarting; please retry"

    let state: DrainState

    /// The paths that stay open while draining.
    static let openPaths: Set<String> = [
        API.Operations.health.path(), API.Operations.metrics.path(), API.Calls.statusCallback.path(), API.Calls.machineDetection.path(),
        API.Calls.voice.path(), API.Calls.mediaStream.path(),
    ]

    static func staysOpen(_ path: String) -> Bool {
        openPaths.contains(path) || path == "/sandbox" || path.hasPrefix("/sandbox/")
    }

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard state.admit(staysOpen: Self.staysOpen(request.url.path)) else {
            let response = try Response.json(ErrorResponse(detail: Self.detail), status: .serviceUnavailable)
            response.headers.replaceOrAdd(name: .retryAfter, value: String(Self.retryAfterSeconds))
            response.headers.replaceOrAdd(name: .connection, value: "close")
            return response
        }
        do {
            let response = try await next.respond(to: request)
            state.finished()
            return response
        } catch {
            state.finished()
            throw error
        }
    }
}

extension ChorusApp {
    /// The longest a drain of this configuration waits (``DrainTiming/maximumSeconds(longestCallLimitSeconds:)``).
    public static func drainMaximum(_ configuration: ChorusConfiguration) -> Duration {
        .seconds(DrainTiming.maximumSeconds(longestCallLimitSeconds: configuration.plans.longestCallLimitSeconds))
    }

    /// Drains the instance (what `chorus serve` does on SIGTERM or SIGINT): `/health` reports draining, new requests
    /// and call placements are refused (``DrainMiddleware``), the job runner stops claiming and its jobs finish their
    /// current step, and the calls in progress here run to their end, including the final status of the calls
    /// bridged here — at most `maximum` (by default ``drainMaximum(_:)``). Cancelling the calling task (a second
    /// signal) stops at once. Returns how it ended; the caller then shuts the application down.
    public static func drain(_ app: Application, maximum: Duration? = nil) async -> DrainProgress.Outcome {
        let services = app.chorus
        let limit = maximum ?? drainMaximum(services.configuration)
        let clock = ContinuousClock()
        let start = clock.now
        func seconds(_ instant: ContinuousClock.Instant) -> Double {
            let elapsed = (instant - start).components
            return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        }
        let limitParts = limit.components
        var progress = DrainProgress(began: 0, maximumSeconds: Double(limitParts.seconds) + Double(limitParts.attoseconds) / 1e18)
        services.drain.begin()
        let runner = app.storage[JobRunnerKey.self]
        runner?.stopClaiming()
        app.logger.notice(
            "draining: new requests are refused, calls in progress run to their end",
            metadata: ["maximum_seconds": .stringConvertible(limitParts.seconds)])
        let database = app.db
        let store = services.store(database as! any SQLDatabase, on: database.eventLoop)
        var last: DrainObservation?
        while true {
            if Task.isCancelled {
                _ = progress.interrupt()
                break
            }
            let (observation, askedDatabase) = await observeDrain(services, store: store, runner: runner)
            if observation != last {
                app.logger.info(
                    "draining",
                    metadata: [
                        "calls": .stringConvertible(observation.callsInProgress),
                        "calls_awaiting_final_status": .stringConvertible(observation.callsAwaitingFinalStatus),
                        "requests": .stringConvertible(observation.requestsInFlight), "jobs": .stringConvertible(observation.jobsRunning),
                    ])
                last = observation
            }
            if case .stop = progress.observe(observation, at: seconds(clock.now)) { break }
            // The bridges are counted in memory; the calls' statuses, once no bridge is left, in the database: not as often.
            try? await Task.sleep(for: .milliseconds(askedDatabase ? 500 : 200))
        }
        let outcome = progress.outcome ?? .interrupted
        let metadata: Logger.Metadata = [
            "outcome": .string(outcome.rawValue), "seconds": .string(String(format: "%.1f", seconds(clock.now))),
            "calls_cut": .stringConvertible(last?.callsInProgress ?? 0), "jobs_cut": .stringConvertible(last?.jobsRunning ?? 0),
        ]
        if outcome == .drained {
            app.logger.notice("drained: stopping", metadata: metadata)
        } else {
            app.logger.error("drain ended early: what is still in progress is cut", metadata: metadata)
        }
        return outcome
    }

    /// What the drain waits for now. While a bridge is open the drain waits anyway, so the database is not asked;
    /// after, calls placed here whose final status was stored (their stream went to another instance, or they were not
    /// answered) stop counting. A database that does not answer counts as nothing awaited (the bound still holds).
    private static func observeDrain(_ services: ChorusServices, store: ChorusStore, runner: JobRunner?) async
        -> (DrainObservation, askedDatabase: Bool)
    {
        let calls = services.bridges.drainSnapshot()
        if calls.bridges > 0 {
            let observation = DrainObservation(
                callsInProgress: calls.bridges + calls.prepared.count, callsAwaitingFinalStatus: 0,
                requestsInFlight: services.drain.requestsInFlight, jobsRunning: runner?.runningJobs ?? 0)
            return (observation, false)
        }
        var ringing = 0
        for callID in calls.prepared {
            if let call = try? await store.calls.call(id: callID), call.status.isTerminal {
                services.bridges.discard(callID: callID)
            } else {
                ringing += 1
            }
        }
        var awaiting = 0
        for callID in calls.recentlyEnded {
            guard let call = try? await store.calls.call(id: callID) else { continue }
            if call.status.isTerminal {
                services.bridges.finalStatusStored(callID: callID)
            } else {
                awaiting += 1
            }
        }
        let observation = DrainObservation(
            callsInProgress: calls.bridges + ringing, callsAwaitingFinalStatus: awaiting, requestsInFlight: services.drain.requestsInFlight,
            jobsRunning: runner?.runningJobs ?? 0)
        return (observation, !calls.prepared.isEmpty || !calls.recentlyEnded.isEmpty)
    }
}
