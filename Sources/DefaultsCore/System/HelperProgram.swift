import FoundationEssentials
import Glibc

/// A program of defaultsd's own that another runs: `defaultsd-schema`, which reads GSettings
/// schemas through GIO for `defaults schema` and the Settings app (the Swift programs link no
/// GLib). The one rule for finding it: the environment variable that names it, else beside the
/// running program (as `make install` puts them), else on the `PATH`.
///
/// ```swift
/// HelperProgram.schemaTool.path()   // "/usr/local/bin/defaultsd-schema"
/// ```
public struct HelperProgram: Sendable {
    public let name: String
    public let environmentVariable: String

    public static let schemaTool = HelperProgram(name: "defaultsd-schema", environmentVariable: "DEFAULTSD_SCHEMA_TOOL")

    /// Where it is; nil when it is nowhere.
    public func path(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let path = environment[environmentVariable], !path.isEmpty { return path }
        var candidates: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(SystemText.parentDirectory(of: executable) + "/" + name)
        }
        candidates += (environment["PATH"] ?? "/usr/local/bin:/usr/bin").split(separator: ":").map { $0 + "/" + name }
        return candidates.first { access($0, X_OK) == 0 }
    }
}
