import ChorusFuzz
import Foundation

#if CHORUS_FUZZ
// Built by scripts/fuzz with `-sanitize=fuzzer`: libFuzzer supplies `main` and calls this for every input of the
// target named by CHORUS_FUZZ_TARGET.
private let target: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["CHORUS_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        FileHandle.standardError.write(Data("CHORUS_FUZZ_TARGET must name one of: \(names)\n".utf8))
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    target.run(bytes)
    return 0
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
