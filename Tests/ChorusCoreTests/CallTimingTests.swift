import ChorusCore
import Foundation
import Testing

@Suite struct CallTimingTests {
    @Test func aCallMustBeOverAfterRingingItsLimitAndTheGrace() {
        let placed = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(CallTiming.mustBeOver(placedAt: placed, durationLimit: 300) == placed.addingTimeInterval(30 + 300 + 120))
    }

    @Test func anyLimitGivesADateWithoutTrapping() {
        let placed = Date(timeIntervalSince1970: 0)
        #expect(CallTiming.mustBeOver(placedAt: placed, durationLimit: .max) > placed)
        #expect(CallTiming.mustBeOver(placedAt: placed, durationLimit: 0) == placed.addingTimeInterval(150))
    }
}
