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
        let (request, expected) = try Command.writeArguments(Array(rest.dropFirst()))
        let client = try connect()
        // Each attempt reads what it builds on, and writes only if that is still there: an
        // `-array-add` or `-dict-add` raced by another writer is built again on the new value.
        for _ in 0..<100 {
            let current = try client.value(of: domain.domain, key: key)
            let newValue = try Command.value(building: request, on: current, key: key)
            let precondition: PlistValue?? = if case .set = request { expected } else { .some(current) }
            do {
                try perform(domain) {
                    guard let precondition else {
                        try client.call(.set) { w in
                            w.domain(domain.domain)
                            w.key("key"); w.string(key)
                            w.key("value"); w.value(newValue)
                        }
                        return
                    }
                    try client.call(.apply) { w in
                        w.domain(domain.domain)
                        w.key("set"); w.dictionary([key: newValue])
                        w.key("expect"); w.beginObject(); w.key(key)
                        if let precondition { w.value(precondition) } else { w.null() }
                        w.endObject()
                    }
                }
                return
            } catch let conflict as ConflictRefusal {
                // Another writer came first: an add builds on what it wrote; an `-expect` fails.
                if expected != nil { throw conflict.failure }
            }
        }
        throw ToolError.failure("Could not write domain \(domain.displayName); exiting (\(key) kept changing)")
    }

    /// The value arguments of `write <domain> <key> ...`: what to write, and the value the key must
    /// hold first when they end with `-expect <value>` or `-expect-absent` (`.some(nil)`: absent),
    /// for a compare-and-set.
    static func writeArguments(_ arguments: [String]) throws(ToolError) -> (request: WriteRequest, expected: PlistValue??) {
        var valueArguments = arguments
        var expected: PlistValue??
        if let at = valueArguments.firstIndex(of: "-expect") {
            guard case .set(let value) = try ValueArguments.parse(Array(valueArguments[(at + 1)...])) else { throw ToolError.usage }
            expected = .some(value)
            valueArguments.removeSubrange(at...)
        } else if valueArguments.last == "-expect-absent" {
            expected = .some(nil)
            valueArguments.removeLast()
        }
        return (try ValueArguments.parse(valueArguments), expected)
    }

    /// The value `request` writes to `key`, built on the key's `current` value for `-array-add`
    /// and `-dict-add`.
    static func value(building request: WriteRequest, on current: PlistValue?, key: String) throws(ToolError) -> PlistValue {
        switch request {
        case .set(let value):
            return value
        case .arrayAdd(let elements):
            switch current {
            case nil: return .array(elements)
            case .array(let existing)?: return .array(existing + elements)
            default: throw ToolError.failure("Value for key \(key) is not an array; cannot append.  Leaving defaults unchanged.")
            }
        case .dictionaryAdd(let members):
            switch current {
            case nil: return .dictionary(members)
            case .dictionary(let existing)?: return .dictionary(existing.merging(members) { $1 })
            default: throw ToolError.failure("Value for key \(key) is not a dictionary; cannot append.  Leaving defaults unchanged.")
            }
        }
    }

    /// Runs a write; the daemon's refusal becomes macOS's message, with the daemon's reason after
    /// it. A `conflict` is thrown as ``ConflictRefusal``, for the caller to build on the new value.
    private func perform(_ domain: DomainArgument, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let refusal as DaemonClient.Refusal {
            let failure = ToolError.failure("Could not write domain \(domain.displayName); exiting (\(refusal.code): \(refusal.message))")
            if refusal.code == DefaultsError.Code.conflict.rawValue { throw ConflictRefusal(failure: failure) }
            throw failure
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
        let values = try importedValues(from: arguments[index])
        guard !values.isEmpty else { return }
        let client = try connect()
        try perform(domain) {
            try client.call(.apply) { w in
                w.domain(domain.domain)
                w.key("set"); w.dictionary(values)
            }
        }
    }

    /// The dictionary `import` merges: a property list in any format, from the file at `path` or,
    /// for `-`, from standard input.
    func importedValues(from path: String) throws(ToolError) -> [String: PlistValue] {
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
        return values
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

/// A write refused because its precondition did not hold; `failure` is what the person reads.
struct ConflictRefusal: Error {
    let failure: ToolError
}
