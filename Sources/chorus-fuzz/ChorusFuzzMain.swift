import ChorusFuzz
import Foundation

#if CHORUS_FUZZ
import CChorusFuzzDriver

// Built by scripts/fuzz with `-sanitize=fuzzer`: SwiftPM links an executable with its entry point named after the
// module (`chorus_fuzz_main`), which hands over to libFuzzer's driver; libFuzzer calls `fuzzOneInput` for every input
// of the target named by CHORUS_FUZZ_TARGET.
private let target: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["CHORUS_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        FileHandle.standardError.write(Data("CHORUS_FUZZ_TARGET must name one of: \(names)\n".utf8))
        exit(2)
    }
    return target
}()

/// libFuzzer's callback, for every input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    target.run(bytes)
    return 0
}

@_cdecl("chorus_fuzz_main")
public func chorusFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in fuzzOneInput(data, size) }
}
#else
/// Without libFuzzer: `chorus-fuzz <target> <file or directory>...` runs the target once on each input (to replay a
/// crash libFuzzer found), and `chorus-fuzz --list` names the targets.
@main
struct ChorusFuzzReplay {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--list" {
            print(FuzzTarget.allCases.map(\.rawValue).joined(separator: "\n"))
            return
        }
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            FileHandle.standardError.write(Data("usage: chorus-fuzz <target> <file or directory>... (targets: \(names))\n".utf8))
            exit(2)
        }
        var count = 0
        for path in arguments.dropFirst() {
            for file in FuzzInputs.files(at: URL(fileURLWithPath: path)) {
                guard let data = FileManager.default.contents(atPath: file.path) else { continue }
                target.run([UInt8](data))
                count += 1
            }
        }
        print("\(target.rawValue): \(count) inputs, no crash")
    }
}
#endif
