import DefaultsCore
import FoundationEssentials
import Glibc

extension Command {
    /// `write <domain> <key> <value...>` and `write <domain> '<plist dictionary>'` (replaces the domain).
    func write(_ arguments: [String]) throws {
        var index = 0
        let domain = try domainArgument(arguments, at: &index)
        let rest = Array(arguments[index...])
        guard !rest.isEmpty else { throw ToolError.usage }
        if rest.count == 1 {
            guard let value = ValueArguments.parsePropertyList(rest[0]), case .dictionary(let values) = value else {
                throw ToolError.failure("\nRep argument is not a dictionary\nDefaults have not been changed.\n")
            }
            let client = try connect()
            try perform(domain) {
                try client.call(.replaceDomain) { w in
                    w.domain(domain.domain)
                    w.key("values"); w.dictionary(values)
                }
            }
            return
        }
        let key = rest[0]
        let request = try ValueArguments.parse(Array(rest.dropFirst()))
        let client = try connect()
        let newValue: PlistValue
        switch request {
        case .set(let value):
            newValue = value
        case .arrayAdd(let elements):
            switch try client.value(of: domain.domain, key: key) {
            case nil: newValue = .array(elements)
            case .array(let existing)?: newValue = .array(existing + elements)
            default: throw ToolError.failure("Value for key \(key) is not an array; cannot append.  Leaving defaults unchanged.")
            }
        case .dictionaryAdd(let members):
            switch try client.value(of: domain.domain, key: key) {
            case nil: newValue = .dictionary(members)
            case .dictionary(let existing)?: newValue = .dictionary(existing.merging(members) { $1 })
            default: throw ToolError.failure("Value for key \(key) is not a dictionary; cannot append.  Leaving defaults unchanged.")
            }
        }
        try perform(domain) {
            try client.call(.set) { w in
                w.domain(domain.domain)
                w.key("key"); w.string(key)
                w.key("value"); w.value(newValue)
            }
        }
    }

    /// Runs a write; the daemon's refusal becomes macOS's message, with the daemon's reason after it.
    private func perform(_ domain: DomainArgument, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let refusal as DaemonClient.Refusal {
            throw ToolError.failure("Could not write domain \(domain.displayName); exiting (\(refusal.code): \(refusal.message))")
        }
    }

    /// `rename <domain> <old> <new>`: one changeset, so watchers see a single change.
    func rename(_ arguments: [String]) throws {
        var index = 0
        let domain = try domainArgument(arguments, at: &index)
        guard arguments.count - index == 2 else { throw ToolError.usage }
        let (old, new) = (arguments[index], arguments[index + 1])
        let client = try connect()
        guard let value = try client.value(of: domain.domain, key: old) else {
            throw ToolError.failure("Key \(old) does not exist in domain \(domain.displayName); leaving defaults unchanged")
        }
        do {
            try client.call(.apply) { w in
                w.domain(domain.domain)
                w.key("set"); w.beginObject(); w.key(new); w.value(value); w.endObject()
                if old != new { w.key("remove"); w.beginArray(); w.string(old); w.endArray() }
            }
        } catch let refusal as DaemonClient.Refusal {
            throw ToolError.failure("Failed to write domain \(domain.displayName) (\(refusal.code): \(refusal.message))")
        }
    }

    /// `delete <domain>` and `delete <domain> <key>`.
    func delete(_ arguments: [String]) throws {
        var index = 0
        let domain = try domainArgument(arguments, at: &index)
        guard arguments.count - index <= 1 else { throw ToolError.usage }
        let notFound = ToolError.failure("\nDomain (\(domain.rawName)) not found.\nDefaults have not been changed.\n")
        let client = try connect()
        guard index < arguments.count else {
            let answer = try client.call(.deleteDomain) { w in w.domain(domain.domain) }
            guard answer["existed"] == .bool(true) else { throw notFound }
            return
        }
        let key = arguments[index]
        guard try client.value(of: domain.domain, key: key) != nil else {
            // macOS says the domain is not found here too, which sends people looking for the wrong thing.
            guard try !client.values(of: domain.domain).isEmpty else { throw notFound }
            throw ToolError.failure(
                "\nThe domain/default pair of (\(domain.rawName), \(key)) does not exist\nDefaults have not been changed.\n")
        }
        try client.call(.remove) { w in
            w.domain(domain.domain)
            w.key("key"); w.string(key)
        }
    }

    /// `import <domain> <path|->`: any property-list format; its dictionary is merged into the domain.
    func importDomain(_ arguments: [String]) throws {
        var index = 0
        let domain = try domainArgument(arguments, at: &index)
        guard arguments.count - index == 1 else { throw ToolError.failure("\nNeed a path to read from") }
        let path = arguments[index]
        let data: Data
        if path == "-" {
            data = standardInput()
        } else {
            // A regular file within the size any property-list reader takes: a FIFO or a link to
            // /dev/zero is refused, never waited on.
            switch RegularFile.read(atPath: path, maximumBytes: PropertyListLimits.maximumFileBytes) {
            case .success(let file): data = file.data
            // macOS's words for a missing file; the reason for anything else.
            case .failure(.missing): throw ToolError.failure("Could not read data from \(path)")
            case .failure(let failure): throw ToolError.failure("Could not read data from \(path): it \(failure)")
            }
        }
        let root: PlistValue
        do {
            root = try PropertyListFile.decodeValue(data)
        } catch {
            throw ToolError.failure("Could not parse property list from \(path) due to \(error.message)")
        }
        guard case .dictionary(let values) = root else {
            throw ToolError.failure("Property list \(OldStyleText.describe(root)) was not a dictionary\nDefaults have not been changed.\n")
        }
        guard !values.isEmpty else { return }
        let client = try connect()
        try perform(domain) {
            try client.call(.apply) { w in
                w.domain(domain.domain)
                w.key("set"); w.dictionary(values)
            }
        }
    }

    /// `sync`: returns once the daemon has every accepted change on disk.
    func sync(_ arguments: [String]) throws {
        guard arguments.isEmpty else { throw ToolError.usage }
        do {
            try connect().call(.synchronize, timeout: 600)
        } catch let refusal as DaemonClient.Refusal {
            throw ToolError.failure("Could not write every change to disk: \(refusal.message)")
        }
    }
}
