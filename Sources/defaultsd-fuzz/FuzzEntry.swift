import FuzzHarnesses
import Glibc

// Built two ways. `make fuzz` builds it with `-sanitize=fuzzer,address -DFUZZING`: its entry
// point then hands the command line to libFuzzer's driver, which calls `fuzzOneInput` with each
// input, for the harness named by `DEFAULTSD_FUZZ_HARNESS`. (The package manager names an
// executable's entry point `<module>_main` and links `main` to it, so libFuzzer's own `main`
// cannot be used.) An ordinary build makes a replayer instead: it runs each file named on its
// command line through that harness once, to reproduce a finding without libFuzzer.

#if FUZZING
private let harness: FuzzHarness = {
    let name = getenv("DEFAULTSD_FUZZ_HARNESS").map { String(cString: $0) } ?? ""
    guard let harness = FuzzHarness(rawValue: name) else {
        fatalError("DEFAULTSD_FUZZ_HARNESS must be one of: \(FuzzHarness.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    return harness
}()

@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    harness.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

@_cdecl("defaultsd_fuzz_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    var count = argc
    var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return runFuzzerDriver(&count, &arguments, fuzzOneInput)
}
#else
@main
enum FuzzReplay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let harness = FuzzHarness(rawValue: name), arguments.count > 1 else {
            print("usage: defaultsd-fuzz HARNESS FILE... (harnesses: \(FuzzHarness.allCases.map(\.rawValue).joined(separator: ", ")))")
            exit(64)
        }
        for path in arguments.dropFirst() {
            guard let file = fopen(path, "rb") else { print("cannot open \(path)"); exit(66) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while case let count = fread(&chunk, 1, chunk.count, file), count > 0 { bytes += chunk[..<count] }
            fclose(file)
            harness.run(bytes)
            print("\(path): ok")
        }
    }
}
#endif
