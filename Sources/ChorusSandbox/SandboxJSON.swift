import Foundation
import Vapor

/// JSON responses of the sandbox control APIs (ISO-8601 dates, sorted keys).
enum SandboxJSON {
    static func response<Value: Encodable>(_ value: Value, status: HTTPResponseStatus = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        var headers = HTTPHeaders()
        headers.contentType = .json
        return Response(status: status, headers: headers, body: .init(data: data))
    }

    /// A `{"detail": message}` error body.
    static func detail(_ message: String, status: HTTPResponseStatus) -> Response {
        response(["detail": message], status: status)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, from request: Request) throws -> Value {
        try JSONDecoder().decode(type, from: Data((request.body.string ?? "").utf8))
    }
}
