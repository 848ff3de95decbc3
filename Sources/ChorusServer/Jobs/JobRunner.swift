import Foundation
import Logging
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// Runs durable jobs from the `jobs` table. Every instance runs one; claims are compare-and-set leases
/// (`FOR UPDATE SKIP LOCKED` on PostgreSQL), so each job runs once however many instances poll.
/// A job whose worker died is claimed again when its lease expires.
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
    private let clock: @Sendable () -> Date
    private let logger: Logger
    private let task = NIOLockedValueBox<Task<Void, Never>?>(nil)

    init(handlers: [String: Handler], pollInterval: TimeInterval, lease: TimeInterval = 120, clock: @escaping @Sendable () -> Date, logger: Logger) {
        self.handlers = handlers
        self.pollInterval = pollInterval
        self.lease = lease
        self.clock = clock
        var logger = logger
        logger[metadataKey: "component"] = "jobs"
        self.logger = logger
    }

    func didBootAsync(_ application: Application) async throws {
        let database = application.db
        let store = application.chorus.store(database as! any SQLDatabase, on: database.eventLoop)
        let loop = Task { [self] in
            while !Task.isCancelled {
                do {
                    while !Task.isCancelled, try await runNext(store: store) {}
                } catch {
                    logger.error("job polling failed", metadata: ["error": .string("\(error)")])
                }
                try? await Task.sleep(for: .milliseconds(Int(pollInterval * 1000)))
            }
        }
        task.withLockedValue { $0 = loop }
    }

    func shutdownAsync(_ application: Application) async {
        let loop = task.withLockedValue { current -> Task<Void, Never>? in
            defer { current = nil }
            return current
        }
        loop?.cancel()
        await loop?.value
    }

    /// Claims and runs one due job. Returns whether there was one.
    func runNext(store: ChorusStore) async throws -> Bool {
        let now = clock()
        guard let job = try await store.claimJob(owner: owner, now: now, leaseUntil: now.addingTimeInterval(lease)) else { return false }
        var jobLogger = logger
        jobLogger[metadataKey: "job_id"] = .stringConvertible(job.id)
        jobLogger[metadataKey: "job_kind"] = .string(job.kind)
        guard let handler = handlers[job.kind] else {
            try await store.failJob(id: job.id, owner: owner, error: "no handler for \(job.kind)", retryAt: nil, now: clock())
            return true
        }
        do {
            // Provider calls made by the job are metered under its id (handlers add the user they work for).
            try await MeteringContext.$current.withValue(MeteringContext(requestID: "job-\(job.id)")) {
                try await handler(job, store, jobLogger)
            }
            try await store.completeJob(id: job.id, owner: owner)
        } catch {
            let permanent = error is PermanentFailure || job.attempts >= job.maxAttempts
            let retryAt = permanent ? nil : clock().addingTimeInterval(min(600, 5 * pow(2, Double(job.attempts - 1))))
            jobLogger.warning("job failed", metadata: ["error": .string("\(error)"), "will_retry": .stringConvertible(!permanent)])
            try await store.failJob(id: job.id, owner: owner, error: "\(error)", retryAt: retryAt, now: clock())
        }
        return true
    }
}
