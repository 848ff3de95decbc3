import Vapor

/// Answers 413 as soon as a request declares a body larger than its route accepts, instead of reading up to the limit
/// first (what Vapor's collecting does). Vapor hands a request on when its first body bytes arrive, so the answer
/// follows the first chunk; the rest is not read into memory (Vapor stops reading a body nobody consumes, and the idle
/// timeout ends a connection whose client keeps waiting). A client that sent `Expect: 100-continue` gets no
/// `100 Continue` (Vapor cannot send one): it sends its first bytes when it stops waiting (curl: after 1 s) and
/// gets this 413 then.
///
/// Routes that stream their body (uploads) declare their own limit in `userInfo[DeclaredBodyLimitMiddleware.limitKey]`
/// (an `Int` of bytes); every other route gets `CHORUS_MAX_BODY_BYTES`. A body without `Content-Length` (chunked) is
/// still bounded while it is read. The emulators under `/sandbox` keep the limits of the services they imitate.
struct DeclaredBodyLimitMiddleware: AsyncMiddleware {
    /// The `Route.userInfo` key of a route's own limit.
    static let limitKey = "chorus.body_limit"

    let defaultLimit: Int

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if let declared = request.headers.first(name: .contentLength), !request.url.path.hasPrefix("/sandbox/") {
            let limit = request.route?.userInfo[Self.limitKey] as? Int ?? defaultLimit
            // Digits beyond Int64 are larger than any limit as well.
            let length = Int(declared.trimmingCharacters(in: .whitespaces)) ?? (declared.allSatisfy(\.isNumber) ? Int.max : nil)
            if let length, length > limit {
                throw Abort(
                    .payloadTooLarge,
                    reason: "The request body of \(length) bytes is larger than the \(limit) bytes this endpoint accepts")
            }
        }
        return try await next.respond(to: request)
    }
}
