import Foundation

/// What is needed to place one outbound phone call.
public struct OutboundCallRequest: Sendable, Equatable {
    /// The callee, in E.164 form (`+15551234567`).
    public var to: String
    /// The caller id, in E.164 form; must be a number the account owns.
    public var from: String
    /// Where the provider fetches the call's instructions (TwiML) once the callee answers.
    public var twimlURL: URL
    /// Where the provider posts call progress events.
    public var statusCallbackURL: URL
    /// The progress events to report, e.g. `["initiated", "ringing", "answered", "completed"]`.
    public var statusCallbackEvents: [String]
    /// The maximum length of the conversation once answered, in seconds; the provider hangs up after it.
    public var timeLimitSeconds: Int
    /// How long the phone may ring before the call is given up as unanswered, in seconds.
    public var ringTimeoutSeconds: Int
    /// Where the provider reports who answered (a person, an answering machine once its greeting is over, a fax),
    /// in the background while the call goes on; `nil` places the call without answering-machine detection.
    public var machineDetectionCallbackURL: URL?

    /// Creates a request from all its fields.
    public init(
        to: String,
        from: String,
        twimlURL: URL,
        statusCallbackURL: URL,
        statusCallbackEvents: [String] = ["initiated", "ringing", "answered", "completed"],
        timeLimitSeconds: Int,
        ringTimeoutSeconds: Int = 30,
        machineDetectionCallbackURL: URL? = nil
    ) {
        self.machineDetectionCallbackURL = machineDetectionCallbackURL
        self.to = to
        self.from = from
        self.twimlURL = twimlURL
        self.statusCallbackURL = statusCallbackURL
        self.statusCallbackEvents = statusCallbackEvents
        self.timeLimitSeconds = timeLimitSeconds
        self.ringTimeoutSeconds = ringTimeoutSeconds
    }
}

/// A call the provider accepted.
public struct PlacedCall: Sendable, Equatable {
    /// The provider's identifier of the call (a Twilio Call SID, `CA…`).
    public let sid: String
    /// The provider's status at creation, usually `queued`.
    public let status: String

    /// Creates a placed call.
    public init(sid: String, status: String) {
        self.sid = sid
        self.status = status
    }
}

/// Why a telephony operation failed.
public enum TelephonyError: Error, Sendable, Equatable {
    /// The provider refused the request (4xx): a bad number, bad credentials, an unknown call...
    /// Retrying the same request will fail the same way.
    case rejected(httpStatus: Int, code: Int?, message: String)
    /// The provider could not be reached or failed (network error, timeout, 5xx, rate limit).
    /// The request may succeed later.
    case unavailable(String)
}

/// Places and ends phone calls.
/// A call's status as the provider reports it.
public struct ProviderCallStatus: Sendable, Equatable {
    /// Twilio's call status: `queued`, `ringing`, `in-progress`, `completed`, `busy`, `failed`, `no-answer`, `canceled`.
    public let status: String
    /// Seconds the call lasted, once it has ended.
    public let durationSeconds: Int?

    public init(status: String, durationSeconds: Int?) {
        self.status = status
        self.durationSeconds = durationSeconds
    }
}

public protocol Telephony: Sendable {
    /// Places an outbound call; progress arrives later on the request's status callback URL.
    func placeCall(_ request: OutboundCallRequest) async throws -> PlacedCall
    /// Ends a call (Status=completed). A call that has already ended is not an error.
    func hangUp(callSid: String) async throws

    /// The call's current status (used to reconcile calls whose final status callback never arrived).
    func callStatus(callSid: String) async throws -> ProviderCallStatus
}
