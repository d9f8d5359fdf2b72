import Foundation
import LineSocket

/// dconf, the Linux peer, measured in the same run: dconf-service on a private D-Bus session bus
/// (`dbus-run-session`) with a throw-away HOME, driven by `dconf-probe` (bench/dconf-probe.c,
/// built by `make bench` against libdconf) and by the `dconf` command.
///
/// Owned by the benchmark's main thread. Every process it starts it stops by PID in `stop()`:
/// dconf-service, the session's placeholder child (whose exit makes `dbus-run-session` stop its
/// bus daemon), then the bus daemon itself if it is still there.
final class DconfPeer {
    let probe: String
    let environment: [String: String]
    private let session: Process
    private let placeholderPID: pid_t
    let servicePID: pid_t
    let busPID: pid_t

    /// Starts a session bus in `directory` (HOME, XDG_CONFIG_HOME and XDG_RUNTIME_DIR inside it)
    /// and dconf-service on it, by writing one key.
    init(probe: String, directory: String) throws {
        self.probe = probe
        let home = directory + "/home", runtime = directory + "/run"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home
        environment["XDG_CONFIG_HOME"] = home + "/.config"
        environment["XDG_RUNTIME_DIR"] = runtime
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil

        let addressFile = directory + "/bus-address", pidFile = directory + "/placeholder-pid"
        session = Process()
        session.executableURL = URL(fileURLWithPath: try Server.required("dbus-run-session"))
        session.arguments = ["--", "/bin/sh", "-c", #"echo $$ > "$1"; echo "$DBUS_SESSION_BUS_ADDRESS" > "$2.new"; mv "$2.new" "$2"; exec sleep 2147483647"#,
                             "placeholder", pidFile, addressFile]
        session.environment = environment
        session.standardError = FileHandle.nullDevice
        try session.run()
        let deadline = LineSocket.now() + 10
        while !FileManager.default.fileExists(atPath: addressFile) {
            guard LineSocket.now() < deadline, session.isRunning else { throw LineSocket.Failure(description: "dbus-run-session did not start") }
            usleep(10_000)
        }
        let address = try String(contentsOfFile: addressFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        placeholderPID = pid_t(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        self.environment = environment

        let pids = try Server.run(probe, ["service-pid"], environment: environment).split(separator: "\n").compactMap { pid_t($0) }
        guard pids.count == 2, pids[0] > 0 else { throw LineSocket.Failure(description: "dconf-service did not start on the session bus") }
        (servicePID, busPID) = (pids[0], pids[1])
    }

    /// Runs `dconf-probe` and returns what it printed.
    func probe(_ arguments: [String]) throws -> String { try Server.run(probe, arguments, environment: environment) }

    /// `write_sync` round trips, seconds each.
    func writeRoundTrips(_ count: Int) throws -> [Double] {
        try probe(["write-sync", "/bench/sync/k", "\(count)"]).split(separator: "\n").compactMap { Double($0).map { $0 / 1e9 } }
    }

    /// `write_sync` calls per second by `writers` processes, each on its own path, for `seconds`.
    func writeThroughput(writers: Int, seconds: Double) throws -> Double {
        let start = DconfPeer.monotonicNanoseconds() + 500_000_000  // every writer connected by then
        let end = start + Int64(seconds * 1e9)
        let processes = try (0..<writers).map { writer -> (Process, Pipe) in
            let process = Process(), output = Pipe()
            process.executableURL = URL(fileURLWithPath: probe)
            process.arguments = ["write-for", "/bench/writer\(writer)/k", "\(start)", "\(end)"]
            process.environment = environment
            process.standardOutput = output
            try process.run()
            return (process, output)
        }
        var total = 0
        for (process, output) in processes {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            guard process.terminationStatus == 0, let count = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw LineSocket.Failure(description: "a dconf writer failed")
            }
            total += count
        }
        return Double(total) / seconds
    }

    /// From just before a write until the last of `watchers` watcher processes has its change signal, seconds each.
    func eventLatencies(watchers: Int, count: Int) throws -> [Double] {
        try probe(["events", "/bench/events\(watchers)/", "\(watchers)", "\(count)"]).split(separator: "\n")
            .compactMap { Double($0).map { $0 / 1e9 } }
    }

    func stop() {
        for pid in [servicePID, placeholderPID] where pid > 0 { kill(pid, SIGTERM) }
        session.waitUntilExit()
        // dbus-run-session stops its bus daemon when its child exits; make sure of it.
        if busPID > 0, kill(busPID, 0) == 0 { kill(busPID, SIGTERM) }
    }

    static func monotonicNanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
