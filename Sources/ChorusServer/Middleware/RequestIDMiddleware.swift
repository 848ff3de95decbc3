import Foundation
import Vapor

/// Gives every request an id (the client's `X-Request-ID` when it is a sane token), puts it on the logger as
/// `request_id` and on the response as `X-Request-ID`.
struct RequestIDMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let incoming = request.headers.first(name: "X-Request-ID")
        let id = incoming.flatMap(Self.isAcceptable) == true ? incoming! : UUID().uuidString.lowercased()
        request.storage[RequestIDKey.self] = id
        request.logger[metadataKey: "request_id"] = .string(id)
        request.logger[metadataKey: "request-id"] = nil
        let response: Response
        do {
            response = try await next.respond(to: request)
        } catch {
            response = ChorusErrorMiddleware.response(for: error, request: request)
        }
        response.headers.replaceOrAdd(name: "X-Request-ID", value: id)
        return response
    }

    static func isAcceptable(_ value: String) -> Bool {
        (1...128).contains(value.utf8.count)
            && value.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 45 || $0 == 95 || $0 == 46 }
    }
}

struct RequestIDKey: StorageKey {
    typealias Value = String
}

extension Request {
    var requestID: String { storage[RequestIDKey.self] ?? "unknown" }
}
