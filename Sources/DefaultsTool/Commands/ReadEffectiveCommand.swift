import DefaultsCore

extension Command {
    /// Where a key's effective value comes from, in the order an app's lookup takes them.
    /// Registration defaults are not among them: each app registers its own, on its connection.
    enum EffectiveLayer: String, CaseIterable {
        case managed
        case currentHost = "current host"
        case user
        case bundleDefault = "bundle default"
    }

    /// `read-effective <domain> [<key>]`: each key's effective value and the layer it comes from
    /// (managed, current host, user, bundle default), which macOS's `defaults` cannot show.
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
                    .dictionary(effective.mapValues(\.value)), annotations: effective.mapValues(\.layer.rawValue)) + "\n")
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
            console.print(OldStyleText.plain(found.value) + "  // " + found.layer.rawValue + "\n")
        }
    }

    private static func json(_ found: (value: PlistValue, layer: EffectiveLayer)) -> PlistValue {
        .dictionary(["value": found.value, "layer": .string(found.layer.rawValue)])
    }

    /// Every key of the domain's layers, each with the value of the first layer that has it.
    private func effectiveValues(of domain: DomainName) throws -> [String: (value: PlistValue, layer: EffectiveLayer)] {
        let client = try connect()
        let answer = try client.call("get") { $0.domain(domain) }
        var layers: [EffectiveLayer: [String: PlistValue]] = [
            .managed: try Command.values(answer["forced"]),
            .currentHost: try client.values(of: domain.currentHost),
            .user: try Command.values(answer["value"]),
        ]
        if domain != .global {
            layers[.bundleDefault] = try Command.values(try client.call("bundleDefaults") { $0.domain(domain) }["values"])
        }
        var effective: [String: (value: PlistValue, layer: EffectiveLayer)] = [:]
        for layer in EffectiveLayer.allCases.reversed() {
            for (key, value) in layers[layer] ?? [:] { effective[key] = (value, layer) }
        }
        return effective
    }

    private static func values(_ json: JSON?) throws -> [String: PlistValue] {
        guard let json, case .dictionary(let values) = try WireValue.decode(json) else { return [:] }
        return values
    }
}
