import DefaultsCore
import Foundation

/// The file that keeps every domain's generation across restarts (`.defaultsd-generations.plist`).
///
/// Each flush writes the ledger before the domain files, so after a crash a generation can be
/// ahead of its file but never behind it: a client comparing generations reloads rather than
/// missing a change.
struct GenerationLedger: Sendable {
    static let fileName = ".defaultsd-generations.plist"
    let files: DomainFiles

    init(files: DomainFiles) { self.files = files }

    var path: String { files.directory + "/" + GenerationLedger.fileName }

    /// Reads the ledger; a missing or unreadable ledger is empty (generations then restart at the
    /// highest value seen, which clients treat as "changed").
    func load() -> [DomainName: Int64] {
        guard let data = FileManager.default.contents(atPath: path),
            let values = try? PropertyListFile.decode(data)
        else { return [:] }
        var result: [DomainName: Int64] = [:]
        for (name, value) in values {
            if case .integer(let generation) = value, let domain = GenerationLedger.domain(named: name) { result[domain] = generation }
        }
        return result
    }

    /// A by-host domain's entry is `ByHost/<domain>`: no domain name has a `/`.
    private static func entry(of domain: DomainName) -> String {
        domain.isCurrentHost ? DomainName.byHostFolder + "/" + domain.rawValue : domain.rawValue
    }

    private static func domain(named entry: String) -> DomainName? {
        let prefix = DomainName.byHostFolder + "/"
        if entry.hasPrefix(prefix) { return (try? DomainName(String(entry.dropFirst(prefix.count))))?.currentHost }
        return try? DomainName(entry)
    }

    func write(_ generations: [DomainName: Int64]) throws(DefaultsError) {
        var values: [String: PlistValue] = [:]
        for (domain, generation) in generations { values[GenerationLedger.entry(of: domain)] = .integer(generation) }
        try files.writeAtomically(try PropertyListFile.encode(values, format: .binary), to: path)
    }
}
