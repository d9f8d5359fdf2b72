// defaultsd-client-bench: the cost of a cached read through DefaultsClient, next to Foundation's
// UserDefaults on the same machine, in the same run.
//
//   swift build -c release --product defaultsd --product defaultsd-client-bench
//   .build/release/defaultsd-client-bench [--iterations N] [--rounds R] [--daemon PATH]
//
// It starts its own defaultsd (the binary beside it, or --daemon) on a temporary socket and
// directory, loads a domain of 100 keys, and times reads in a tight loop: R rounds of N reads each,
// reporting the median round in nanoseconds per read. Foundation's UserDefaults stores its files
// under a temporary XDG_CONFIG_HOME.
import DefaultsClient
import Foundation

// MARK: Options

var iterations = 5_000_000
var rounds = 7
var daemonPath = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("defaultsd").path
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--iterations": iterations = Int(arguments.next() ?? "") ?? iterations
    case "--rounds": rounds = Int(arguments.next() ?? "") ?? rounds
    case "--daemon": daemonPath = arguments.next() ?? daemonPath
    default:
        FileHandle.standardError.write(Data("usage: defaultsd-client-bench [--iterations N] [--rounds R] [--daemon PATH]\n".utf8))
        exit(64)
    }
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("defaultsd-client-bench-\(getpid())").path
try FileManager.default.createDirectory(atPath: directory + "/config", withIntermediateDirectories: true)
setenv("XDG_CONFIG_HOME", directory + "/config", 1)  // before Foundation's UserDefaults is touched
defer { try? FileManager.default.removeItem(atPath: directory) }

// MARK: The daemon

let socketPath = directory + "/socket"
let daemon = Process()
daemon.executableURL = URL(fileURLWithPath: daemonPath)
daemon.arguments = ["--socket", socketPath, "--storage-dir", directory + "/storage", "--log-level", "warning"]
daemon.standardOutput = FileHandle.nullDevice
try daemon.run()
defer {
    daemon.terminate()
    daemon.waitUntilExit()
}
for _ in 0..<500 where !FileManager.default.fileExists(atPath: socketPath) { usleep(10_000) }

// MARK: Data: 100 keys of mixed types in the app domain

let client = SharedDefaults(configuration: DefaultsConfiguration(socketPath: socketPath, appDomain: "com.example.bench"))
let foundation = UserDefaults.standard
for index in 0..<100 {
    let value: Any = switch index % 4 {
    case 0: index
    case 1: Double(index) + 0.5
    case 2: "value \(index)"
    default: index % 2 == 0
    }
    client.set(value, forKey: "key\(index)")
    foundation.set(value, forKey: "key\(index)")
}
client.set(5, forKey: "warpFactor")
foundation.set(5, forKey: "warpFactor")
guard client.synchronize(), client.integer(forKey: "warpFactor") == 5, foundation.integer(forKey: "warpFactor") == 5 else {
    FileHandle.standardError.write(Data("the benchmark data could not be stored\n".utf8))
    exit(1)
}
let bridged: UserDefaults = SharedUserDefaults(client)

/// A Codable value, stored as its fields.
struct BenchCrew: Codable, Sendable {
    var captain: String
    var officers: [String]
}

extension Keys {
    static let benchWarp = Key<Int>("warpFactor", default: 0)
    static let benchCrew = Key<BenchCrew>("crew", default: BenchCrew(captain: "", officers: []))
}
client[.benchCrew] = BenchCrew(captain: "Picard", officers: ["Riker", "Data", "Worf"])
guard client.synchronize(), client[.benchWarp] == 5, client[.benchCrew].officers.count == 3 else {
    FileHandle.standardError.write(Data("the typed benchmark data could not be stored\n".utf8))
    exit(1)
}

// MARK: Timing

@inline(never)
func measure(_ name: String, rounds: Int, iterations: Int, _ read: () -> Int) -> (String, Double, Int) {
    var samples: [Double] = []
    var checksum = 0
    for _ in 0..<rounds {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<iterations { checksum &+= read() }
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(iterations))
    }
    precondition(checksum != 42, "keeps the reads alive")
    return (name, samples.sorted()[samples.count / 2], iterations)
}

let key = "warpFactor"
let missing = "noSuchKey"
let foundationIterations = max(iterations / 20, 1000)
var results: [(String, Double, Int)] = []
results.append(measure("`SharedDefaults.object(forKey:)`", rounds: rounds, iterations: iterations) { client.object(forKey: key) == nil ? 0 : 1 })
results.append(measure("`SharedDefaults.integer(forKey:)`", rounds: rounds, iterations: iterations) { client.integer(forKey: key) })
results.append(measure("`SharedDefaults.value(forKey:)` (`PlistValue`)", rounds: rounds, iterations: iterations) { client.value(forKey: key) == nil ? 0 : 1 })
results.append(measure("`SharedDefaults.object(forKey:)`, absent key", rounds: rounds, iterations: iterations) { client.object(forKey: missing) == nil ? 0 : 1 })
results.append(measure("typed key, `defaults[.warp]` (`Key<Int>`)", rounds: rounds, iterations: iterations) { client[.benchWarp] })
results.append(measure("typed key of a `Codable` struct (`Key<Crew>`: 2 fields, 3 officers), an unchanged value decoded once", rounds: rounds, iterations: max(iterations / 20, 1000)) { client[.benchCrew].officers.count })
results.append(measure("`SharedUserDefaults.object(forKey:)` through a `UserDefaults`", rounds: rounds, iterations: iterations) { bridged.object(forKey: key) == nil ? 0 : 1 })
results.append(measure("Foundation `UserDefaults.object(forKey:)`", rounds: rounds, iterations: foundationIterations) { foundation.object(forKey: key) == nil ? 0 : 1 })
results.append(measure("Foundation `UserDefaults.integer(forKey:)`", rounds: rounds, iterations: foundationIterations) { foundation.integer(forKey: key) })

var host = utsname()
uname(&host)
let machine = withUnsafeBytes(of: host.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
print("Cached reads of one key in a loaded domain of 101 keys; median of \(rounds) rounds; \(ProcessInfo.processInfo.activeProcessorCount) cores, \(machine).")
print("")
print("| read | ns per call | calls per round |")
print("|---|---:|---:|")
for (name, nanoseconds, count) in results {
    print("| \(name) | \(String(format: "%.1f", nanoseconds)) | \(count) |")
}
