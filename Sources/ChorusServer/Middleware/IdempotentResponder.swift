import Crypto
import Foundation
import Vapor

/// Replays the first answer for a repeated `Idempotency-Key` instead of doing the work twice.
///
/// A key stays `pending` while its request runs; one still pending after ``pendingLapse`` belongs to a request that
/// died (its process was killed): a retry takes it over, and the calls that request charged but never placed are
/// given back first, so the retry is the one charge.
struct IdempotentResponder {
    static let lifetime: TimeInterval = 24 * 3_600
    /// Longer than any request with a key can run: make-call waits at most ``CallPlacement/maximumDialWait`` (120 s)
    /// for its dial slot and 10 s for Twilio (one attempt); the rest is a few database statements. 5 minutes leaves
    /// room for a slow database without ever taking over a request that is still running.
    static let pendingLapse: TimeInterval = 300

    let services: ChorusServices
    let store: ChorusStore

    /// - Parameter request: what the request asks for, semantically (a repeated key must repeat it).
    func respond(_ req: Request, userID: String, fingerprint request: String, work: () async throws -> Response) async throws -> Response {
        guard let key = req.headers.first(name: "Idempotency-Key") else { return try await work() }
        guard (1...255).contains(key.utf8.count) else { throw APIError.invalid("Idempotency-Key", "Must be 1 to 255 characters") }
        let fingerprint = SHA256.hash(data: Data(request.utf8)).map { String(format: "%02x", $0) }.joined()
        let now = services.now()
        switch try await store.idempotency.claimIdempotencyKey(
            userID: userID, key: key, fingerprint: fingerprint, now: now, ttl: Self.lifetime, lapse: Self.pendingLapse)
        {
        case .claimed:
            break
        case .reclaimed:
            let released = try await store.calls.releaseAbandonedCalls(userID: userID, createdBefore: now.addingTimeInterval(-Self.pendingLapse), now: now)
            services.instruments.callsReleased(released)
            req.logger.notice("took over an Idempotency-Key left pending", metadata: ["released_calls": .stringConvertible(released)])
        case .inProgress:
            throw APIError.detail(.conflict, "A request with this Idempotency-Key is still in progress")
        case .mismatch:
            throw APIError.invalid("Idempotency-Key", "This key was already used for a different request")
        case .completed(let status, let stored):
            var headers = HTTPHeaders()
            headers.replaceOrAdd(name: .contentType, value: "application/json; charset=utf-8")
            headers.replaceOrAdd(name: "Idempotent-Replayed", value: "true")
            return Response(status: HTTPResponseStatus(statusCode: status), headers: headers, body: .init(string: stored))
        }
        do {
            let response = try await work()
            if response.status.code < 300, let data = response.body.data {
                try await store.idempotency.completeIdempotencyKey(
                    userID: userID, key: key, status: Int(response.status.code), body: String(decoding: data, as: UTF8.self)
                )
            } else {
                try await store.idempotency.releaseIdempotencyKey(userID: userID, key: key)
            }
            return response
        } catch {
            try? await store.idempotency.releaseIdempotencyKey(userID: userID, key: key)
            throw error
        }
    }
}
