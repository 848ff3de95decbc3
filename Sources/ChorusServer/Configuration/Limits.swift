import ChorusCore
import Foundation

// Rate limits, connection caps and admission limits (per instance or across all instances).
extension ChorusConfiguration {
    /// Limits per fixed window: `limit` requests per `window` seconds.
    public struct RateLimit: Sendable, Equatable {
        public var limit: Int
        public var window: TimeInterval
    }

    /// Rate limits; `nil` members are unlimited.
    public struct RateLimits: Sendable, Equatable {
        /// Every authenticated request, per user (per instance).
        public var user: RateLimit?
        /// Call placement (make-call, schedule-call), per user, across all instances on one database.
        public var calls: RateLimit?
        /// Register, login, refresh and the console's sign-in, per client IP, across all instances on one database.
        public var auth: RateLimit?

        public static let standard = RateLimits(
            user: RateLimit(limit: 600, window: 60), calls: RateLimit(limit: 20, window: 60), auth: RateLimit(limit: 30, window: 60)
        )
        public static let off = RateLimits(user: nil, calls: nil, auth: nil)
    }

    /// Caps on the long-lived connections of this instance (the `/ws` WebSockets and the server-sent event streams)
    /// and on what clients send over `/ws`. Per instance, like the rate limits.
    public struct ConnectionLimits: Sendable, Equatable {
        /// Open WebSockets of one user, `/ws` and recording streams together (`CHORUS_WS_PER_USER`).
        public var webSocketsPerUser: Int
        /// Open event streams of one user: call progress, story progress (`CHORUS_SSE_PER_USER`).
        public var eventStreamsPerUser: Int
        /// WebSockets and event streams of all users together (`CHORUS_MAX_REALTIME_CONNECTIONS`).
        public var perInstance: Int
        /// Bytes written to one WebSocket that its client has not taken yet; beyond them the socket is closed with
        /// 1013 (`CHORUS_WS_SEND_QUEUE_BYTES`).
        public var sendQueueBytes: Int
        /// Messages a client may send over one `/ws` WebSocket per window; beyond them the socket is closed with 1008
        /// (`CHORUS_WS_MESSAGE_RATE`, `messages/seconds`).
        public var inboundMessages: RateLimit

        public static let standard = ConnectionLimits(
            webSocketsPerUser: 8, eventStreamsPerUser: 8, perInstance: 10_000, sendQueueBytes: 1 << 20,
            inboundMessages: RateLimit(limit: 60, window: 10))

        static func load(from reader: inout EnvironmentReader) -> ConnectionLimits {
            return ConnectionLimits(
                webSocketsPerUser: reader.value(
                    "CHORUS_WS_PER_USER", default: standard.webSocketsPerUser, parse: EnvironmentReader.integer(in: 1...1_000)),
                eventStreamsPerUser: reader.value(
                    "CHORUS_SSE_PER_USER", default: standard.eventStreamsPerUser, parse: EnvironmentReader.integer(in: 1...1_000)),
                perInstance: reader.value(
                    "CHORUS_MAX_REALTIME_CONNECTIONS", default: standard.perInstance, parse: EnvironmentReader.integer(in: 1...1_000_000)),
                sendQueueBytes: reader.value(
                    "CHORUS_WS_SEND_QUEUE_BYTES", default: standard.sendQueueBytes, parse: EnvironmentReader.integer(in: 1_024...(256 << 20))),
                inboundMessages: reader.value(
                    "CHORUS_WS_MESSAGE_RATE", default: standard.inboundMessages,
                    accepts: "messages/seconds such as 50/10: a whole number from 1 to 100000, a number of seconds above 0, at most 3600"
                ) { text in
                    let numbers = text.split(separator: "/")
                    guard numbers.count == 2, let limit = Int(numbers[0]), let window = Double(numbers[1]),
                        (1...100_000).contains(limit), window > 0, window <= 3_600
                    else { return nil }
                    return RateLimit(limit: limit, window: window)
                })
        }
    }

