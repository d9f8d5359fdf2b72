import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import LocalServices
import TestThreads
import Testing

/// GLib's own `gsettings` and `gsettings monitor`, unmodified, on the real daemon through the GIO
/// module that `make gsettings-backend` builds, with the desktop's own schema
/// (`org.gnome.desktop.interface`, from gsettings-desktop-schemas). Every test also proves the
/// module was used: the value is in the daemon's domain file, and GLib printed no fallback
/// warning.
@Suite(.enabled(if: GIOModule.isAvailable, "needs gsettings, the desktop schemas and `make gsettings-backend`"), .ownThreads)
struct GSettingsCommandTests {
    static let modules = GIOModule.folder
    static let schema = "org.gnome.desktop.interface"

    struct Run {
        var out: String
        var err: String
        var status: Int32
    }

    static func environment(_ daemon: DaemonProcess) -> [String: String] {
        GIOModule.environment(daemon.clientEnvironment)
    }

    @discardableResult
    static func gsettings(_ daemon: DaemonProcess, _ arguments: String...) throws -> GIOModule.Run {
        let run = try GIOModule.gsettings(arguments, environment: daemon.clientEnvironment)
        #expect(!run.err.contains("GSettings backend"), "GLib fell back to another backend: \(run.err)")
        return run
    }

    /// `gsettings monitor` as a long-lived GSettings program; its lines arrive in `lines`.
    final class Monitor {
        let process = Process()
        let output = LogBuffer()

        init(_ daemon: DaemonProcess) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/gsettings")
            process.arguments = ["monitor", GSettingsCommandTests.schema]
            process.environment = GSettingsCommandTests.environment(daemon)
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            output.capture(out.fileHandleForReading)
            try process.run()
            // Subscribed once the daemon counts a subscriber: the monitor's GSettings watches its path.
            #expect(GSettingsCommandTests.waitForSubscribers(daemon, 1))
        }

        deinit {
            // SIGKILL: a child of the test runner starts with SIGTERM blocked, and gsettings
            // monitor does not unblock it.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    static func waitForSubscribers(_ daemon: DaemonProcess, _ count: Int) -> Bool {
        let deadline = Date(timeIntervalSinceNow: 10)
        while Date() < deadline {
            if let client = try? daemon.connect(), let answer = try? JSONParser.parse(try client.request(#"{"op":"stats"}"#)),
                case .integer(let subscribers)? = answer["subscribers"], subscribers >= count
            {
                return true
            }
            usleep(10_000)
        }
        return false
    }

    @Test func gsettingsSetIsADomainValueOfThePlistTypeAPersonExpects() throws {
        let daemon = try DaemonProcess()
        for (key, value) in [("gtk-theme", "'Adwaita-dark'"), ("cursor-size", "32"), ("text-scaling-factor", "1.25"),
                             ("enable-animations", "false")] {
            #expect(try Self.gsettings(daemon, "set", Self.schema, key, value).status == 0)
        }
        #expect(try Self.gsettings(daemon, "get", Self.schema, "cursor-size").out == "32\n")
        let stored = try daemon.storedValues(Self.schema)
        #expect(stored == ["gtk-theme": .string("Adwaita-dark"), "cursor-size": .integer(32), "text-scaling-factor": .real(1.25),
                           "enable-animations": .bool(false)])
        let read = try DefaultsCommandTests.run(daemon, ["read", Self.schema, "text-scaling-factor"])
        #expect(read.out == "1.25\n")
        let type = try DefaultsCommandTests.run(daemon, ["read-type", Self.schema, "cursor-size"])
        #expect(type.out == "Type is integer\n")
        #expect(try Self.gsettings(daemon, "reset", Self.schema, "cursor-size").status == 0)
        #expect(try Self.gsettings(daemon, "get", Self.schema, "cursor-size").out == "24\n", "the schema's default again")
        #expect(try daemon.storedValues(Self.schema)?["cursor-size"] == nil)
    }

