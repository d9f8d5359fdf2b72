import DefaultsCore

extension Command {
    /// `read-effective <domain> [<key>]`: each key's effective value and the layer it comes from
    /// (managed, current host, user, bundle default), which macOS's `defaults` cannot show.
    /// The layers and their order are the shared search list's for one domain.
    func readEffective(_ arguments: [String]) throws {
        guard options.host == .any else {
            throw ToolError.failure("read-effective shows both variants of a domain already; leave out -currentHost")
        }
        var index = 0
        let domain = try domainArgument(arguments, at: &index)
        guard arguments.count - index <= 1 else { throw ToolError.usage }
        let effective = try effectiveValues(of: domain.domain.anyHost)
        guard index < arguments.count else {
            guard !effective.isEmpty else { throw ToolError.failure("\nDomain \(domain.displayName) does not exist\n") }
            if options.json {
                printJSON(.dictionary(effective.mapValues(Command.json)))
            } else {
                console.print(OldStyleText.describe(
                    .dictionary(effective.mapValues(\.value)), annotations: effective.mapValues(\.layer)) + "\n")
            }
            return
        }
        let key = arguments[index]
        guard let found = effective[key] else {
            throw ToolError.failure("\nThe domain/default pair of (\(domain.rawName), \(key)) does not exist\n")
        }
        if options.json {
            printJSON(Command.json(found))
        } else {
            console.print(OldStyleText.plain(found.value) + "  // " + found.layer + "\n")
        }
    }

    private static func json(_ found: (value: PlistValue, layer: String)) -> PlistValue {
        .dictionary(["value": found.value, "layer": .string(found.layer)])
    }

    /// How `read-effective` names a layer. The registration defaults shown are those the
    /// domain's running apps registered for it (typed keys' defaults), last.
    private static func label(_ layer: SearchList.Layer) -> String {
        switch layer {
        case .managed: "managed"
        case .persistent(let domain): domain.isCurrentHost ? "current host" : "user"
        case .bundle: "bundle default"
        case .argument: "argument"
        case .registration: "registration"
        }
    }

    /// Every key of the domain's layers, each with the value of the first layer that has it.
    private func effectiveValues(of domain: DomainName) throws -> [String: (value: PlistValue, layer: String)] {
        let client = try connect()
        let answer = try client.call(.get) { $0.domain(domain) }
        var effective: [String: (value: PlistValue, layer: String)] = [:]
        for layer in SearchList.layers(of: domain) {
            let values: [String: PlistValue] =
                switch layer {
                case .managed: try Command.values(answer["forced"])
                case .persistent(let variant) where variant.isCurrentHost: try client.values(of: variant)
                case .persistent: try Command.values(answer["value"])
                case .bundle: try Command.values(try client.call(.bundleDefaults) { $0.domain(domain) }["values"])
                case .argument, .registration: [:]
                }
            for (key, value) in values where effective[key] == nil { effective[key] = (value, Command.label(layer)) }
        }
        let registered = try Command.values(try client.call(.registeredDefaults) { $0.domain(domain) }["values"])
        for (key, value) in registered where effective[key] == nil { effective[key] = (value, Command.label(.registration)) }
        return effective
    }

    private static func values(_ json: JSON?) throws -> [String: PlistValue] {
        guard let json, case .dictionary(let values) = try WireValue.decode(json) else { return [:] }
        return values
    }
}
