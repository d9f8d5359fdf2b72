// Bridge Control, the app of the classic iOS Settings-bundle tutorial, on defaultsd.
//
//   BridgeControl [watch]          print the settings, then again whenever any process changes them
//   BridgeControl print            print them once
//   BridgeControl set KEY VALUE    store a value (true/false, an integer, a real, else a string) and
//                                  wait until it is durable
//   BridgeControl count N          add 1 to `launches` N times, each a compare-and-set (`update`),
//                                  so that several processes counting at once lose no step
//   BridgeControl beam NAME RANK   add an officer to the away team (a Codable value)
//   BridgeControl migrate          run the app's migrations (once per domain, whoever runs them)
//   BridgeControl observe          print the warp factor and the away team, then again whenever
//                                  Observation says either changed (another process, a hand edit)
//
// Command-line defaults work as on macOS: `BridgeControl print -warpFactor 9`.
// From another terminal: `defaults write com.example.BridgeControl warpFactor -float 7`, or
//   echo '{"op":"set","domain":"com.example.BridgeControl","key":"warpFactor","value":7.0}' | socat - UNIX-CONNECT:$SOCK
import DefaultsClient
import Foundation
import Observation

/// Writes a line at once (a pipe would otherwise buffer it).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

bridgeDefaults.register(defaults: ["warp": true, "favoriteAlien": "Vulcan"])
let settings = BridgeSettings()

func show(_ header: String) {
    say("--- \(header) ---")
    for line in settings.screen { say(line) }
    say("---")
}

/// `"true"` → bool, `"7"` → integer, `"7.5"` → real, anything else a string.
func parse(_ text: String) -> PlistValue {
    switch text {
    case "true", "YES": return .bool(true)
    case "false", "NO": return .bool(false)
    default:
        if let integer = Int64(text) { return .integer(integer) }
        if let real = Double(text), real.isFinite { return .real(real) }
        return .string(text)
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "set":
    guard arguments.count >= 3 else {
        FileHandle.standardError.write(Data("usage: BridgeControl set KEY VALUE\n".utf8))
        exit(64)
    }
    bridgeDefaults.setValue(parse(arguments[2]), forKey: arguments[1])
    exit(bridgeDefaults.synchronize() ? 0 : 1)

case "count":
    guard arguments.count >= 2, let times = Int(arguments[1]) else {
        FileHandle.standardError.write(Data("usage: BridgeControl count N\n".utf8))
        exit(64)
    }
    for _ in 0..<times { try await bridgeDefaults.update(.launches) { $0 + 1 } }
    say("launches: \(bridgeDefaults[.launches])")

case "beam":
    guard arguments.count >= 3 else {
        FileHandle.standardError.write(Data("usage: BridgeControl beam NAME RANK\n".utf8))
        exit(64)
    }
    try await bridgeDefaults.update(.awayTeam) { $0 + [Officer(name: arguments[1], rank: arguments[2])] }
    exit(bridgeDefaults.synchronize() ? 0 : 1)

case "migrate":
    // An older version kept the warp factor as `warpSpeed`, and the speed as a word.
    let ran = try await bridgeDefaults.migrate([
        .rename("warpSpeed", to: "warpFactor"),
        .convert("speed") { $0 == "fast" ? 9 : $0 },
    ])
    for id in ran { say("ran: \(id)") }

case "observe":
    let model = BridgeModel()
    let (changed, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    while true {
        withObservationTracking {
            say("warp factor \(model.warpFactor); away team: \(model.awayTeam.map(\.name).joined(separator: ", "))")
        } onChange: {
            signal.yield()
        }
        for await _ in changed { break }
    }

case "print":
    show("Bridge Control")

case nil, "watch":
    let changes = bridgeDefaults.changes()
    show("Bridge Control")
    for await change in changes where !change.keys.isDisjoint(with: BridgeSettings.keys) {
        show("changed: \(change.keys.sorted().joined(separator: ", ")) (\(change.origin))")
    }

default:
    FileHandle.standardError.write(Data("usage: BridgeControl [watch | print | set KEY VALUE | count N | beam NAME RANK | migrate | observe] [-key value ...]\n".utf8))
    exit(64)
}
