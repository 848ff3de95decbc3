import Foundation
import Testing

@testable import ChorusKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A bad answer from the server (or a proxy in front of it) must not crash the app: numbers in headers are checked
/// before they are converted (issue 16).
@Suite("ChorusKit: numbers from the server")
struct KitNumericInputTests {
    private func rateLimited(retryAfter value: String) throws -> ChorusError {
        let url = URL(string: "https://chorus.invalid/mobile/make-call")!
        let response = try #require(HTTPURLResponse(url: url, statusCode: 429, httpVersion: "HTTP/1.1", headerFields: ["Retry-After": value]))
        return ChorusError.from(status: 429, body: Data("{}".utf8), response: response)
    }

    @Test("Retry-After: 1e300 is clamped to a year and its message is shown (it trapped converting to Int)")
    func hugeRetryAfter() throws {
        let error = try rateLimited(retryAfter: "1e300")
        guard case .rateLimited(let seconds) = error else {
            Issue.record("expected rateLimited, got \(error)")
            return
        }
        #expect(seconds == ChorusError.longestRetryAfter)
        #expect(error.errorDescription == "Too many requests. Please try again in 31622400 seconds.")
    }

    @Test("Retry-After: inf, nan and negative values are no delay; a public rateLimited with any number describes itself")
    func unusableRetryAfter() throws {
        for value in ["inf", "-inf", "nan", "infinity"] {
            guard case .rateLimited(nil) = try rateLimited(retryAfter: value) else {
                Issue.record("expected rateLimited(nil) for \(value)")
                continue
            }
        }
        guard case .rateLimited(.some(0)) = try rateLimited(retryAfter: "-5") else {
            Issue.record("expected rateLimited(0) for -5")
            return
        }
        // Apps may build the error themselves: no value makes its description trap.
        for seconds in [1e300, .infinity, .greatestFiniteMagnitude, .nan, -1] {
            #expect(ChorusError.rateLimited(retryAfter: seconds).errorDescription?.hasPrefix("Too many requests.") == true)
        }
        #expect(ChorusError.rateLimited(retryAfter: 1).errorDescription == "Too many requests. Please try again in 1 second.")
        // The retry loop does not wait for a clamped value either: it is past any maxDelay.
        #expect(RetryPolicy.standard.delay(after: .answer(status: 429, retryAfter: ChorusError.longestRetryAfter), attempt: 1, idempotent: true, lostAnswerEarlier: false) == nil)
    }

    @Test("a permission whose calls add up past Int.max saturates (the sum trapped)")
    func saturatedCallsRemaining() throws {
        func permission(week: Int, addOn: Int) throws -> CallPermission {
            let json = #"{"can_make_call":true,"status":"ok","details":{"calls_remaining_this_week":\#(week),"addon_calls_remaining":\#(addOn)}}"#
            return CallPermission(try ChorusJSON.makeDecoder().decode(CallPermissionResponse.self, from: Data(json.utf8)))
        }
        #expect(try permission(week: .max, addOn: 1).callsRemaining == .max)
        #expect(try permission(week: .min, addOn: -1).callsRemaining == .min)
        #expect(try permission(week: 3, addOn: 4).callsRemaining == 7)
    }
}
