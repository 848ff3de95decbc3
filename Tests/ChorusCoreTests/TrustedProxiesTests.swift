import ChorusCore
import Testing

/// `CHORUS_TRUSTED_PROXIES`: which `X-Forwarded-For` entry is the client, and which lists are refused.
@Suite struct TrustedProxiesTests {
    let local = TrustedProxies(list: "127.0.0.1, ::1, 10.0.0.0/8, fd00::/8")!

    @Test("a peer that is not a trusted proxy is the client, whatever its headers say")
    func untrustedPeer() {
        #expect(local.clientAddress(peer: "203.0.113.9", forwardedFor: ["198.51.100.1"]) == "203.0.113.9")
        #expect(TrustedProxies.none.clientAddress(peer: "127.0.0.1", forwardedFor: ["198.51.100.1"]) == "127.0.0.1")
    }

    @Test("from a trusted proxy the rightmost untrusted hop is the client; what the client wrote to the left is ignored")
    func rightmostUntrusted() {
        #expect(local.clientAddress(peer: "127.0.0.1", forwardedFor: ["198.51.100.1"]) == "198.51.100.1")
        // A client that sends its own X-Forwarded-For: nginx appends the real peer; the forged entry stays on the left.
        #expect(local.clientAddress(peer: "127.0.0.1", forwardedFor: ["1.2.3.4, 198.51.100.1"]) == "198.51.100.1")
        // Two proxies (a load balancer in 10/8, then nginx on loopback): both skipped.
        #expect(local.clientAddress(peer: "::1", forwardedFor: ["198.51.100.1", "10.1.2.3"]) == "198.51.100.1")
        // Ports, brackets and IPv4-mapped or long IPv6 spellings come out as one canonical address.
        #expect(local.clientAddress(peer: "127.0.0.1", forwardedFor: ["198.51.100.1:51000"]) == "198.51.100.1")
        #expect(local.clientAddress(peer: "127.0.0.1", forwardedFor: ["[2001:db8::1]:443"]) == "2001:db8:0:0:0:0:0:1")
        #expect(local.clientAddress(peer: "::ffff:127.0.0.1", forwardedFor: ["::ffff:198.51.100.1"]) == "198.51.100.1")
    }

    @Test("no header, only proxies, or a hop that is not an address")
    func edgeCases() {
        #expect(local.clientAddress(peer: "127.0.0.1", forwardedFor: []) == "127.0.0.1")
        #expect(local.clientAddress(peer: "127.0.0.1", forwardedFor: ["10.0.0.7, 10.0.0.8"]) == "10.0.0.7")
        // The walk stops at garbage: the last hop a trusted proxy vouched for stands.
        #expect(local.clientAddress(peer: "127.0.0.1", forwardedFor: ["198.51.100.1, unknown"]) == "127.0.0.1")
        #expect(local.clientAddress(peer: "127.0.0.1", forwardedFor: ["unknown, 10.0.0.9"]) == "10.0.0.9")
        #expect(local.clientAddress(peer: "unknown", forwardedFor: ["198.51.100.1"]) == "unknown")
        #expect(local.clientAddress(peer: "127.0.0.1", forwardedFor: [String(repeating: "9", count: 10_000)]) == "127.0.0.1")
    }

    @Test("lists: addresses and CIDR ranges of both families; anything else is refused")
    func parsing() {
        #expect(TrustedProxies(list: "")?.isEmpty == true)
        #expect(TrustedProxies(list: "0.0.0.0/0")?.clientAddress(peer: "203.0.113.9", forwardedFor: ["198.51.100.1"]) == "198.51.100.1")
        #expect(TrustedProxies(list: "192.168.1.0/25")?.clientAddress(peer: "192.168.1.200", forwardedFor: ["198.51.100.1"]) == "192.168.1.200")
        #expect(TrustedProxies(list: "192.168.1.0/25")?.clientAddress(peer: "192.168.1.100", forwardedFor: ["198.51.100.1"]) == "198.51.100.1")
        for bad in ["localhost", "127.0.0.1/33", "::1/129", "10.0.0.0/-1", "10.0.0.0/", "1.2.3", "10.0.0.0/8/8", "fd00::/x"] {
            #expect(TrustedProxies(list: bad) == nil, "\(bad)")
        }
    }
}
