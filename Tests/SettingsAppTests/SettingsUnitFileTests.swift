import DaemonTestSupport
import Foundation
import LocalServices
import TestThreads
import Testing

/// The user unit `make install` installs for the Settings app, checked by systemd itself.
@Suite(.ownThreads) struct SettingsUnitFileTests {
    @Test func theUserUnitVerifiesCleanlyBesideTheDaemonsUnits() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("settings-unit-\(UUID().uuidString.prefix(8))").path
        let runtime = directory + "/runtime"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let binDirectory = URL(fileURLWithPath: SettingsAppProcess.binary).deletingLastPathComponent().path
        var units: [String] = []
        for name in ["defaultsd.socket", "defaultsd.service", "defaultsd-settings.service"] {
            let template = try String(contentsOf: SharedData.repository.appendingPathComponent("systemd/user/\(name)"), encoding: .utf8)
            try template.replacingOccurrences(of: "@bindir@", with: binDirectory).write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
            units.append(directory + "/" + name)
        }
        let unit = try String(contentsOfFile: units[2], encoding: .utf8)
        #expect(unit.contains("ExecStart=\(binDirectory)/defaultsd-settings\n"))
        #expect(unit.contains("After=defaultsd.socket\n"))
        let run = try FinishedRun.run(
            "/usr/bin/systemd-analyze", ["--user", "verify"] + units,
            environment: TestEnvironment.isolated(home: directory + "/home").merging(["XDG_RUNTIME_DIR": runtime]) { $1 },
            in: directory)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.isEmpty, "systemd-analyze warned:\n\(run.output)")
    }
}
