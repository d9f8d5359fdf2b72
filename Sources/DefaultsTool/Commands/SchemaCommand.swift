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
        guard let tool = HelperProgram.schemaTool.path() else {
            throw ToolError.failure("defaultsd-schema is not installed (make install; or make gsettings-backend, with DEFAULTSD_SCHEMA_TOOL naming it)")
        }
        let words = [tool, "show", domain.domain.rawValue] + arguments[index...]
        var argv = words.map { strdup($0) }
        argv.append(nil)
        execv(tool, argv)
        throw ToolError.failure("cannot run \(tool): \(String(cString: strerror(errno)))")
    }
}
