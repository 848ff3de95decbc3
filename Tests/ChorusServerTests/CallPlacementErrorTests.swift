import ChorusAPI
import ChorusCore
import Foundation
import Testing
import Vapor

@testable import ChorusServer

/// ``CallPlacementError`` becomes the contract's answers in one place (`APIError.init(_:)`), and configuration problems
/// keep their order across sections.
@Suite("Call placement errors and configuration order")
struct CallPlacementErrorTests {
    /// Status, `Retry-After` and detail of the answer to `error`.
    static func answer(_ error: CallPlacementError) -> (status: HTTPResponseStatus, retryAfter: Int?, detail: String?) {
        switch APIError(error) {
        case .detail(let status, let message): (status, nil, message)
        case .invalidCredentials: (.unauthorized, nil, "Could not validate credentials")
        case .paymentRequired(let payload): (.paymentRequired, nil, payload.detail.message)
        case .refused(let refusal): (.unprocessableEntity, nil, refusal.message)
        case .unavailable(let retryAfter, let detail): (.serviceUnavailable, retryAfter, detail)
        default: (.internalServerError, nil, nil)
        }
    }

    @Test func eachPlacementErrorKeepsItsAnswer() {
        #expect(
            Self.answer(.unknownScenario(id: "nope")) == (
                .badRequest, nil, "Unknown scenario 'nope'. See GET /mobile/scenarios for the available ids."
            ))
        #expect(Self.answer(.accountDeleted) == (.unauthorized, nil, "Could not validate credentials"))
        #expect(Self.answer(.call(.quietHours(.standard, next: nil))).status == .unprocessableEntity)
        #expect(
            Self.answer(.trialCallsPaused(retryAfter: 60)) == (
                .serviceUnavailable, 60, "Free trial calls are paused for today. Please try again tomorrow, or choose a plan to call now."
            ))
        #expect(Self.answer(.contended) == (.serviceUnavailable, nil, "Too many simultaneous call requests; please retry"))
        #expect(
            Self.answer(.dialQueueFull(retryAfter: 7)) == (.serviceUnavailable, 7, "Too many calls are being placed right now; please retry later"))
        #expect(
            Self.answer(.telephonyRejected(code: 21_215)) == (.badGateway, nil, "Unable to initiate call: the phone service refused it (code 21215)"))
        #expect(Self.answer(.telephonyRejected(code: nil)) == (.badGateway, nil, "Unable to initiate call: the phone service refused it"))
        #expect(
            Self.answer(.telephonyUnavailable) == (.badGateway, nil, "Unable to initiate call: the phone service is unavailable, please retry"))
    }

    @Test func configurationProblemsFollowTheOrderKeysAreRead() {
        do {
            _ = try ChorusConfiguration.load(from: [
                "CHORUS_CALL_HOURS": "never", "CHORUS_PORT": "x", "CHORUS_S3_BUCKET": "b", "CHORUS_VOICE_MAX_SECONDS": "0",
                "CHORUS_TWILIO_ACCOUNT_SID": "AC1", "CHORUS_JOB_CONCURRENCY": "0", "CHORUS_WS_PER_USER": "0",
            ])
            Issue.record("loaded")
        } catch let error as ConfigurationError {
            #expect(
                error.problems.map { $0.prefix(while: { $0 != " " && $0 != "," && $0 != "=" }) } == [
                    "CHORUS_PORT", "CHORUS_TWILIO_ACCOUNT_SID", "CHORUS_VOICE_MAX_SECONDS", "CHORUS_S3_ENDPOINT", "CHORUS_JOB_CONCURRENCY",
                    "CHORUS_WS_PER_USER", "CHORUS_CALL_HOURS",
                ])
        } catch {
            Issue.record("\(error)")
        }
    }
}
