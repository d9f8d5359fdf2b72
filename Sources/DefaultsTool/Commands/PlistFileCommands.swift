import DefaultsCore
import FoundationEssentials
import Glibc

/// The verbs on a property-list file named by its path in the domain's place, outside the
/// daemon's storage folder (`defaults write /tmp/settings volume -int 7`): the file is read and
/// written here, as macOS's `defaults` does, and never through the daemon, which serves domains.
/// What they print and the errors they give are the domain verbs' own, the path in the domain's
/// name.
extension Command {
    /// `read <path>`, `read <path> <key>`.
    func readFile(_ location: PlistPath, _ arguments: [String]) throws {
        guard arguments.count <= 1 else { throw ToolError.usage }
        let values = try PlistFile.read(location).values
        guard let key = arguments.first else {
            guard !values.isEmpty else { throw Command.missingDomain(location.argument) }
            return printDomain(values)
        }
        guard let value = values[key] else { throw Command.missingPair(location.argument, key) }
        printValue(value)
    }

    /// `read-type <path> <key>`.
    func readTypeInFile(_ location: PlistPath, _ arguments: [String]) throws {
        guard arguments.count == 1 else { throw ToolError.usage }
        let key = arguments[0]
        guard let value = try PlistFile.read(location).values[key] else { throw Command.missingPair(location.argument, key) }
        console.printRaw("Type is \(Command.readTypeName(value.plistType))\n")
    }

    /// `write <path> <key> <value...>` (every value form, `-expect` included) and
    /// `write <path> '<plist dictionary>'`, which replaces the file's values. A file that does not
    /// exist is created.
    func writeFile(_ location: PlistPath, _ arguments: [String]) throws {
        guard let key = arguments.first else { throw ToolError.usage }
        guard arguments.count > 1 else {
            guard let value = ValueArguments.parsePropertyList(key), case .dictionary(let values) = value else {
                throw ToolError.failure("\nRep argument is not a dictionary\nDefaults have not been changed.\n")
            }
            return try editFile(location) { _ in values }
        }
        let (request, expected) = try Command.writeArguments(Array(arguments.dropFirst()))
        try editFile(location) { file in
            let current = file.values[key]
            if case .some(let wanted) = expected, wanted != current {
                let conflict = DefaultsError.conflict(key: key, expected: wanted, found: current)
                throw ToolError.failure("Could not write domain \(location.argument); exiting (\(conflict.code.rawValue): \(conflict.message))")
            }
            var values = file.values
            values[key] = try Command.value(building: request, on: current, key: key)
            return values
        }
    }

    /// `rename <path> <old> <new>`.
    func renameInFile(_ location: PlistPath, _ arguments: [String]) throws {
        guard arguments.count == 2 else { throw ToolError.usage }
        let (old, new) = (arguments[0], arguments[1])
        try editFile(location) { file in
            guard let value = file.values[old] else {
                throw ToolError.failure("Key \(old) does not exist in domain \(location.argument); leaving defaults unchanged")
            }
            var values = file.values
            values[old] = nil
            values[new] = value
            return values
        }
    }

    /// `delete <path>` removes the file, as macOS does; `delete <path> <key>` removes one key.
    func deleteFromFile(_ location: PlistPath, _ arguments: [String]) throws {
        guard arguments.count <= 1 else { throw ToolError.usage }
        let notFound = ToolError.failure("\nDomain (\(location.argument)) not found.\nDefaults have not been changed.\n")
        guard let key = arguments.first else {
            for _ in 0..<Command.fileEditAttempts {
                let file = try PlistFile.read(location)
                guard file.exists else { throw notFound }
                if try file.remove() { return }
            }
            throw Command.keptChanging(location)
        }
        try editFile(location) { file in
            guard file.values[key] != nil else {
                guard !file.values.isEmpty else { throw notFound }
                throw ToolError.failure(
                    "\nThe domain/default pair of (\(location.argument), \(key)) does not exist\nDefaults have not been changed.\n")
            }
            var values = file.values
            values[key] = nil
            return values
        }
    }

    /// `import <path> <plist path|->`: the property list's dictionary merged into the file's.
    func importIntoFile(_ location: PlistPath, _ arguments: [String]) throws {
        guard arguments.count == 1 else { throw ToolError.failure("\nNeed a path to read from") }
        let imported = try importedValues(from: arguments[0])
        guard !imported.isEmpty else { return }
        try editFile(location) { file in file.values.merging(imported) { $1 } }
    }

    /// `export <path> <plist path|->`: the file's values as a binary property list, or XML on
    /// standard output.
    func exportFile(_ location: PlistPath, _ arguments: [String]) throws {
        guard arguments.count == 1 else { throw ToolError.failure("\nNeed a path to write to") }
        let values = try PlistFile.read(location).values
        guard !values.isEmpty else { throw Command.missingDomain(location.argument) }
        try export(values, named: location.argument, to: arguments[0])
    }

    /// Reads the file, builds its new values with `edit`, and writes them in place of the version
    /// read. When another writer replaced the file meanwhile, the edit is built again on what it
    /// wrote, as a domain's `-array-add` is built again on another writer's value.
    private func editFile(_ location: PlistPath, _ edit: (PlistFile) throws -> [String: PlistValue]) throws {
        for _ in 0..<Command.fileEditAttempts {
            let file = try PlistFile.read(location)
            if try file.write(try edit(file)) { return }
        }
        throw Command.keptChanging(location)
    }

    /// How many times an edit is built again on another writer's version before giving up.
    private static let fileEditAttempts = 100

    private static func keptChanging(_ location: PlistPath) -> ToolError {
        ToolError.failure("Could not write domain \(location.argument); exiting (\(location.path) kept changing)")
    }
}
