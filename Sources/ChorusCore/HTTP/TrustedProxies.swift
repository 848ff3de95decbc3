import Foundation

/// The reverse proxies (nginx, a load balancer) whose `X-Forwarded-For` is believed, and the client address a request
/// came from through them. Pure.
///
/// A request whose connecting peer is not a trusted proxy is from that peer, whatever its headers say. From a trusted
/// proxy, `X-Forwarded-For` is read from the right (each proxy appends the address it saw): the first address that is
/// not itself a trusted proxy is the client. An entry that is not an address ends the walk at the hop that wrote it.
public struct TrustedProxies: Sendable, Equatable {
    /// One trusted range: an address's bytes (4 or 16) and how many leading bits must match.
    struct Range: Sendable, Equatable {
        var bytes: [UInt8]
        var prefixLength: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var remaining = prefixLength
            for index in bytes.indices where remaining > 0 {
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xff << (8 - bits))
                if address[index] & mask != bytes[index] & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    private(set) var ranges: [Range]

    /// No proxy is trusted: every request is from its connecting peer.
    public static let none = TrustedProxies(ranges: [])

    private init(ranges: [Range]) { self.ranges = ranges }

    /// Parses a comma-separated list of addresses and CIDR ranges (`127.0.0.1, ::1, 10.0.0.0/8, fd00::/8`); `nil` if
    /// any entry is neither (an empty list trusts nobody).
    public init?(list text: String) {
        var ranges: [Range] = []
        for entry in text.split(separator: ",") {
            let trimmed = entry.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty else { continue }
            let parts = trimmed.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let bytes = Self.address(String(parts[0])) else { return nil }
            var prefixLength = bytes.count * 8
            if parts.count == 2 {
                guard parts[1].count <= 3, parts[1].allSatisfy(\.isASCII), let length = Int(parts[1]),
                    (0...bytes.count * 8).contains(length)
                else { return nil }
                prefixLength = length
            }
            ranges.append(Range(bytes: bytes, prefixLength: prefixLength))
        }
        self.ranges = ranges
    }

    /// Whether nobody is trusted.
    public var isEmpty: Bool { ranges.isEmpty }

    /// The client address of a request from `peer` carrying these `X-Forwarded-For` header values (several headers are
    /// one list, in order). Returns `peer` when it is not a trusted proxy or the header names no client.
    public func clientAddress(peer: String, forwardedFor headers: [String]) -> String {
        guard !ranges.isEmpty, let peerBytes = Self.address(peer), trusts(peerBytes) else { return peer }
        let hops = headers.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        var client = peer
        for hop in hops.reversed() {
            guard let bytes = Self.address(Self.withoutPort(hop)) else { return client }
            client = Self.canonical(bytes)
            if !trusts(bytes) { return client }
        }
        return client
    }

    private func trusts(_ address: [UInt8]) -> Bool { ranges.contains { $0.contains(address) } }

    /// An address's bytes: 4 for IPv4 (an IPv4-mapped IPv6 address included), 16 for IPv6; `nil` for anything else.
    static func address(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= 64 else { return nil }
        if let v4 = NetworkPrefix.parseIPv4(text) { return v4 }
        guard let v6 = NetworkPrefix.parseIPv6(text) else { return nil }
        if v6[0..<10].allSatisfy({ $0 == 0 }) && v6[10] == 0xff && v6[11] == 0xff { return Array(v6[12..<16]) }
        return v6
    }

    /// `203.0.113.7:51000` → `203.0.113.7`, `[2001:db8::1]:443` → `2001:db8::1`; anything else as it is.
    static func withoutPort(_ hop: String) -> String {
        if hop.hasPrefix("["), let close = hop.firstIndex(of: "]") { return String(hop[hop.index(after: hop.startIndex)..<close]) }
        let colons = hop.filter { $0 == ":" }.count
        if colons == 1, let colon = hop.firstIndex(of: ":") { return String(hop[..<colon]) }
        return hop
    }

    /// One spelling per address, so that one client is one rate-limit key however a proxy wrote it.
    static func canonical(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        var groups: [String] = []
        for index in stride(from: 0, to: 16, by: 2) { groups.append(String(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]), radix: 16)) }
        return groups.joined(separator: ":")
    }
}
