import Foundation
import LocalServices

/// The sandbox a unit of `systemd/` declares, read from the unit file and applied to a command by
/// `defaultsd-unit-sandbox`, for machines where no systemd manager runs (`systemd-run --user -p …`
/// needs one). Every `[Service]` line is either applied, or known not to be a sandbox property;
/// a line this type does not know fails the test, so a new property cannot go untested.
///
/// ```swift
/// let sandbox = try UnitSandbox(unit: "user")
/// let daemon = try DaemonProcess(commandPrefix: sandbox.commandPrefix)
/// ```
public struct UnitSandbox: Sendable {
    /// The arguments that run a command inside the sandbox: put them before it.
    public let commandPrefix: [String]

    public static let binary = URL(fileURLWithPath: DaemonProcess.binary).deletingLastPathComponent()
        .appendingPathComponent("defaultsd-unit-sandbox").path

    /// Properties of the service that shape how systemd starts and stops it, not what it may do.
    static let notSandbox: Set<String> = [
        "Type", "ExecStart", "ExecReload", "Restart", "RestartSec", "WatchdogSec", "TimeoutStopSec", "Environment",
    ]

    /// - Parameters:
    ///   - unit: `user` or `system`, the folder of `systemd/` whose `defaultsd.service` is read.
    ///   - overrides: properties that replace the unit's (as a drop-in would).
    public init(unit: String, overrides: [String: String] = [:]) throws {
        let text = try String(
            contentsOf: SharedData.repository.appendingPathComponent("systemd/\(unit)/defaultsd.service"), encoding: .utf8)
        var inService = false
        var properties: [(name: String, value: String)] = []
        for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if line.hasPrefix("[") { inService = line == "[Service]" }
            guard inService, !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
            let name = String(line[..<equals])
            properties.append((name, overrides[name] ?? String(line[line.index(after: equals)...])))
        }
        var options: [String] = []
        for (name, value) in properties where !UnitSandbox.notSandbox.contains(name) {
            switch (name, value) {
            case ("NoNewPrivileges", "yes"): continue  // the sandbox program always sets it
            case ("SystemCallArchitectures", "native"): continue  // every filter it loads is for the native architecture only
            case ("LockPersonality", "yes"): options.append("--lock-personality")
            case ("RestrictRealtime", "yes"): options.append("--restrict-realtime")
            case ("RestrictSUIDSGID", "yes"): options.append("--restrict-suid-sgid")
            case ("RestrictNamespaces", "yes"): options.append("--restrict-namespaces")
            case ("MemoryDenyWriteExecute", "yes"): options.append("--memory-deny-write-execute")
            case ("RestrictAddressFamilies", _): options += ["--families", value.split(separator: " ").joined(separator: ",")]
            case ("SystemCallFilter", _):
                options += ["--syscalls", try UnitSandbox.expand(value.split(separator: " ").map(String.init)).sorted().joined(separator: ",")]
            case ("SystemCallErrorNumber", _):
                guard let number = UnitSandbox.errorNumbers[value] else { throw UnitSandboxFailure("unknown error name \(value)") }
                options += ["--errno", String(number)]
            case ("UMask", _): options += ["--umask", value]
            default:
                throw UnitSandboxFailure("the unit's \(name)=\(value) is not applied by UnitSandbox; teach it, so the tests run under it")
            }
        }
        commandPrefix = [UnitSandbox.binary] + options + ["--"]
    }

    static let errorNumbers = ["EPERM": EPERM, "EACCES": EACCES, "ENOSYS": ENOSYS]

    /// The syscalls a `SystemCallFilter=` allow-list names, its `@groups` expanded as
    /// `systemd-analyze syscall-filter` lists them.
    static func expand(_ names: [String]) throws -> Set<String> {
        var result: Set<String> = []
        var pending = names
        var seenGroups: Set<String> = []
        while let name = pending.popLast() {
            guard name.hasPrefix("@") else {
                result.insert(name)
                continue
            }
            guard seenGroups.insert(name).inserted else { continue }
            let run = try FinishedRun.run("/usr/bin/systemd-analyze", ["syscall-filter", name], environment: ProcessInfo.processInfo.environment)
            guard run.status == 0 else { throw UnitSandboxFailure("systemd-analyze syscall-filter \(name): \(run.output)") }
            let members = run.output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") && $0 != name }
            pending += members
        }
        return result
    }
}

public struct UnitSandboxFailure: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