    /// Who may sign up and call for free, across all instances (counted in the database): free trial calls per UTC
    /// day across all accounts, and signups per client address and per network per UTC day. `nil` members are
    /// unlimited. On by default in production, off in development (tests, benchmarks and the playground register many
    /// accounts from one loopback address).
    public struct AdmissionLimits: Sendable, Equatable {
        /// Trial calls placed per UTC day, all accounts together (`CHORUS_TRIAL_CALLS_PER_DAY`).
        public var trialCallsPerDay: Int?
        /// Accounts registered per client address per UTC day (`CHORUS_SIGNUPS_PER_IP`).
        public var signupsPerAddress: Int?
        /// Accounts registered per network per UTC day (`CHORUS_SIGNUPS_PER_NETWORK`).
        public var signupsPerNetwork: Int?
        /// What a network is (`CHORUS_SIGNUP_NETWORK_PREFIXES`, `24,64`: IPv4 /24, IPv6 /64).
        public var network: NetworkPrefix

        public static let production = AdmissionLimits(
            trialCallsPerDay: 200, signupsPerAddress: 5, signupsPerNetwork: 50, network: NetworkPrefix())
        public static let off = AdmissionLimits(trialCallsPerDay: nil, signupsPerAddress: nil, signupsPerNetwork: nil, network: NetworkPrefix())

        static func load(from reader: inout EnvironmentReader, production: Bool) -> AdmissionLimits {
            let defaults = production ? AdmissionLimits.production : .off
            func count(_ key: String, _ fallback: Int?) -> Int? { reader.countOrOff(key, default: fallback, in: 0...10_000_000) }
            return AdmissionLimits(
                trialCallsPerDay: count("CHORUS_TRIAL_CALLS_PER_DAY", defaults.trialCallsPerDay),
                signupsPerAddress: count("CHORUS_SIGNUPS_PER_IP", defaults.signupsPerAddress),
                signupsPerNetwork: count("CHORUS_SIGNUPS_PER_NETWORK", defaults.signupsPerNetwork),
                network: reader.value(
                    "CHORUS_SIGNUP_NETWORK_PREFIXES", default: defaults.network,
                    accepts: "two prefix lengths such as 24,56: IPv4 from 8 to 32, then IPv6 from 16 to 128"
                ) { text in
                    let parts = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
                    guard parts.count == 2, let v4 = parts[0], let v6 = parts[1], (8...32).contains(v4), (16...128).contains(v6) else { return nil }
                    return NetworkPrefix(ipv4PrefixLength: v4, ipv6PrefixLength: v6)
                })
        }
    }
}

extension ChorusConfiguration.RateLimits {
    /// What ``parse(_:)`` accepts.
    static let accepts = "off, default, or limits such as user=600/60,calls=20/60,auth=30/60 (requests/seconds up to 86400 for user, calls or auth; none turns one off)"

    /// Parses `off`, `default`, or `user=600/60,calls=20/60,auth=30/60` (requests/seconds; `none` disables one).
    static func parse(_ text: String) -> Self? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed == "off" { return .off }
        if trimmed == "default" || trimmed.isEmpty { return .standard }
        var limits = Self.standard
        for part in trimmed.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { return nil }
            let limit: ChorusConfiguration.RateLimit?
            if pair[1] == "none" {
                limit = nil
            } else {
                let numbers = pair[1].split(separator: "/")
                guard numbers.count == 2, let count = Int(numbers[0]), let window = Double(numbers[1]), count > 0, window > 0, window <= 86_400
                else {
                    return nil
                }
                limit = ChorusConfiguration.RateLimit(limit: count, window: window)
            }
            switch pair[0] {
            case "user": limits.user = limit
            case "calls": limits.calls = limit
            case "auth": limits.auth = limit
            default: return nil
            }
        }
        return limits
    }
}
