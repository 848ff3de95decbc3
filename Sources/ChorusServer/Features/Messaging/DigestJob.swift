import ChorusAPI
import ChorusCore
import Foundation
import Logging

/// Daily digests (US-10): each subscribed member gets, at 07:00 or 19:00 of their time zone, a narrated summary of the
/// conversation's messages since their previous digest (at most a day back), announced with `digest.ready`. One durable
/// job per subscription, re-enqueued for the next day when it runs; a changed or cancelled subscription leaves the old
/// job a no-op (it carries the subscription's version).
struct DigestJob {
    let services: ChorusServices

    static func nextRun(after now: Date, schedule: String, timeZone: TimeZone) -> Date? {
        let hour: Int
        switch schedule {
        case "morning": hour = 7
        case "evening": hour = 19
        default: return nil
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar.nextDate(after: now, matching: DateComponents(hour: hour, minute: 0, second: 0), matchingPolicy: .nextTime)
    }

    func run(_ job: ClaimedJob, store: ChorusStore, logger: Logger) async throws {
        let parts = job.payload.split(separator: "|").map(String.init)
        guard parts.count == 3, let version = Int64(parts[2]),
            let subscription = try await store.voices.digestSubscription(conversationID: parts[0], userID: parts[1]),
            subscription.version == version, let timeZone = TimeZone(identifier: subscription.timeZone)
        else { return }
        let now = services.now()
        let since = max(subscription.lastDigestAt ?? now.addingTimeInterval(-86_400), now.addingTimeInterval(-86_400))
        let messages = try await store.messaging.recentMessages(
            conversationID: subscription.conversationID, viewer: subscription.userID, since: since, limit: 200
        ).filter { ($0.content ?? $0.transcript) != nil }
        if !messages.isEmpty {
            do {
                let record = try await ConversationSummarizer(services: services).summarize(
                    messages, conversationID: subscription.conversationID, selection: "digest:\(subscription.userID):\(now.epochMillis)",
                    requester: subscription.userID, store: store, logger: logger, timeZone: timeZone)
                await services.messaging.fanout.publish(
                    RealtimeEventDTO(type: "digest.ready", conversationID: subscription.conversationID, summaryID: record.id),
                    to: [subscription.userID])
            } catch let failed as SummaryFailed where failed.underlying is APIError {
                // A spent budget or daily limit skips this digest; the next one is still scheduled.
                logger.notice("digest skipped: a limit is reached", metadata: ["error": .string("\(failed.underlying)")])
            }
        }
        guard let next = Self.nextRun(after: now, schedule: subscription.schedule, timeZone: timeZone) else { return }
        try await store.voices.digestRan(subscription, at: now, next: next)
    }
}