    @Test func defaultsWriteAndAHandEditReachGsettingsMonitorAndGet() throws {
        let daemon = try DaemonProcess()
        let monitor = try Monitor(daemon)
        #expect(try DefaultsCommandTests.run(daemon, ["write", Self.schema, "gtk-theme", "HighContrast"]).status == 0)
        #expect(monitor.output.wait(for: "gtk-theme: 'HighContrast'", timeout: 10))
        #expect(try Self.gsettings(daemon, "get", Self.schema, "gtk-theme").out == "'HighContrast'\n")

        let path = daemon.storagePath + "/" + Self.schema + ".plist"
        try PropertyListFile.encode(["gtk-theme": "Adwaita", "cursor-size": 40], format: .xml).write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)
        #expect(monitor.output.wait(for: "cursor-size: 40", timeout: 10))
        #expect(monitor.output.wait(for: "gtk-theme: 'Adwaita'", timeout: 10))
        #expect(try Self.gsettings(daemon, "get", Self.schema, "cursor-size").out == "40\n")
    }

    @Test(.enabled(if: getuid() == 0, "managed preferences are trusted only when root owns them"))
    func aForcedKeyIsNotWritable() throws {
        let managed = FileManager.default.temporaryDirectory.appendingPathComponent("managed-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: managed, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: managed) }
        try PropertyListFile.encode(["cursor-size": 48], format: .xml).write(to: URL(fileURLWithPath: managed + "/" + Self.schema + ".plist"))
        let daemon = try DaemonProcess(arguments: ["--managed-dir", managed])
        #expect(try Self.gsettings(daemon, "writable", Self.schema, "cursor-size").out == "false\n")
        #expect(try Self.gsettings(daemon, "writable", Self.schema, "gtk-theme").out == "true\n")
        let refused = try Self.gsettings(daemon, "set", Self.schema, "cursor-size", "24")
        #expect(refused.status != 0 && refused.err.contains("not writable"))
        #expect(try Self.gsettings(daemon, "get", Self.schema, "cursor-size").out == "48\n")
    }

    @Test func aDaemonRestartLosesNothingAndTheMonitorHearsChangesAfterIt() throws {
        let daemon = try DaemonProcess()
        let monitor = try Monitor(daemon)
        #expect(try Self.gsettings(daemon, "set", Self.schema, "gtk-theme", "'Before'").status == 0)
        try daemon.restart()
        #expect(try Self.gsettings(daemon, "get", Self.schema, "gtk-theme").out == "'Before'\n")
        // The monitor's GSettings connects again by itself, and hears the next change.
        #expect(Self.waitForSubscribers(daemon, 1))
        #expect(try DefaultsCommandTests.run(daemon, ["write", Self.schema, "gtk-theme", "After"]).status == 0)
        #expect(monitor.output.wait(for: "gtk-theme: 'After'", timeout: 10))
        #expect(try daemon.connect().request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(try daemon.storedValues(Self.schema)?["gtk-theme"] == .string("After"))
    }

    /// `defaults schema`, through `defaultsd-schema` as `make gsettings-backend` builds it.
    @Test func defaultsSchemaShowsAKeysTypeDefaultAndChoices() throws {
        let daemon = try DaemonProcess()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DefaultsCommandTests.binary)
        process.arguments = ["schema", Self.schema, "color-scheme"]
        process.environment = daemon.clientEnvironment.merging(
            ["DEFAULTSD_SCHEMA_TOOL": GIOModule.folder + "/../c/defaultsd-schema"]) { $1 }
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(text.hasPrefix("color-scheme (s): Color scheme\n"))
        #expect(text.hasSuffix("  default: 'default'\n  choices: default, prefer-dark, prefer-light\n"))
    }

    /// `defaults watch` prints a change a GSettings program made, with its writer.
    @Test func defaultsWatchPrintsAGSettingsChange() throws {
        let daemon = try DaemonProcess()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DefaultsCommandTests.binary)
        process.arguments = ["watch", Self.schema]
        process.environment = daemon.clientEnvironment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let lines = LineReader(out.fileHandleForReading)
        #expect(LineReader(err.fileHandleForReading).next(timeout: 10) == "watching \(Self.schema); Ctrl-C to stop")
        #expect(try Self.gsettings(daemon, "set", Self.schema, "cursor-size", "30").status == 0)
        let line = try #require(lines.next(timeout: 10))
        #expect(line.range(of: #" org\.gnome\.desktop\.interface "cursor-size" = 30  \(pid \d+, uid \d+, gsettings\)$"#,
                           options: .regularExpression) != nil, "\(line)")
    }
}
