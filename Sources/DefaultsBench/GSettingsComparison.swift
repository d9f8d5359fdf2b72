import Foundation
import LineSocket

/// GSettings programs on defaultsd's GIO module and on dconf's backend, measured in the same run
/// by one program (bench/gsettings-probe.c) that only the backend it is given tells apart.
///
/// - a `g_settings_set` in one process until `changed` in another GSettings process;
/// - `g_settings_get` of a loaded key;
/// - the start-up a GSettings program pays: open a schema, read its 20 keys, exit (hyperfine);
/// - the resident memory the backend adds to that program, against GLib's memory backend.
enum GSettingsComparison {
    struct Setup {
        var probe: String
        var modules: String
        var schemas: String
    }

    /// The probe, the module and the compiled bench schema `make bench` leaves beside this
    /// program; nil when one is missing.
    static func setup(here: URL) -> Setup? {
        let setup = Setup(
            probe: here.appendingPathComponent("gsettings-probe").path,
            modules: here.deletingLastPathComponent().appendingPathComponent("gio-modules").path,
            schemas: here.appendingPathComponent("gsettings-schemas").path)
        let files = [setup.probe, setup.modules + "/libdefaultsdsettings.so", setup.schemas + "/gschemas.compiled"]
        return files.allSatisfy(FileManager.default.fileExists(atPath:)) ? setup : nil
    }

    static func measure(
        _ setup: Setup, dconf: DconfPeer, socket: String, cliRuns: Int, directory: String, events: Int
    ) throws -> [(String, String, String, String, String)] {
        var base = dconf.environment
        base["DEFAULTSD_SOCKET"] = socket
        base["GIO_EXTRA_MODULES"] = setup.modules
        base["GSETTINGS_SCHEMA_DIR"] = setup.schemas
        func environment(_ backend: String) -> [String: String] { base.merging(["GSETTINGS_BACKEND": backend]) { $1 } }
        func probe(_ backend: String, _ arguments: [String]) throws -> String {
            try Server.run(setup.probe, arguments, environment: environment(backend))
        }
        for (backend, type) in [("defaultsd", "DefaultsdSettingsBackend"), ("dconf", "DConfSettingsBackend")] {
            let found = try probe(backend, ["backend"]).trimmingCharacters(in: .whitespacesAndNewlines)
            guard found == type else { throw LineSocket.Failure(description: "GSETTINGS_BACKEND=\(backend) ran \(found), not \(type)") }
        }
        func seconds(_ text: String) -> [Double] { text.split(separator: "\n").compactMap { Double($0).map { $0 / 1e9 } } }
        func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2f", a / b) }
        var rows: [(String, String, String, String, String)] = []

        let ours = seconds(try probe("defaultsd", ["set-to-changed", "\(events)"]))
        let theirs = seconds(try probe("dconf", ["set-to-changed", "\(events)"]))
        for p in [0.5, 0.99] {
            let a = Report.percentile(ours, p), b = Report.percentile(theirs, p)
            rows.append(("GSettings `set` → `changed` in another GSettings process p\(Int(p * 100))",
                         Report.micro(a), Report.micro(b), ratio(a, b), p == 0.5 ? "< 1 (goal ≤ 0.1)" : ""))
        }

        let getOurs = (0..<3).compactMap { _ in Double((try? probe("defaultsd", ["get", "1000000"]))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") }
        let getTheirs = (0..<3).compactMap { _ in Double((try? probe("dconf", ["get", "1000000"]))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") }
        if let a = getOurs.sorted().dropFirst(getOurs.count / 2).first, let b = getTheirs.sorted().dropFirst(getTheirs.count / 2).first {
            rows.append(("`g_settings_get` of a loaded key (median of 3 × 10⁶)", String(format: "%.0f ns", a), String(format: "%.0f ns", b), ratio(a, b), "≤ 1.5"))
        }

        let starts = try Hyperfine.measure(
            ["env GSETTINGS_BACKEND=defaultsd \(setup.probe) start", "env GSETTINGS_BACKEND=dconf \(setup.probe) start",
             "env GSETTINGS_BACKEND=memory \(setup.probe) start"],
            environment: base, runs: cliRuns, directory: directory)
        if starts.count == 3 {
            rows.append(("GSettings program start-up: open the schema, read 20 keys, exit (mean)",
                         Report.milli(starts[0].mean), Report.milli(starts[1].mean), ratio(starts[0].mean, starts[1].mean),
                         String(format: "within 2 ms of dconf: %+.2f ms", (starts[0].mean - starts[1].mean) * 1000)))
            rows.append(("the same on GLib's memory backend, for scale (mean)", Report.milli(starts[2].mean), "", "", ""))
        }

        func kibibytes(_ backend: String) throws -> Double { Double(try probe(backend, ["memory"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? .nan }
        let baseline = try kibibytes("memory")
        let ourMemory = try kibibytes("defaultsd") - baseline
        let theirMemory = try kibibytes("dconf") - baseline
        rows.append(("resident memory the backend adds to that program (VmRSS over the memory backend's)",
                     String(format: "%.0f KiB", ourMemory), String(format: "%.0f KiB", theirMemory), ratio(ourMemory, theirMemory), ""))
        return rows
    }
}
