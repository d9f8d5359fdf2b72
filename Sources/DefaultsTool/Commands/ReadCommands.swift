import DefaultsCore
import FoundationEssentials
import Glibc

extension Command {
    /// `read`, `read <domain>`, `read <domain> <key>`.
    func read(_ arguments: [String]) throws {
        if arguments.isEmpty {
            let client = try connect()
            var all: [String: PlistValue] = [:]
            for domain in try client.domains(host: options.host) {
                let values = try client.values(of: domain)
                if !values.isEmpty { all[DomainArgument(domain: domain).displayName] = .dictionary(values) }
            }
            if options.json { printJSON(.dictionary(all)) } else { console.print(OldStyleText.describe(.dictionary(all)) + "\n") }
            return
        }
        var index = 0
        let domain = try domainArgument(arguments, at: &index)
        guard arguments.count - index <= 1 else { throw ToolError.usage }
        let client = try connect()
        guard index < arguments.count else {
            let values = try client.values(of: domain.domain)
            guard !values.isEmpty else { throw Command.missingDomain(domain.displayName) }
            printDomain(values)
            return
        }
        let key = arguments[index]
        guard let value = try client.value(of: domain.domain, key: key) else {
            throw Command.missingPair(domain.rawName, key)
        }
        printValue(value)
    }

    /// A domain's values as `read <domain>` prints them.
    func printDomain(_ values: [String: PlistValue]) {
        if options.json { printJSON(.dictionary(values)) } else { console.print(OldStyleText.describe(.dictionary(values)) + "\n") }
    }

    /// One value as `read <domain> <key>` prints it.
    func printValue(_ value: PlistValue) {
        if options.json { printJSON(value) } else { console.print(OldStyleText.plain(value) + "\n") }
    }

    /// macOS's words for a domain with no values.
    static func missingDomain(_ name: String) -> ToolError { ToolError.failure("\nDomain \(name) does not exist\n") }

    /// macOS's words for a key a domain does not have.
    static func missingPair(_ domainName: String, _ key: String) -> ToolError {
        ToolError.failure("\nThe domain/default pair of (\(domainName), \(key)) does not exist\n")
    }

    /// `read-type <domain> <key>`: `Type is integer`, ...
    func readType(_ arguments: [String]) throws {
        var index = 0
        let domain = try domainArgument(arguments, at: &index)
        guard arguments.count - index == 1 else { throw ToolError.usage }
        let key = arguments[index]
        guard let value = try connect().value(of: domain.domain, key: key) else { throw Command.missingPair(domain.rawName, key) }
        console.printRaw("Type is \(Command.readTypeName(value.plistType))\n")
    }

    /// A type as macOS's `read-type` names it: by its property-list name (``PlistType``), except
    /// that a real is a `float`.
    static func readTypeName(_ type: PlistType) -> String { type == .real ? "float" : type.name }

    /// `domains`: every domain but the global one, sorted, joined by ", ".
    func domains(_ arguments: [String]) throws {
        guard arguments.isEmpty else { throw ToolError.usage }
        let names = try connect().domains(host: options.host).filter { $0.anyHost != .global }.map(\.rawValue).sorted(by: OldStyleText.codeUnitOrder)
        if options.json {
            printJSON(.array(names.map(PlistValue.string)))
        } else {
            console.print(names.joined(separator: ", ") + "\n")
        }
    }

    /// `find <word>`: domains, keys and string values containing the word, case-insensitively.
    func find(_ arguments: [String]) throws {
        guard arguments.count == 1 else { throw ToolError.usage }
        let word = arguments[0]
        let client = try connect()
        var found: [(DomainArgument, [String: PlistValue])] = []
        for domain in try client.domains(host: options.host).sorted() {
            let argument = DomainArgument(domain: domain)
            let domainMatches = contains(domain.rawValue, word) || contains(argument.displayName, word)
            let matches = try client.values(of: domain).filter { key, value in
                domainMatches || contains(key, word) || Command.value(value, contains: word)
            }
            if !matches.isEmpty { found.append((argument, matches)) }
        }
        if options.json {
            var all: [String: PlistValue] = [:]
            for (domain, matches) in found { all[domain.domain.rawValue] = .dictionary(matches) }
            printJSON(.dictionary(all))
            return
        }
        guard !found.isEmpty else {
            console.log("No domain, key, nor value containing '\(word)'")
            return
        }
        for (domain, matches) in found {
            console.print("Found \(matches.count) keys in domain '\(domain.displayName)': \(OldStyleText.describe(.dictionary(matches)))\n")
        }
    }

    private func contains(_ text: String, _ word: String) -> Bool { text.lowercased().contains(word.lowercased()) }

    static func value(_ value: PlistValue, contains word: String) -> Bool {
        switch value {
        case .string(let s): return s.lowercased().contains(word.lowercased())
        case .array(let elements): return elements.contains { Command.value($0, contains: word) }
        case .dictionary(let members):
            return members.contains { $0.key.lowercased().contains(word.lowercased()) || Command.value($0.value, contains: word) }
        default: return false
        }
    }

    /// `export <domain> <path|->`: a binary property list to a file, XML to standard output.
    func exportDomain(_ arguments: [String]) throws {
        var index = 0
        let domain = try domainArgument(arguments, at: &index)
        guard arguments.count - index == 1 else { throw ToolError.failure("\nNeed a path to write to") }
        let values = try connect().values(of: domain.domain)
        guard !values.isEmpty else { throw Command.missingDomain(domain.displayName) }
        try export(values, named: domain.displayName, to: arguments[index])
    }

    /// Writes a domain's values for `export`: XML to standard output for `-`, else a binary
    /// property list to the file at `path`.
    func export(_ values: [String: PlistValue], named name: String, to path: String) throws {
        if path == "-" {
            console.printRaw(String(decoding: try PropertyListFile.encode(values, format: .xml), as: UTF8.self))
            return
        }
        do {
            try PropertyListFile.encode(values, format: .binary).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw ToolError.failure("Could not export domain \(name) to \(path) due to \(SystemText.reason(error))")
        }
    }
}
