import Foundation
import Logging
import NIOConcurrencyHelpers
import SQLKit
import Tracing
import Vapor

/// Runs durable jobs from the `jobs` table. Every instance runs one; claims are compare-and-set leases
/// (`FOR UPDATE SKIP LOCKED` on PostgreSQL), so each job runs once however many instances poll.
///
/// Up to `concurrency` jobs run at once (a story's illustrations must not hold up a call's reconciliation). A running
/// job's lease is extended every third of its length, so long jobs keep it; a job whose worker died is claimed again
/// when its lease expires. The runner polls every `pollInterval`, and at once when ``JobSignal/notify()`` says a job
/// was enqueued or a job finished.
final class JobRunner: LifecycleHandler, Sendable {
    typealias Handler = @Sendable (ClaimedJob, ChorusStore, Logger) async throws -> Void

    /// A job failure that must not be retried.
    struct PermanentFailure: Error, CustomStringConvertible {
        var description: String
    }

    let owner = "worker-\(UUID().uuidString.prefix(8).lowercased())"
    private let handlers: [String: Handler]
    private let pollInterval: TimeInterval
    private let lease: TimeInterval
    private let concurrency: Int
    private let signal: JobSignal
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private let task = NIOLockedValueBox<Task<Void, Never>?>(nil)
    private let running = NIOLockedValueBox(0)
    /// Set by ``stopClaiming()`` (a drain): no new job is claimed, running ones finish.
    private let claimingStopped = NIOLockedValueBox(false)

    init(
        handlers: [String: Handler], pollInterval: TimeInterval, lease: TimeInterval = 120, concurrency: Int = 8, signal: JobSignal,
        clock: @escaping @Sendable () -> Date, logger: Logger
    ) {
        self.handlers = handlers
        self.pollInterval = pollInterval
        self.lease = lease
        self.concurrency = max(1, concurrency)
        self.signal = signal
        self.clock = clock
        var logger = logger
        logger[metadataKey: "component"] = "jobs"
        self.logger = logger
    }

    func didBootAsync(_ application: Application) async throws {
        let database = application.db
        let metrics = application.chorus.instruments
        let store = application.chorus.store(database as! any SQLDatabase, on: database.eventLoop)
        // The name this instance's claims carry in `jobs.lease_owner`: which instance holds a job (chorus-bench cluster).
        logger.notice("job worker started", metadata: ["owner": .string(owner)])
        let loop = Task { [self] in
            await withDiscardingTaskGroup { group in
                while !Task.isCancelled, !claimingStopped.withLockedValue({ $0 }) {
                    do {
                        while !Task.isCancelled, !claimingStopped.withLockedValue({ $0 }), running.withLockedValue({ $0 }) < concurrency,
                            let job = try await claim(store: store)
                        {
                            running.withLockedValue { $0 += 1 }
                            group.addTask {
                                await self.run(job, store: store, metrics: metrics)
                                self.running.withLockedValue { $0 -= 1 }
                                self.signal.notify()
                            }
                        }
                    } catch {
                        logger.error("job polling failed", metadata: ["error": .string("\(error)")])
                    }
                    await signal.wait(seconds: pollInterval)
                }
            }
        }
        task.withLockedValue { $0 = loop }
    }

    /// Stops claiming jobs; the running ones go on to their end (a drain waits for ``runningJobs`` to reach 0, then
    /// ``shutdownAsync(_:)`` cancels what is left).
    func stopClaiming() {
        claimingStopped.withLockedValue { $0 = true }
        signal.notify()
    }

    /// Jobs running now.
    var runningJobs: Int { running.withLockedValue { $0 } }

    func shutdownAsync(_ application: Application) async {
        let loop = task.withLockedValue { current -> Task<Void, Never>? in
            defer { current = nil }
            return current
        }
        loop?.cancel()
        signal.notify()
        await loop?.value
    }

    private func claim(store: ChorusStore) async throws -> ClaimedJob? {
        let now = clock()
        return try await store.jobs.claimJob(owner: owner, now: now, leaseUntil: now.addingTimeInterval(lease))
    }

    /// Runs one claimed job to completion, failure or retry, keeping its lease alive while it runs.
    private func run(_ job: ClaimedJob, store: ChorusStore, metrics: ChorusMetrics) async {
        var jobLogger = logger
        jobLogger[metadataKey: "job_id"] = .stringConvertible(job.id)
        jobLogger[metadataKey: "job_kind"] = .string(job.kind)
        do {
            guard let handler = handlers[job.kind] else {
                // A kind this version does not know (the label stays bounded).
                metrics.jobFailed(kind: "unknown", final: true)
                try await store.jobs.failJob(id: job.id, owner: owner, error: "no handler for \(job.kind)", retryAt: nil, now: clock())
                return
            }
            let heartbeat = Task { [lease, owner, clock] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(Int(lease * 1000 / 3)))
                    guard !Task.isCancelled else { return }
                    try? await store.jobs.extendJobLease(id: job.id, owner: owner, until: clock().addingTimeInterval(lease))
                }
            }
            // The heartbeat ends (and is waited for) before the job's outcome is recorded: no query outlives the job.
            func stopHeartbeat() async {
                heartbeat.cancel()
                await heartbeat.value
            }
            do {
                // Provider calls made by the job are metered under its id (handlers add the user they work for).
                try await MeteringContext.$current.withValue(MeteringContext(requestID: "job-\(job.id)")) {
                    // Each run is a trace of its own (issue 18): the job's transactions and provider exchanges are its
                    // children; a run that throws is a failed span.
                    try await store.tracer.withSpan("job \(job.kind)", context: .topLevel, ofKind: .consumer) { span in
                        span.attributes["chorus.job.kind"] = job.kind
                        span.attributes["chorus.job.attempt"] = job.attempts
                        try await handler(job, store, jobLogger)
                    }
                }
                await stopHeartbeat()
                try await store.jobs.completeJob(id: job.id, owner: owner)
            } catch {
                await stopHeartbeat()
                let permanent = error is PermanentFailure || job.attempts >= job.maxAttempts
                let retryAt = permanent ? nil : clock().addingTimeInterval(min(600, 5 * pow(2, Double(job.attempts - 1))))
                jobLogger.warning("job failed", metadata: ["error": .string("\(error)"), "will_retry": .stringConvertible(!permanent)])
                metrics.jobFailed(kind: job.kind, final: permanent)
                try await store.jobs.failJob(id: job.id, owner: owner, error: "\(error)", retryAt: retryAt, now: clock())
            }
        } catch {
            jobLogger.error("could not record the job's outcome", metadata: ["error": .string("\(error)")])
        }
    }
}

/// Wakes the ``JobRunner`` early: when a job is enqueued for now, or a running job finished (freeing a slot).
final class JobSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = NIOLockedValueBox(State())

    /// Wakes the waiting runner, or the next one to wait.
    func notify() {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns after `seconds`, or earlier when notified (at once when a notification is pending).
    func wait(seconds: TimeInterval) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let immediate = state.withLockedValue { state -> Bool in
                if state.pending {
                    state.pending = false
                    return true
                }
                state.waiter = continuation
                return false
            }
            if immediate {
                continuation.resume()
                return
            }
            Task {
                try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                // A timer may wake a later wait early: harmless, the runner just polls.
                self.notify()
            }
        }
    }
}
