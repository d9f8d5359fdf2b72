import DefaultsCore
import EtcdWire
import EtcdGateway
import FoundationEssentials

/// The roaming link's file, `.defaultsd-roaming.plist` in the state directory: the last
/// revision applied, the revision of each key this machine holds and a digest of its value as
/// etcd has it, and the queue of local changes not yet in etcd (keys only: their values are the
/// domain files'). Written after the domain files it describes are durable, and at stop.
struct RoamingJournal: Sendable {
    static let fileName = ".defaultsd-roaming.plist"

    struct Contents: Sendable, Equatable {
        /// The prefix it was kept for: with another prefix, nothing of it applies.
        var prefix: String
        var revision: Int64
        var seen: [String: Int64]
        /// ``RoamingKeys/digest(_:)`` of each key's value as this machine last exchanged it with
        /// etcd; nil in a journal written before digests were kept.
        var synced: [String: UInt64]? = nil
        var queue: [RoamingState.LocalKey]
    }

    let files: DomainFiles

    var path: String { files.stateDirectory + "/" + RoamingJournal.fileName }

    /// The journal kept for `prefix`; empty when there is none (first start), it was kept for
    /// another prefix, or it cannot be read (a full read of etcd then rebuilds it).
    func load(prefix: String) -> Contents {
        let empty = Contents(prefix: prefix, revision: 0, seen: [:], synced: nil, queue: [])
        guard case .success(let file) = RegularFile.read(atPath: path, maximumBytes: PropertyListLimits.maximumFileBytes),
            let values = try? PropertyListFile.decode(file.data),
            values["prefix"] == .string(prefix), case .integer(let revision)? = values["revision"],
            EtcdWatchMessage.possibleRevisions.contains(revision)
        else { return empty }
        var contents = empty
        contents.revision = revision
        if case .dictionary(let seen)? = values["seen"] {
            for (key, value) in seen {
                if case .integer(let revision) = value, EtcdWatchMessage.possibleRevisions.contains(revision) { contents.seen[key] = revision }
            }
        }
        if case .dictionary(let synced)? = values["synced"] {
            contents.synced = synced.compactMapValues { value in
                if case .integer(let digest) = value { return UInt64(bitPattern: digest) }
                return nil
            }
        }
        if case .dictionary(let queue)? = values["queue"] {
            for (name, keys) in queue {
                guard let domain = try? DomainName(name), case .array(let keys) = keys else { continue }
                for case .string(let key) in keys { contents.queue.append(.init(domain: domain, key: key)) }
            }
        }
        return contents
    }

    func write(_ contents: Contents) throws(DefaultsError) {
        var queue: [String: PlistValue] = [:]
        for local in contents.queue {
            if case .array(var keys)? = queue[local.domain.rawValue] {
                keys.append(.string(local.key))
                queue[local.domain.rawValue] = .array(keys)
            } else {
                queue[local.domain.rawValue] = .array([.string(local.key)])
            }
        }
        var values: [String: PlistValue] = [
            "prefix": .string(contents.prefix), "revision": .integer(contents.revision),
            "seen": .dictionary(contents.seen.mapValues { .integer($0) }), "queue": .dictionary(queue),
        ]
        if let synced = contents.synced { values["synced"] = .dictionary(synced.mapValues { .integer(Int64(bitPattern: $0)) }) }
        try files.writeAtomically(try PropertyListFile.encode(values, format: .binary), to: path)
    }
}
