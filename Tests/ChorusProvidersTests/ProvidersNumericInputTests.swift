import Foundation
import NIOCore
import Testing

@testable import ChorusProviders

/// Numbers in provider answers and peer frames (issue 16): parsed without trapping, out-of-range values refused or
/// clamped.
@Suite("Numbers from outside: provider answers")
struct ProvidersNumericInputTests {
    private func timestamp(_ value: String) -> Int?? {
        let frame = #"{"event":"media","media":{"track":"inbound","timestamp":\#(value),"payload":"/w=="}}"#
        guard case .media(_, let timestamp) = TwilioMediaStreamFrame.parse(ByteBuffer(string: frame)) else { return nil }
        return .some(timestamp)
    }

    @Test("a media frame's timestamp at or past Int's bounds is no timestamp (−2^63 trapped when negated)")
    func mediaTimestamps() {
        #expect(timestamp(#""20""#) == .some(20))
        #expect(timestamp("40") == .some(40))
        #expect(timestamp(#""-20""#) == .some(-20))
        #expect(timestamp(#""9223372036854775807""#) == .some(Int.max))
        #expect(timestamp(#""-9223372036854775808""#) == .some(Int.min))
        // Past the bounds: nil instead of a wrapped value (or the trap of negating Int.min).
        #expect(timestamp(#""-9223372036854775809""#) == .some(nil))
        #expect(timestamp(#""9223372036854775808""#) == .some(nil))
        #expect(timestamp(#""99999999999999999999999999""#) == .some(nil))
        #expect(timestamp(#""-99999999999999999999999999""#) == .some(nil))
        #expect(timestamp("1e400") == .some(nil))
    }

    @Test("App Store millisecond dates past 9999 are clamped to it (Int64.max trapped when stored back as milliseconds)")
    func appStoreDates() {
        let latest = AppStoreSignedDataVerifier.date(millis: .max)
        #expect(ISO8601DateFormatter().string(from: latest) == "9999-12-31T23:59:59Z")
        let earliest = AppStoreSignedDataVerifier.date(millis: .min)
        #expect(earliest.timeIntervalSince1970 == -62_135_596_800)
        #expect(AppStoreSignedDataVerifier.date(millis: 1_700_000_000_123).timeIntervalSince1970 == 1_700_000_000.123)
        // verifyReceipt's `*_ms` strings go through the same clamp.
        #expect(AppStoreReceiptVerifier.ReceiptMillis.date("9223372036854775807") == latest)
        #expect(AppStoreReceiptVerifier.ReceiptMillis.date("99999999999999999999") == nil)
        #expect(AppStoreReceiptVerifier.ReceiptMillis.date("-5") == nil)
    }
}
