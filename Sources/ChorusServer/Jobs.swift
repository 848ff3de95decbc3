import Foundation
import Vapor

extension ChorusApp {
    /// The durable job kinds and what runs each.
    static func jobHandlers(_ services: ChorusServices) -> [String: JobRunner.Handler] {
        let scheduled = ScheduledCallJob(services: services)
        let reconciliation = CallReconciliationJob(services: services)
        let notifications = AppStoreNotificationJob(services: services)
        let transcriptions = MessageTranscriptionJob(services: services)
        let digests = DigestJob(services: services)
        let urgency = MessageUrgency(services: services)
        let storyPipeline = StoryPipeline(services: services)
        let storyJob: JobRunner.Handler = { job, store, logger in try await storyPipeline.run(job, store: store, logger: logger) }
        return [
            JobKind.scheduledCall: { job, store, logger in try await scheduled.run(job, store: store, logger: logger) },
            JobKind.reconcileCall: { job, store, logger in try await reconciliation.run(job, store: store, logger: logger) },
            JobKind.applyAppStoreNotification: { job, store, logger in try await notifications.run(job, store: store, logger: logger) },
            JobKind.conversationDigest: { job, store, logger in try await digests.run(job, store: store, logger: logger) },
            JobKind.deleteProviderVoice: { job, _, _ in try await services.messaging.cloner.deleteVoice(id: job.payload) },
            JobKind.classifyMessageUrgency: { job, store, logger in try await urgency.run(job, store: store, logger: logger) },
            JobKind.transcribeMessageAudio: { job, store, logger in try await transcriptions.run(job, store: store, logger: logger) },
            JobKind.storyText: storyJob, JobKind.storyScenes: storyJob, JobKind.storyNarration: storyJob,
            JobKind.storyIllustrations: storyJob,
            JobKind.purgeTranscript: { job, store, _ in
                guard let callID = Int(job.payload) else { return }
                try await store.callBridge.deleteTranscript(callID: callID, now: services.now())
            },
        ]
    }

    /// Runs the durable jobs and the retention sweep in this instance, started and stopped with `app`.
    static func startJobs(_ app: Application, services: ChorusServices) {
        let configuration = services.configuration
        app.lifecycle.use(RetentionSweeper(interval: configuration.voiceMessages.retentionSweepInterval))
        let runner = JobRunner(
            handlers: jobHandlers(services), pollInterval: configuration.jobPollInterval, lease: configuration.jobLease,
            concurrency: configuration.jobConcurrency,
            signal: services.jobSignal, clock: services.clock, logger: app.logger)
        app.lifecycle.use(runner)
        app.storage[JobRunnerKey.self] = runner
        addQuiesceStep(app) { [unowned app] in await runner.shutdownAsync(app) }
    }
}

/// This instance's job runner (a drain stops its claims).
struct JobRunnerKey: StorageKey {
    typealias Value = JobRunner
}
