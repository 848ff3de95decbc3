import Foundation
import Vapor

/// Gives every request an id (the client's `X-Request-ID` when it is a sane token), puts it on the logger as
/// `request_id` and on the response as `X-Request-ID`, and writes one access-log line per request (method, path
/// without the query string, status, duration) at `info`.
struct RequestIDMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let incoming = request.headers.first(name: "X-Request-ID")
        let id = incoming.flatMap(Self.isAcceptable) == true ? incoming! : UUID().uuidString.lowercased()
        request.storage[RequestIDKey.self] = id
        request.logger[metadataKey: "request_id"] = .string(id)
        request.logger[metadataKey: "request-id"] = nil
        let started = ContinuousClock.now
        let response: Response
        do {
            response = try await next.respond(to: request)
        } catch {
            response = ChorusErrorMiddleware.response(for: error, request: request)
        }
        response.headers.replaceOrAdd(name: "X-Request-ID", value: id)
        if request.logger.logLevel <= .info {
            let elapsed = ContinuousClock.now - started
            let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
            request.logger.info(
                "request",
                metadata: [
                    "method": .string(request.method.rawValue), "path": .string(request.url.path),
                    "status": .stringConvertible(response.status.code), "ms": .string(String(format: "%.1f", milliseconds)),
                ])
        }
        return response
    }

    static func isAcceptable(_ value: String) -> Bool {
        (1...128).contains(value.utf8.count)
            && value.utf8.allSatisfy {
                ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || $0 == 45 || $0 == 95 || $0 == 46
            }
    }
}

struct RequestIDKey: StorageKey {
    typealias Value = String
}

extension Request {
    var requestID: String { storage[RequestIDKey.self] ?? "unknown" }
}
