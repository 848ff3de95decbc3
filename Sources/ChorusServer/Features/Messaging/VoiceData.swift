import ChorusAPI
import ChorusProviders
import Foundation
import Logging
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

    /// How long a cloned voice may wait for its owner's confirmation (issue 21: a day), after which the retention sweep
    /// deletes it here and at the provider.
    static let confirmationWindow: TimeInterval = 86_400

    /// Deletes cloned voices never confirmed within ``confirmationWindow`` (pending ones and those ElevenLabs holds for
    /// verification), at the provider too, with any preview speech; returns how many. A voice confirmed meanwhile is
    /// kept (the delete re-checks the state on each row).
    func sweepUnconfirmedVoices(store: ChorusStore, now: Date, logger: Logger) async throws -> Int {
        let cutoff = now.addingTimeInterval(-Self.confirmationWindow)
        var deleted = 0
        while true {
            let expired = try await store.voices.deleteUnconfirmedVoiceProfiles(createdBefore: cutoff, limit: 100)
            for profile in expired { try await deleteClonedVoice(profile, store: store, logger: logger) }
            deleted += expired.count
            if expired.count < 100 { return deleted }
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
