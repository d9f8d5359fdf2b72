import DefaultsCore
import FoundationEssentials
import Glibc

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
            if case .integer(let generation) = value, let domain = domain(named: name) { result[domain] = generation }
        }
        return result
    }

    /// A by-host domain's entry is its file's path, `ByHost/<domain>.<machine id>.plist` (no
    /// domain name has a `/`): another machine sharing the directory never takes it for its own.
    private func entry(of domain: DomainName) -> String? {
        guard domain.isCurrentHost else { return domain.rawValue }
        return files.machineID.map { DomainName.byHostFolder + "/" + domain.byHostFileName(machineID: $0) }
    }

    private func domain(named entry: String) -> DomainName? {
        let prefix = DomainName.byHostFolder + "/"
        guard entry.hasPrefix(prefix) else { return try? DomainName(entry) }
        return files.domain(ofFile: String(entry.dropFirst(prefix.count)), inByHostFolder: true)
    }

    /// The ledger file's bytes for these generations.
    func contents(_ generations: [DomainName: Int64]) throws(DefaultsError) -> Data {
        var values: [String: PlistValue] = [:]
        for (domain, generation) in generations {
            if let entry = entry(of: domain) { values[entry] = .integer(generation) }
        }
        return try PropertyListFile.encode(values, format: .binary)
    }
}
