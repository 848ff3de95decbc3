import Foundation

/// How a ``ChorusClient`` sends requests: timeouts and retries.
public struct ChorusClientOptions: Sendable, Equatable {
    /// How long one request may take before it fails with ``ChorusError/network(_:)`` (a timeout).
    public var timeout: TimeInterval
    /// When and how often failed requests are retried.
    public var retry: RetryPolicy

    /// - Parameters:
    ///   - timeout: seconds per request attempt.
    ///   - retry: the retry policy; ``RetryPolicy/standard`` by default.
    public init(timeout: TimeInterval = 30, retry: RetryPolicy = .standard) {
        self.timeout = timeout
        self.retry = retry
    }
}

/// Retries with exponential backoff and jitter, for answers that say "try again" (429, 503 — honouring
/// `Retry-After`) and, for idempotent requests only, network failures.
///
/// The rules, applied to every request the client sends (the replay after a session refresh included):
/// - **429 and 503** are retried for any request: the server did nothing and says so. A `Retry-After` (seconds or an
///   HTTP date) is waited exactly; without one the client backs off exponentially. A `Retry-After` longer than
///   ``maxDelay`` is not waited for: the call throws ``ChorusError/rateLimited(retryAfter:)`` (or
///   ``ChorusError/server(status:requestID:)`` for 503) at once, so the app can tell the user.
/// - **Network failures** (no answer: offline, timeout, connection lost) are retried only when sending the request
///   twice is harmless: GET, PUT and DELETE, and POSTs that carry an `Idempotency-Key` (``CallsClient`` sends one with
///   every call it places or schedules, the same on every attempt, and the server answers a repeat with the
///   original result). Any other POST may have taken effect, so its network failure is thrown as
///   ``ChorusError/network(_:)`` without a retry.
/// - A 409 to a keyed request whose earlier attempt got no answer means the server is still working on that attempt:
///   it is retried with backoff until the original answer is replayed.
/// - Every other answer (2xx, 4xx, other 5xx) is final.
///
/// Backoff before retry *n* is `baseDelay × 2^(n−1)`, capped at ``maxDelay``, with "equal jitter": half of it always,
/// the other half random. Cancelling the calling task stops a wait at once (`CancellationError`).
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included (1 = never retry).
    public var maxAttempts: Int
    /// The delay before the first retry; each further retry doubles it (up to ``maxDelay``), with jitter.
    public var baseDelay: TimeInterval
    /// The longest wait between attempts, `Retry-After` included: a longer `Retry-After` is not waited for.
    public var maxDelay: TimeInterval

    /// - Parameters:
    ///   - maxAttempts: attempts in all, at least 1.
    ///   - baseDelay: seconds before the first retry.
    ///   - maxDelay: the longest wait between attempts, in seconds.
    public init(maxAttempts: Int, baseDelay: TimeInterval, maxDelay: TimeInterval) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// Three attempts, 0.25–0.5 s then 0.5–1 s apart (with jitter), honouring a `Retry-After` of up to 10 s.
    public static let standard = RetryPolicy(maxAttempts: 3, baseDelay: 0.5, maxDelay: 10)
    /// Never retry.
    public static let none = RetryPolicy(maxAttempts: 1, baseDelay: 0, maxDelay: 0)
}
