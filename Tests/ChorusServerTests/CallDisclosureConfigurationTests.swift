import ChorusCore
import Foundation
import Testing

@testable import ChorusServer

/// `CHORUS_CALL_DISCLOSURE` and its per-language keys (issue 17).
@Suite("Call disclosure configuration")
struct CallDisclosureConfigurationTests {
    @Test("the built-in templates by default; one template for every language, then per-language ones over it")
    func templates() throws {
        let defaults = try ChorusConfiguration.load(from: [:])
        #expect(defaults.callDisclosure == CallDisclosure())
        let custom = try ChorusConfiguration.load(from: [
            "CHORUS_CALL_DISCLOSURE": "AI call for {caller}. Say stop or press 9.", "CHORUS_CALL_DISCLOSURE_DE": "KI-Anruf für {caller}.",
        ])
        let disclosure = try #require(custom.callDisclosure)
        #expect(disclosure.text(language: .english, callerName: nil) == "AI call for a user. Say stop or press 9.")
        #expect(disclosure.text(language: .french, callerName: "Léa") == "AI call for Léa. Say stop or press 9.")
        #expect(disclosure.text(language: .german, callerName: nil) == "KI-Anruf für einem Nutzer.")
        #expect(try ChorusConfiguration.load(from: ["CHORUS_CALL_DISCLOSURE": "off"]).callDisclosure == nil)
    }

    @Test("invalid templates refuse startup, naming the key; off is refused in production")
    func refusals() {
        #expect(ChorusConfiguration.problems(loading: ["CHORUS_CALL_DISCLOSURE": "AI call for {name}."]).contains {
            $0.hasPrefix("CHORUS_CALL_DISCLOSURE may contain no braces")
        })
        #expect(ChorusConfiguration.problems(loading: ["CHORUS_CALL_DISCLOSURE_IT": String(repeating: "a", count: 301)]).contains {
            $0.hasPrefix("CHORUS_CALL_DISCLOSURE_IT is longer than 300")
        })
        #expect(ChorusConfiguration.problems(loading: ["CHORUS_ENVIRONMENT": "production", "CHORUS_CALL_DISCLOSURE": "off"]).contains {
            $0.contains("CHORUS_CALL_DISCLOSURE=off is refused in production")
        })
        #expect(ChorusConfiguration.problems(loading: ["CHORUS_CALL_DISCLOSURE": "off"]).isEmpty)
    }
}
