import DaemonTestSupport
import Foundation
import LineSocket
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
    /// The printed address: `http://127.0.0.1:<port>/?token=<token>`.
    let address: String
    let port: Int
    let token: String
    let addressFile: String
    private let output = Pipe()

    init(daemon: DaemonProcess, socketPath: String? = nil, environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["--port", "0", "--socket", socketPath ?? daemon.socketPath]
        process.environment = daemon.clientEnvironment.merging(environment) { $1 }
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        addressFile = daemon.home + "/run/defaultsd/settings-url"
        try process.run()
        var line = ""
        let deadline = Date(timeIntervalSinceNow: 20)
        while !line.hasSuffix("\n") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty, Date() < deadline else { throw LineSocket.Failure(description: "defaultsd-settings printed no address") }
            line += String(decoding: chunk, as: UTF8.self)
        }
        address = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let parts = URLComponents(string: address), let port = parts.port,
            let token = parts.queryItems?.first(where: { $0.name == "token" })?.value
        else { throw LineSocket.Failure(description: "not an address: \(address)") }
        self.port = port
        self.token = token
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

    /// A page address with the token, as an app hands it to `xdg-open`.
    func address(_ path: String) -> String { origin + path + (path.contains("?") ? "&" : "?") + "token=\(token)" }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
    }

    deinit { stop() }
}
