import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// Deletes expired recordings, unused generated speech, cloned voices never confirmed within a day, playbacks older than an hour (and realtime
/// payloads older than an hour) periodically (every
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
                    let voices = try await VoiceData(services: services).sweepUnconfirmedVoices(store: store, now: services.now(), logger: logger)
                    if voices > 0 { logger.info("deleted unconfirmed cloned voices", metadata: ["count": .stringConvertible(voices)]) }
                    let playbacks = try await store.playbacks.deleteExpired(now: services.now())
                    if playbacks > 0 { logger.info("deleted expired playbacks", metadata: ["count": .stringConvertible(playbacks)]) }
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
