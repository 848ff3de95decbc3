import ChorusServer
import Foundation
import Testing

/// A bad setting says which value was given (unless it is a secret) and what is accepted (issue 20).
@Suite("Configuration messages")
struct ConfigurationMessageTests {
    @Test("each kind of setting names the value given and what it accepts")
    func everyKindSaysWhatItAccepts() {
        let cases: [(key: String, value: String, message: String)] = [
            ("CHORUS_PORT", "abc", #"CHORUS_PORT="abc" is not valid: expected a whole number from 0 to 65535 (see docs/configuration.md)."#),
            ("CHORUS_JOB_CONCURRENCY", "0", #"CHORUS_JOB_CONCURRENCY="0" is not valid: expected a whole number from 1 to 64"#),
            ("CHORUS_MAX_BODY_BYTES", "-5", #"CHORUS_MAX_BODY_BYTES="-5" is not valid: expected a whole number of at least 1"#),
            ("CHORUS_TRIAL_DAYS", "40000", #"CHORUS_TRIAL_DAYS="40000" is not valid: expected a whole number of days from 1 to 36500"#),
            ("CHORUS_OTEL_SAMPLE_RATIO", "1.5", #"CHORUS_OTEL_SAMPLE_RATIO="1.5" is not valid: expected a number from 0 to 1"#),
            ("CHORUS_SANDBOX_RING_SECONDS", "nan", #"CHORUS_SANDBOX_RING_SECONDS="nan" is not valid: expected a number of seconds from 0 to 3600"#),
            (
                "CHORUS_JOB_POLL_SECONDS", "0",
                #"CHORUS_JOB_POLL_SECONDS="0" is not valid: expected a number of seconds above 0, at most 3600"#
            ),
            ("CHORUS_TWILIO_CALLS_PER_SECOND", "inf", #"CHORUS_TWILIO_CALLS_PER_SECOND="inf" is not valid: expected a number above 0, at most 1000"#),
            ("CHORUS_PLAYGROUND", "maybe", #"CHORUS_PLAYGROUND="maybe" is not valid: expected true or false (also 1 or 0, yes or no)"#),
            ("CHORUS_ENVIRONMENT", "staging", #"CHORUS_ENVIRONMENT="staging" is not valid: expected development or production"#),
            ("CHORUS_LOG_FORMAT", "xml", #"CHORUS_LOG_FORMAT="xml" is not valid: expected json or text"#),
            (
                "CHORUS_OPENAI_REASONING_EFFORT", "max",
                #"CHORUS_OPENAI_REASONING_EFFORT="max" is not valid: expected none, minimal, low, medium, high or xhigh"#
            ),
            ("CHORUS_SANDBOX_SPEECH", "say", #"CHORUS_SANDBOX_SPEECH="say" is not valid: expected synthetic or espeak-ng"#),
            (
                "CHORUS_PUBLIC_URL", "ftp://example.com",
                #"CHORUS_PUBLIC_URL="ftp://example.com" is not valid: expected an http or https URL with a host, such as https://example.com"#
            ),
            (
                "CHORUS_STORIES_USER_DAILY_OPERATIONS", "lots",
                #"CHORUS_STORIES_USER_DAILY_OPERATIONS="lots" is not valid: expected a whole number from 0 to 10000000, or off"#
            ),
            (
                "CHORUS_VOICE_DAILY_BUDGET_USD", "-1",
                #"CHORUS_VOICE_DAILY_BUDGET_USD="-1" is not valid: expected an amount of US dollars from 0, below 1000000000, such as 12.50"#
            ),
            ("CHORUS_CALLS_DAILY_BUDGET_USD", "x", #"CHORUS_CALLS_DAILY_BUDGET_USD="x" is not valid: expected an amount of US dollars"#),
            ("CHORUS_WS_MESSAGE_RATE", "50", #"CHORUS_WS_MESSAGE_RATE="50" is not valid: expected messages/seconds such as 50/10"#),
            ("CHORUS_RATE_LIMITS", "fast", #"CHORUS_RATE_LIMITS="fast" is not valid: expected off, default, or limits such as user=600/60"#),
            ("CHORUS_CALL_HOURS", "never", #"CHORUS_CALL_HOURS="never" is not valid: expected local hours such as 09:00-20:00"#),
        ]
        for (key, value, message) in cases {
            let problems = ChorusConfiguration.problems(loading: [key: value])
            #expect(problems.count == 1, "\(key): \(problems)")
            #expect(problems.first?.hasPrefix(message) == true, "\(key): \(problems)")
            #expect(problems.first?.hasSuffix("(see docs/configuration.md).") == true, "\(key): \(problems)")
        }
    }

    @Test("every bad setting is reported at once, in the order read")
    func everyProblemAtOnce() {
        let problems = ChorusConfiguration.problems(loading: ["CHORUS_PORT": "x", "CHORUS_JOB_CONCURRENCY": "y", "CHORUS_PLAYGROUND": "z"])
        #expect(problems.map { $0.prefix(while: { $0 != "=" }) } == ["CHORUS_PORT", "CHORUS_JOB_CONCURRENCY", "CHORUS_PLAYGROUND"])
    }

    @Test("a secret's value, or a URL's credentials, are never echoed; odd characters are escaped and long values cut")
    func secretsAreNotEchoed() {
        let token = ChorusConfiguration.problems(loading: ["CHORUS_METRICS_TOKEN": "short-s3cret"])
        #expect(token == ["CHORUS_METRICS_TOKEN (its value is not shown: it is a secret) is not valid: expected a token of at least 16 bytes (see docs/configuration.md)."])
        #expect(!token.joined().contains("s3cret"))

        let credentials = ChorusConfiguration.problems(loading: ["CHORUS_OTEL_ENDPOINT": "ftp://user:hunter2@collector.example.com/otlp"])
        #expect(credentials.count == 1)
        #expect(credentials.first?.hasPrefix("CHORUS_OTEL_ENDPOINT (its value is not shown: it is a secret) is not valid: expected an http") == true)
        #expect(!credentials.joined().contains("hunter2"), "\(credentials)")

        let odd = ChorusConfiguration.problems(loading: ["CHORUS_PORT": "5\"0\u{7}" + String(repeating: "9", count: 100)])
        #expect(odd.first?.hasPrefix(#"CHORUS_PORT="5\"0\u{"#) == true, "\(odd)")
        #expect(odd.first?.contains("\u{7}") == false, "\(odd)")
        #expect(odd.first?.contains("…\" is not valid") == true, "\(odd)")
        #expect(odd.first?.contains(String(repeating: "9", count: 60)) == false, "\(odd)")
    }
}
