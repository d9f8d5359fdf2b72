import DefaultsCore
import FoundationEssentials
import Glibc

/// The file that keeps every domain's generation across restarts (`.defaultsd-generations.plist`).
///
/// While the daemon runs the ledger holds a *ceiling* for each domain: its generation plus
/// ``reserve`` when the ledger was written, so at least the generation of the domain's file on
/// disk. A flush writes the ledger, before the domain files, only at the run's first flush and
/// when a domain it writes has passed its ceiling; most flushes write no ledger at all. A clean
/// stop writes the exact generations. After a crash a domain restarts at its ceiling, ahead of
/// its file but never behind it: a client comparing generations reloads rather than missing a
/// change.
struct GenerationLedger: Sendable {
    static let fileName = ".defaultsd-generations.plist"
    /// How far above a domain's generation its ceiling is set. One ledger write covers this
    /// many changes of the domain; a crash makes its generation jump by at most this much.
    static let reserve: Int64 = 4096
    let files: DomainFiles

    init(files: DomainFiles) { self.files = files }

    var path: String { files.stateDirectory + "/" + GenerationLedger.fileName }

    /// Reads the ledger; a missing or unreadable ledger is empty (generations then restart at the
    /// highest value seen, which clients treat as "changed").
    func load() -> [DomainName: Int64] {
        guard case .success(let file) = RegularFile.read(atPath: path, maximumBytes: PropertyListLimits.maximumFileBytes),
            let values = try? PropertyListFile.decode(file.data)
        else { return [:] }
        var result: [DomainName: Int64] = [:]
        for (name, value) in values {
            // A generation past 2^53 (a hand-edited ledger) would overflow as it grows: not taken.
            if case .integer(let generation) = value, (0...(1 << 53)).contains(generation), let domain = domain(named: name) {
                result[domain] = generation
            }
        }
        return result
    }

    /// A by-host domain's entry is its file's path, `ByHost/<domain>.<machine id>.plist` (no
    /// domain name has a `/`): another machine sharing the directory never takes it for its own.
    private func entry(of domain: DomainName) -> String? {
        guard domain.isCurrentHost else { return domain.rawValue }
        return files.hostID.map { DomainName.byHostFolder + "/" + domain.byHostFileName(hostID: $0) }
    }

    private func domain(named entry: String) -> DomainName? {
        let prefix = DomainName.byHostFolder + "/"
        guard entry.hasPrefix(prefix) else { return try? DomainName(entry) }
        return files.domain(ofFile: String(entry.dropFirst(prefix.count)), inByHostFolder: true)
    }

    /// What the ledger must hold before `snapshot`'s files replace the ones on disk, or nil when
    /// the ledger there (`durable`, nil until this process writes it) already covers them. When
    /// written, every domain's ceiling is its generation plus ``reserve``. A snapshot with
    /// `exactGenerations` asks for the generations themselves, and only over a ledger this
    /// process wrote (and so had read).
    static func values(before snapshot: WriteBehind.Snapshot, durable: [DomainName: Int64]?) -> [DomainName: Int64]? {
        if snapshot.exactGenerations {
            guard let durable, durable != snapshot.generations else { return nil }
            return snapshot.generations
        }
        let covered = durable.map { ceilings in
            snapshot.domains.allSatisfy { (domain, _) in (snapshot.generations[domain] ?? 0) <= (ceilings[domain] ?? -1) }
        } ?? false
        return covered ? nil : snapshot.generations.mapValues { $0 + reserve }
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
