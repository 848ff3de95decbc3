import Foundation

/// The HTTP method of an ``Endpoint``.
public enum EndpointMethod: String, Sendable, Hashable, CaseIterable {
    case get = "GET"
    case post = "POST"
    case put = "PUT"
    case patch = "PATCH"
    case delete = "DELETE"
}

/// The body or answer type of an ``Endpoint`` that has none (the answer is `204 No Content`, or the request carries
/// no body).
public struct NoContent: Sendable, Hashable {
    public init() {}
}

/// The body or answer type of an ``Endpoint`` that is not JSON: a form, a multipart upload, audio or picture bytes,
/// an HTML page, a server-sent event stream or a WebSocket upgrade. The OpenAPI contract says which.
public struct RawContent: Sendable, Hashable {
    public init() {}
}

/// One operation of the Chorus API, named once: its method, its path template as the OpenAPI contract spells it,
/// what it takes (`Body`) and what it answers on success (`Answer`).
///
/// `Body` and `Answer` are the ``ChorusAPI`` DTOs, or ``NoContent`` / ``RawContent``. The server registers its routes
/// from these values and the SDK builds its requests from them, so a path is written in exactly one place; a test
/// checks that the table, the server's routes and `openapi.json` list the same operations.
public struct Endpoint<Body: Sendable, Answer: Sendable>: Sendable, Hashable {
    /// The method.
    public let method: EndpointMethod
    /// The path template, e.g. `/mobile/calls/{call_sid}`: constant segments and `{name}` parameters.
    public let template: String
    /// The status of a successful answer (200, or 201 for a creation, 204 for ``NoContent``).
    public let successStatus: Int

    public init(_ method: EndpointMethod, _ template: String, status: Int? = nil) {
        self.method = method
        self.template = template
        self.successStatus = status ?? (Answer.self == NoContent.self ? 204 : 200)
    }

    /// The template's segments, in order.
    public var segments: [EndpointSegment] { EndpointSegment.parse(template) }

    /// The concrete path with `parameters` substituted for the template's parameters, in order (values are inserted
    /// as given; the transport percent-encodes the path). Missing parameters become empty segments.
    public func path(_ parameters: String...) -> String {
        path(parameters)
    }

    /// The concrete path with `parameters` substituted, in order (see the variadic form).
    public func path(_ parameters: [String]) -> String {
        var remaining = parameters[...]
        let filled = segments.map { segment -> String in
            switch segment {
            case .constant(let text): return text
            case .parameter: return remaining.popFirst() ?? ""
            }
        }
        return "/" + filled.joined(separator: "/")
    }

    /// The endpoint without its types, for tables and comparisons.
    public var erased: AnyEndpoint { AnyEndpoint(method: method, template: template, successStatus: successStatus) }
}

/// A segment of an endpoint's path template.
public enum EndpointSegment: Sendable, Hashable {
    /// A fixed segment, e.g. `mobile`.
    case constant(String)
    /// A `{name}` parameter.
    case parameter(String)

    /// The segments of `template` (empty segments are skipped).
    public static func parse(_ template: String) -> [EndpointSegment] {
        template.split(separator: "/", omittingEmptySubsequences: true).map { part in
            if part.hasPrefix("{"), part.hasSuffix("}"), part.count > 2 {
                return .parameter(String(part.dropFirst().dropLast()))
            }
            return .constant(String(part))
        }
    }
}

/// An ``Endpoint`` without its body and answer types. Two are the same operation when their method and template are
/// (equality and hashing ignore ``successStatus``).
public struct AnyEndpoint: Sendable, Hashable, CustomStringConvertible {
    public let method: EndpointMethod
    public let template: String
    /// The status of a successful answer.
    public let successStatus: Int

    public init(method: EndpointMethod, template: String, successStatus: Int) {
        self.method = method
        self.template = template
        self.successStatus = successStatus
    }

    public static func == (left: AnyEndpoint, right: AnyEndpoint) -> Bool {
        left.method == right.method && left.template == right.template
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(template)
    }

    /// `GET /mobile/usage-stats`.
    public var description: String { "\(method.rawValue) \(template)" }
}

/// The endpoint table: every operation of the Chorus API, one namespace per area. Each area lists its endpoints in
/// `endpoints`; ``all`` joins them.
public enum API {
    /// Every endpoint of the API.
    public static var all: [AnyEndpoint] {
        Auth.endpoints + Calls.endpoints + Purchases.endpoints + Messaging.endpoints + Stories.endpoints
            + Operations.endpoints
    }

    /// Registration, sign-in and sessions (`/auth/*`), the account (`/me` except voice data).
    public enum Auth {}
    /// The Calls product (`/mobile/*` except purchases), Twilio's webhooks and the media stream.
    public enum Calls {}
    /// Subscriptions and add-ons (`/mobile/purchase-*`, App Store notifications).
    public enum Purchases {}
    /// Voice messages: conversations, invitations, audio, messages, voice profiles, realtime events, voice data.
    public enum Messaging {}
    /// Stories: heroes, custom events, stories and their media.
    public enum Stories {}
    /// The server itself and its operators: health, the contract, metrics, the console, the playground, the
    /// development helpers, web assets.
    public enum Operations {}
}
