import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// The shared transport of the AI and storage clients: one HTTP exchange with a deadline, retried with exponential
/// backoff and full jitter on network failures, timeouts, 408, 429 and 5xx (honouring `Retry-After` /
/// `retry-after-ms`), never on other 4xx. Logs the provider's request id (`x-request-id`, `request-id`) with every
/// failure; never logs headers or bodies (they carry keys, audio and personal text).
public struct ProviderHTTP: Sendable {
    /// How often and how patiently to retry.
    public struct RetryPolicy: Sendable, Equatable {
        /// Attempts in total, the first included (1 = no retry).
        public var maxAttempts: Int
        /// The first backoff; doubled per attempt, capped at ``maxDelay``.
        public var baseDelay: Duration
        /// The longest wait between attempts, `Retry-After` included (a longer `Retry-After` is not waited for).
        public var maxDelay: Duration

        public init(maxAttempts: Int = 3, baseDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(8)) {
            self.maxAttempts = max(1, maxAttempts)
            self.baseDelay = baseDelay
            self.maxDelay = maxDelay
        }

        /// No retries (tests of the error mapping, or callers with their own retry queue).
        public static let none = RetryPolicy(maxAttempts: 1)
    }

    /// A complete response.
    public struct Response: Sendable {
        public let status: Int
        public let headers: HTTPHeaders
        public let body: ByteBuffer

        /// The body as bytes.
        public var bytes: [UInt8] { Array(body.readableBytesView) }
        /// The body as `Data`.
        public var data: Data { Data(body.readableBytesView) }
    }

    /// The provider's name in logs (`openai`, `elevenlabs`, `s3`).
    public let provider: String
    public let client: HTTPClient
    public let timeout: TimeAmount
    public let retry: RetryPolicy
    public let logger: Logger
    /// The largest response body accepted.
    public let maxResponseBytes: Int
    /// Told about every exchange (each attempt).
    public let observer: (any ProviderCallObserver)?

    public init(
        provider: String, client: HTTPClient, timeout: TimeAmount = .seconds(60), retry: RetryPolicy = RetryPolicy(),
        maxResponseBytes: Int = 64 * 1024 * 1024, observer: (any ProviderCallObserver)? = nil, logger: Logger
    ) {
        self.provider = provider
        self.observer = observer
        self.client = client
        self.timeout = timeout
        self.retry = retry
        self.maxResponseBytes = maxResponseBytes
        self.logger = logger
    }

    /// Sends the request built by `makeRequest` (called once per attempt, so bodies can be rebuilt) and returns the
    /// first 2xx/3xx response. A 4xx/5xx answer that is final (not retryable, or retries used up) is passed to
    /// `mapError` with its status and body to become the thrown error; network failures become
    /// ``ProviderError/unavailable(_:)``.
    public func execute(
        operation: String,
        retryable: Bool = true,
        _ makeRequest: @Sendable () throws -> HTTPClientRequest,
        mapError: @Sendable (Response) -> ProviderError
    ) async throws -> Response {
        var attempt = 1
        while true {
            let outcome: Result<Response, ProviderError>
            let started = ContinuousClock.now
            do {
                let answer = try await ProviderTracing.exchange(
                    tracer: observer?.tracer, provider: provider, operation: operation, request: try makeRequest(), status: \Response.status
                ) { request in
                    let response = try await client.execute(request, timeout: timeout, logger: logger)
                    let body = try await response.body.collect(upTo: maxResponseBytes)
                    return Response(status: Int(response.status.code), headers: response.headers, body: body)
                }
                outcome = .success(answer)
            } catch let error as ProviderError {
                throw error
            } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
                outcome = .failure(.unavailable("\(provider) timed out"))
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                outcome = .failure(.unavailable("\(provider) could not be reached: \(error)"))
            }
            switch outcome {
            case .success(let response):
                observe(operation, failure: ProviderCallFailure.status(response.status), since: started)
            case .failure(let error):
                observe(operation, failure: ProviderCallFailure.of(error), since: started)
            }

            var wait: Duration?
            let failure: ProviderError
            switch outcome {
            case .success(let response) where response.status < 400:
                return response
            case .success(let response):
                let transient = response.status == 408 || response.status == 429 || response.status >= 500
                failure = mapError(response)
                wait = transient && failure.isTransient ? Self.retryAfter(response.headers) : nil
                var metadata: Logger.Metadata = [
                    "provider": "\(provider)", "operation": "\(operation)", "status": "\(response.status)",
                    "attempt": "\(attempt)",
                ]
                if let id = response.headers.first(name: "x-request-id") ?? response.headers.first(name: "request-id") {
                    metadata["provider_request_id"] = "\(id)"
                }
                logger.warning("provider request failed", metadata: metadata)
                guard transient, failure.isTransient, retryable, attempt < retry.maxAttempts else { throw failure }
            case .failure(let error):
                failure = error
                logger.warning(
                    "provider request failed",
                    metadata: ["provider": "\(provider)", "operation": "\(operation)", "attempt": "\(attempt)", "error": "\(error)"]
                )
                guard retryable, attempt < retry.maxAttempts else { throw failure }
            }
            let backoff = Self.backoff(attempt: attempt, policy: retry)
            let delay = min(max(wait ?? .zero, backoff), retry.maxDelay)
            if let wait, wait > retry.maxDelay { throw failure }
            try await Task.sleep(for: delay)
            attempt += 1
        }
    }

    /// Tells the observer about one exchange that started at `started`.
    public func observe(_ operation: String, failure: String?, since started: ContinuousClock.Instant) {
        observer?.providerCall(provider: provider, operation: operation, failure: failure, duration: ContinuousClock.now - started)
    }

    /// Full-jitter exponential backoff for the attempt that just failed (1-based).
    static func backoff(attempt: Int, policy: RetryPolicy) -> Duration {
        let exponential = policy.baseDelay * (1 << min(attempt - 1, 16))
        let capped = min(exponential, policy.maxDelay)
        let milliseconds = Double(capped.components.seconds) * 1_000 + Double(capped.components.attoseconds) / 1e15
        return .milliseconds(Int.random(in: 0...max(1, Int(milliseconds))))
    }

    /// `retry-after-ms` (OpenAI) or `Retry-After` in seconds; HTTP dates are not used by these providers.
    ///
    /// The values come from the provider: anything that is not a finite, non-negative number is ignored, and a value
    /// beyond ``longestRetryAfter`` is clamped to it (longer than any ``RetryPolicy/maxDelay``, so it is still not
    /// waited for) instead of being converted to an integer that cannot hold it.
    public static func retryAfter(_ headers: HTTPHeaders) -> Duration? {
        if let ms = headers.first(name: "retry-after-ms").flatMap(Self.delayNumber) { return Self.clampedDelay(milliseconds: ms) }
        if let seconds = headers.first(name: "retry-after").flatMap(Self.delayNumber) {
            return Self.clampedDelay(milliseconds: seconds * 1_000)
        }
        return nil
    }

    /// The longest `Retry-After` kept as it is: one day.
    public static let longestRetryAfter: Duration = .seconds(86_400)

    private static func delayNumber(_ text: String) -> Double? {
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite, value >= 0 else { return nil }
        return value
    }

    private static func clampedDelay(milliseconds: Double) -> Duration {
        let limit = Double(longestRetryAfter.components.seconds) * 1_000
        return milliseconds >= limit ? longestRetryAfter : .milliseconds(Int64(milliseconds))
    }
}
