import Foundation

/// The retry rules of `APISession`, kept pure so they can be tested without a clock.
///
/// - 429 and 503 are retried for every request: the server says it did nothing and when to come back. Its
///   `Retry-After` (seconds or an HTTP date) is waited exactly; without one, exponential backoff with jitter. A
///   `Retry-After` longer than ``RetryPolicy/maxDelay`` is not waited for: the answer is delivered at once
///   (``ChorusError/rateLimited(retryAfter:)`` or ``ChorusError/server(status:requestID:)``).
/// - Network failures (no answer) are retried only for idempotent requests (`APIRequest.isIdempotent`): a POST
///   without an `Idempotency-Key` may have taken effect, so it is never sent twice.
/// - 409 to a request with an `Idempotency-Key` whose earlier attempt got no answer is retried with backoff: the
///   server is still working on that earlier attempt and will replay its answer once it is done.
/// - Everything else is delivered as it is.
extension RetryPolicy {
    /// What happened to one attempt, as far as retrying is concerned.
    enum Outcome {
        /// An HTTP answer with `status` and the parsed `Retry-After`, if any.
        case answer(status: Int, retryAfter: TimeInterval?)
        /// No answer arrived.
        case networkFailure
    }

    /// The wait before the next attempt, or `nil` to stop and deliver the outcome.
    ///
    /// - Parameters:
    ///   - outcome: what the attempt got.
    ///   - attempt: which attempt it was, from 1.
    ///   - idempotent: whether sending the request twice is harmless.
    ///   - lostAnswerEarlier: whether an earlier attempt of the same request got no answer.
    ///   - random: a number in `0...1` for the jitter.
    func delay(
        after outcome: Outcome, attempt: Int, idempotent: Bool, lostAnswerEarlier: Bool, random: Double = .random(in: 0...1)
    ) -> TimeInterval? {
        guard attempt < maxAttempts else { return nil }
        switch outcome {
        case .answer(let status, let retryAfter) where status == 429 || status == 503:
            guard let retryAfter else { return backoff(after: attempt, random: random) }
            return retryAfter <= maxDelay ? retryAfter : nil
        case .answer(409, _) where idempotent && lostAnswerEarlier:
            return backoff(after: attempt, random: random)
        case .answer:
            return nil
        case .networkFailure:
            return idempotent ? backoff(after: attempt, random: random) : nil
        }
    }

    /// Exponential backoff with "equal jitter": `baseDelay × 2^(attempt − 1)`, capped at ``maxDelay``, of which the
    /// first half is always waited and the second half scaled by `random` (in `0...1`), so that clients refused at
    /// the same moment do not all come back at the same moment.
    func backoff(after attempt: Int, random: Double) -> TimeInterval {
        let exponent = Double(min(max(attempt - 1, 0), 30))
        let full = min(maxDelay, baseDelay * pow(2, exponent))
        guard full > 0 else { return 0 }
        return full / 2 + full / 2 * min(max(random, 0), 1)
    }
}
