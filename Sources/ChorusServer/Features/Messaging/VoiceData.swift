import ChorusAPI
import ChorusProviders
import Foundation
import Logging
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// Deleting recordings everywhere: the blob first, then the row (a failure leaves the row, so the deletion is retried
/// by the retention job rather than leaving an orphaned file).
struct VoiceData {
    let services: ChorusServices

    func deleteRecording(id: String, store: ChorusStore) async throws {
        guard let record = try await store.messaging.audio(id: id) else { return }
        if let key = BlobKey(rawValue: record.blobKey) { try await services.messaging.blobs.delete(key) }
        try await store.messaging.deleteAudio(id: id)
    }
}

extension VoiceData {
    /// Deletes every speech generated with a cloned voice, then the voice at the provider (a voice it no longer knows
    /// counts as deleted). When the provider cannot be reached the deletion is handed to a durable job that retries it
    /// with backoff, so the voice never outlives its owner's decision.
    func deleteClonedVoice(_ profile: VoiceProfileRecord, store: ChorusStore, logger: Logger) async throws {
        for blob in try await store.voices.deleteSpeech(voiceOwnerID: profile.userID) {
            if let key = BlobKey(rawValue: blob) { try await services.messaging.blobs.delete(key) }
        }
        do {
            try await services.messaging.cloner.deleteVoice(id: profile.providerVoiceID)
        } catch let error as ProviderError {
            logger.warning("a cloned voice will be deleted at the provider later", metadata: ["error": .string("\(error)")])
            let now = services.now()
            try await store.jobs.enqueueJob(
                kind: JobKind.deleteProviderVoice, payload: profile.providerVoiceID, runAt: now.addingTimeInterval(30), now: now,
                maxAttempts: 20)
        }
    }
}

extension VoiceData {
    /// Erases all of a user's voice data: recordings (blobs first), transcripts, the cloned voice at the provider and
    /// the speech generated with it.
    func eraseAll(userID: String, store: ChorusStore, logger: Logger) async throws -> VoiceDataErasure {
        var clonedVoice = false
        let speechCount = try await store.voices.speechCount(voiceOwnerID: userID)
        if let profile = try await store.voices.voiceProfile(userID: userID) {
            try await deleteClonedVoice(profile, store: store, logger: logger)
            _ = try await store.voices.deleteVoiceProfile(userID: userID)
            clonedVoice = true
        } else {
            for blob in try await store.voices.deleteSpeech(voiceOwnerID: userID) {
                if let key = BlobKey(rawValue: blob) { try await services.messaging.blobs.delete(key) }
            }
        }
        let recordings = try await store.messaging.audio(ownerID: userID)
        for recording in recordings { try await deleteRecording(id: recording.id, store: store) }
        let transcripts = try await store.messaging.eraseTranscripts(senderID: userID)
        return VoiceDataErasure(recordings: recordings.count, transcripts: transcripts, clonedVoice: clonedVoice, generatedSpeech: speechCount)
    }

    /// Deletes generated speech and playbacks whose URL nobody asked for within `CHORUS_VOICE_SPEECH_CACHE_DAYS`
    /// (rows first, so no new URL points at them; then their files); returns how many.
    func sweepUnusedSpeech(store: ChorusStore, now: Date) async throws -> Int {
        let cutoff = now.addingTimeInterval(-services.configuration.voiceMessages.speechCacheLifetime)
        var deleted = 0
        while true {
            let blobs = try await store.voices.deleteUnusedSpeech(before: cutoff, limit: 100)
            for key in blobs.compactMap(BlobKey.init) { try await services.messaging.blobs.delete(key) }
            deleted += blobs.count
            if blobs.count < 100 { return deleted }
        }
    }

    /// Deletes recordings past their expiry (starred ones are kept); returns how many.
    func sweepExpiredRecordings(store: ChorusStore, now: Date) async throws -> Int {
        var deleted = 0
        while true {
            let expired = try await store.messaging.expiredAudio(now: now, limit: 100)
            for recording in expired { try await deleteRecording(id: recording.id, store: store) }
            deleted += expired.count
            if expired.count < 100 { return deleted }
        }
    }
}

/// Deletes expired recordings, unused generated speech (and realtime payloads older than an hour) periodically (every
/// `CHORUS_VOICE_RETENTION_SWEEP_SECONDS`). Deleting is idempotent, so instances sweeping at the same time do no harm.
final class RetentionSweeper: LifecycleHandler, Sendable {
    private let interval: TimeInterval
    private let task = NIOLockedValueBox<Task<Void, Never>?>(nil)

    init(interval: TimeInterval) {
        self.interval = interval
    }

    func didBootAsync(_ application: Application) async throws {
        let services = application.chorus
        let database = application.db as! any SQLDatabase
        let store = services.store(database, on: application.eventLoopGroup.any())
        let logger = application.logger
        let loop = Task { [interval] in
            while !Task.isCancelled {
                do {
                    let deleted = try await VoiceData(services: services).sweepExpiredRecordings(store: store, now: services.now())
                    if deleted > 0 { logger.info("deleted expired recordings", metadata: ["count": .stringConvertible(deleted)]) }
                    let speech = try await VoiceData(services: services).sweepUnusedSpeech(store: store, now: services.now())
                    if speech > 0 { logger.info("deleted unused generated speech", metadata: ["count": .stringConvertible(speech)]) }
                    // Large realtime events are read by every instance within moments of their notification.
                    try await store.messaging.deleteRealtimePayloads(before: Date().addingTimeInterval(-3_600))
                } catch {
                    logger.warning("retention sweep failed", metadata: ["error": .string("\(error)")])
                }
                try? await Task.sleep(for: .milliseconds(Int(interval * 1_000)))
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
}

/// Transcribes the recording of a voice message sent before its transcript existed, then tells the members.
struct MessageTranscriptionJob {
    let services: ChorusServices

    func run(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        guard let record = try await store.messaging.audio(id: job.payload) else { return }
        let transcribedNow = record.transcript == nil
        if transcribedNow {
            // A provider failure throws: the job queue retries with backoff.
            _ = try await VoiceTranscription(services: services).transcribe(record, language: nil, store: store, logger: logger)
        }
        let now = services.now()
        for message in try await store.messaging.messages(withAudio: record.id) {
            // Audio-only messages get their first text now: the urgency reading was not possible at sending.
            if transcribedNow, message.content == nil {
                try await MessageUrgency.enqueueIfNeeded(
                    message, senderChose: message.urgentReasons.contains("sender"), services: services, store: store)
            }
            let members = try await store.messaging.memberIDs(conversationID: message.conversationID)
            var dto = services.messageDTO(message, now: now)
            dto.starred = false
            await services.messaging.fanout.publish(
                RealtimeEventDTO(type: "transcript.ready", conversationID: message.conversationID, message: dto), to: members)
        }
    }
}
