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

    /// Three attempts, 0.5 s then 1 s apart (with jitter), waiting at most 10 s.
    public static let standard = RetryPolicy(maxAttempts: 3, baseDelay: 0.5, maxDelay: 10)
    /// Never retry.
    public static let none = RetryPolicy(maxAttempts: 1, baseDelay: 0, maxDelay: 0)
}
