import DefaultsCore
import FoundationEssentials
import Glibc

/// `schema <domain> [<key>]`: the installed GSettings schema of a domain that GSettings programs
/// keep in defaultsd, as `gsettings describe` and `gsettings range` show it: each key's type,
/// summary, description, default and range or choices. GIO reads schemas, and the Swift
/// programs link no GLib, so `defaultsd-schema show` (c/tools/schema.c) answers in this
/// process's place.
extension Command {
    func schema(_ arguments: [String]) throws {
        var index = 0
        let domain = try domainArgument(arguments, at: &index)
        guard arguments.count - index <= 1 else { throw ToolError.usage }
        guard let tool = SchemaTool.path else {
            throw ToolError.failure("defaultsd-schema is not installed (make install; or make gsettings-backend, with DEFAULTSD_SCHEMA_TOOL naming it)")
        }
        let words = [tool, "show", domain.domain.rawValue] + arguments[index...]
        var argv = words.map { strdup($0) }
        argv.append(nil)
        execv(tool, argv)
        throw ToolError.failure("cannot run \(tool): \(String(cString: strerror(errno)))")
    }
}

/// `defaultsd-schema`: `$DEFAULTSD_SCHEMA_TOOL`, else beside this program, else on the PATH.
enum SchemaTool {
    static var path: String? {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["DEFAULTSD_SCHEMA_TOOL"], !path.isEmpty { return path }
        var candidates: [String] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(SystemText.parentDirectory(of: executable) + "/defaultsd-schema")
        }
        candidates += (environment["PATH"] ?? "/usr/local/bin:/usr/bin").split(separator: ":").map { $0 + "/defaultsd-schema" }
        return candidates.first { access($0, X_OK) == 0 }
    }
}
