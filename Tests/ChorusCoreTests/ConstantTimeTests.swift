import ChorusCore
import Testing

@Suite("Constant-time comparison")
struct ConstantTimeTests {
    @Test("equal only for the same bytes, whatever the lengths")
    func equals() {
        #expect(ConstantTime.equals("a1b2c3", "a1b2c3") && ConstantTime.equals("", ""))
        #expect(!ConstantTime.equals("a1b2c3", "a1b2c4") && !ConstantTime.equals("a1b2c3", "x1b2c3"))
        #expect(!ConstantTime.equals("a1b2c3", "a1b2c") && !ConstantTime.equals("a1b2c", "a1b2c3") && !ConstantTime.equals("", "a"))
        #expect(!ConstantTime.equals("é", "e") && ConstantTime.equals("é", "é"))
    }
}
