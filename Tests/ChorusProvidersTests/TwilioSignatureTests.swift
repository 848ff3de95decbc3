import ChorusCore
import Foundation
import Testing

@testable import ChorusProviders

@Suite("Twilio X-Twilio-Signature")
struct TwilioSignatureTests {
    /// The vector from Twilio's webhook-security documentation, checked with twilio-python 9.7.2.
    static let token = "12345"
    static let url = "https://mycompany.com/myapp.php?foo=1&bar=2"
    static let parameters: [(String, String)] = [
        ("CallSid", "CA1234567890ABCDE"),
        ("Caller", "+12349013030"),
        ("Digits", "1234"),
        ("From", "+12349013030"),
        ("To", "+18005551212"),
    ]
    static let expected = "0/KCTR6DLpKmkAf8muzZqo1nDgQ="

    let validator = TwilioRequestValidator(authToken: Self.token)

    @Test func computesTheOfficialVector() {
        #expect(validator.signature(url: Self.url, parameters: Self.parameters) == Self.expected)
        #expect(validator.isValid(signature: Self.expected, url: Self.url, parameters: Self.parameters))
    }

    @Test func parameterOrderDoesNotMatter() {
        let shuffled = Array(Self.parameters.reversed())
        #expect(validator.signature(url: Self.url, parameters: shuffled) == Self.expected)
    }

    @Test func acceptsTheDefaultPortAddedOrRemoved() {
        let withPort = "https://mycompany.com:443/myapp.php?foo=1&bar=2"
        let signedWithPort = validator.signature(url: withPort, parameters: Self.parameters)
        #expect(signedWithPort != Self.expected)
        #expect(validator.isValid(signature: signedWithPort, url: Self.url, parameters: Self.parameters))
        #expect(validator.isValid(signature: Self.expected, url: withPort, parameters: Self.parameters))

        let http = "http://example.com/status"
        let httpWithPort = "http://example.com:80/status"
        let signedHTTP = validator.signature(url: httpWithPort, parameters: [])
        #expect(validator.isValid(signature: signedHTTP, url: http, parameters: []))
    }

    @Test func rejectsOtherPortsAndURLs() {
        let otherPort = "https://mycompany.com:8443/myapp.php?foo=1&bar=2"
        #expect(!validator.isValid(signature: Self.expected, url: otherPort, parameters: Self.parameters))
        #expect(!validator.isValid(signature: Self.expected, url: "https://mycompany.com/myapp.php", parameters: Self.parameters))
        #expect(TwilioRequestValidator.portVariants(of: otherPort) == [otherPort])
        #expect(
            TwilioRequestValidator.portVariants(of: "http://127.0.0.1:80/a?b=c")
                == ["http://127.0.0.1:80/a?b=c", "http://127.0.0.1/a?b=c"]
        )
    }

    @Test func rejectsTamperedParametersAndBadSignatures() {
        var tampered = Self.parameters
        tampered[4] = ("To", "+18005551213")
        #expect(!validator.isValid(signature: Self.expected, url: Self.url, parameters: tampered))
        #expect(!validator.isValid(signature: Self.expected, url: Self.url, parameters: Self.parameters + [("Extra", "1")]))
        #expect(!validator.isValid(signature: nil, url: Self.url, parameters: Self.parameters))
        #expect(!validator.isValid(signature: "", url: Self.url, parameters: Self.parameters))
        #expect(!validator.isValid(signature: "not base64!", url: Self.url, parameters: Self.parameters))
        let otherToken = TwilioRequestValidator(authToken: "54321")
        #expect(!otherToken.isValid(signature: Self.expected, url: Self.url, parameters: Self.parameters))
    }

    @Test func repeatedParametersAreSortedByValue() {
        let events = [("StatusCallbackEvent", "ringing"), ("StatusCallbackEvent", "answered")]
        let sorted = [("StatusCallbackEvent", "answered"), ("StatusCallbackEvent", "ringing")]
        #expect(validator.signature(url: Self.url, parameters: events) == validator.signature(url: Self.url, parameters: sorted))
    }
}

@Suite("Form encoding")
struct TwilioFormEncodingTests {
    @Test func encodesPlusAndSpaces() {
        let encoded = TwilioFormEncoding.encode([("To", "+15551234567"), ("Name", "a b&c=d"), ("Url", "https://x.test/a?b=1")])
        #expect(encoded == "To=%2B15551234567&Name=a+b%26c%3Dd&Url=https%3A%2F%2Fx.test%2Fa%3Fb%3D1")
    }

    @Test func roundTripsRepeatedNamesAndUnicode() {
        let parameters = [("E", "initiated"), ("E", "ringing"), ("Text", "héllo wörld +1"), ("Empty", "")]
        let decoded = TwilioFormEncoding.decode(TwilioFormEncoding.encode(parameters))
        #expect(decoded.map(\.0) == parameters.map(\.0))
        #expect(decoded.map(\.1) == parameters.map(\.1))
    }
}

@Suite("Twilio REST errors")
struct TwilioRESTErrorTests {
    @Test func mapsTwilioErrorBodies() {
        let body = Data(#"{"code":21211,"message":"Invalid 'To' Phone Number","more_info":"x","status":400}"#.utf8)
        #expect(
            TwilioRESTClient.error(status: 400, body: body)
                == .rejected(httpStatus: 400, code: 21211, message: "Invalid 'To' Phone Number")
        )
        #expect(TwilioRESTClient.error(status: 404, body: Data("nope".utf8)) == .rejected(httpStatus: 404, code: nil, message: "nope"))
    }

    @Test func serverErrorsAndRateLimitsAreUnavailable() {
        let body = Data(#"{"code":20429,"message":"Too Many Requests","status":429}"#.utf8)
        #expect(TwilioRESTClient.error(status: 429, body: body) == .unavailable("Twilio HTTP 429: Too Many Requests"))
        #expect(TwilioRESTClient.error(status: 503, body: Data()) == .unavailable("Twilio HTTP 503: "))
    }
}

@Suite("Phone number masking")
struct PhoneNumberMaskTests {
    @Test func keepsThePlusAndTheLastFourDigits() {
        #expect(PhoneNumberMask.mask("+15551237890") == "+*******7890")
        #expect(PhoneNumberMask.mask("+447700900123") == "+********0123")
        #expect(PhoneNumberMask.mask("5551237890") == "******7890")
    }

    @Test func masksShortValuesCompletely() {
        #expect(PhoneNumberMask.mask("") == "")
        #expect(PhoneNumberMask.mask("+1234") == "+****")
        #expect(PhoneNumberMask.mask("911") == "***")
    }

    @Test func trimsWhitespaceFirst() {
        #expect(PhoneNumberMask.mask("  +15551237890 ") == "+*******7890")
    }
}
