import DaemonTestSupport
import Foundation
import LineSocket
import LocalServices
import WebDriver

/// The real `defaultsd-settings` binary on a free port, over a test's real daemon.
final class SettingsAppProcess: @unchecked Sendable {
    static let binary: String = {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("defaultsd-settings").path
        if FileManager.default.isExecutableFile(atPath: besideTests) { return besideTests }
        return SharedData.repository.appendingPathComponent(".build/debug/defaultsd-settings").path
    }()

    let process = Process()
    /// The line printed to standard output, a pipe here as under a systemd unit:
    /// `http://127.0.0.1:<port>/ (open it with: xdg-open <launch page>)`, without the token.
    let printed: String
    let port: Int
    /// The token the app started with, which this harness trades once for the session.
    let firstToken: String
    let addressFile: String
    /// What the app logs (its standard error), as it comes.
    let log = LogBuffer()
    private let output = Pipe()
    private let errors = Pipe()

    /// `commandPrefix` is what the app's command line is run through (``FileState/unprivilegedCommandPrefix``,
    /// as ``DaemonProcess`` takes it); empty to run it directly.
    init(daemon: DaemonProcess, socketPath: String? = nil, environment: [String: String] = [:], commandPrefix: [String] = []) throws {
        let command = commandPrefix + [Self.binary, "--port", "0", "--socket", socketPath ?? daemon.socketPath]
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.environment = daemon.clientEnvironment.merging(environment) { $1 }
        process.standardOutput = output
        process.standardError = errors
        log.capture(errors.fileHandleForReading)
        addressFile = daemon.home + "/run/defaultsd/settings-url"
        try process.run()
        var line = ""
        let deadline = Date(timeIntervalSinceNow: 20)
        while !line.hasSuffix("\n") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty, Date() < deadline else { throw LineSocket.Failure(description: "defaultsd-settings printed no address") }
            line += String(decoding: chunk, as: UTF8.self)
        }
        printed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let parts = URLComponents(string: String(printed.prefix(while: { $0 != " " }))), let port = parts.port
        else { throw LineSocket.Failure(description: "not an address: \(printed)") }
        self.port = port
        // The token, as a program reads it: from the address file, written before the line is printed.
        guard let token = Self.readToken(from: addressFile) else {
            throw LineSocket.Failure(description: "no token in \(addressFile)")
        }
        firstToken = token
        // Trade the token for the session once, as a browser does: the prefix and the cookie.
        let entry = try LoopbackHTTP.send(port: port, "GET", "/?token=\(token)", headers: [:])
        guard let location = entry.header("Location"), location.hasSuffix("/"),
            let setCookie = entry.header("Set-Cookie"), let pair = setCookie.split(separator: ";").first
        else { throw LineSocket.Failure(description: "the token was not traded for a session: \(entry.status)") }
        prefix = String(location.dropLast())
        cookie = String(pair)
    }

    /// The secret path every address of this run of the app lies under.
    let prefix: String
    /// `defaultsd-settings=<session>`, sent only under the prefix.
    let cookie: String

    var origin: String { "http://127.0.0.1:\(port)" }

    /// The launch page, beside the address file.
    var launchFile: String { URL(fileURLWithPath: addressFile).deletingLastPathComponent().appendingPathComponent("settings.html").path }

    /// The token not yet traded, as the address file holds it now: each trade writes the next
    /// one there before it is answered. Empty when the file is gone.
    var token: String { Self.readToken(from: addressFile) ?? "" }

    static func readToken(from file: String) -> String? {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8),
            let parts = URLComponents(string: text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return nil }
        return parts.queryItems?.first(where: { $0.name == "token" })?.value
    }

    /// A page address with the token not yet traded, as a person pastes it from a terminal: each
    /// one opens the app once.
    func address(_ path: String) -> String { origin + path + (path.contains("?") ? "&" : "?") + "token=\(token)" }

    /// The app's anonymous resident memory (its heap and stacks, `RssAnon`), in KiB, from /proc,
    /// as ``DaemonProcess/anonymousResidentKiB()`` reads the daemon's.
    func anonymousResidentKiB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
    }

    deinit { stop() }
}
