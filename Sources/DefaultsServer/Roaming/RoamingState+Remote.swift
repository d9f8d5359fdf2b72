import DefaultsCore
import EtcdWire
import Logging

/// The changes of other machines, as the watch, a transaction's failed guards and full reads
/// bring them: applied to the store, one changeset per domain, announced with the writing
/// machine's host name.
extension RoamingState {
    /// Applies a watch message: each revision's changes, one changeset per domain, announced
    /// with the writing machine's host name. Our own writes and what this machine already has
    /// are skipped.
    func apply(_ message: EtcdWatchMessage, to store: DefaultsStore) {
        eventLoop.preconditionInEventLoop()
        var remote = RemoteChanges()
        var currentRevision: Int64 = 0
        for event in message.events {
            let revisionOfEvent = event.keyValue.modRevision
            if revisionOfEvent != currentRevision {
                apply(remote, to: store)
                remote = RemoteChanges()
                currentRevision = revisionOfEvent
            }
            revision = max(revision, revisionOfEvent)
            let etcdKey = event.keyValue.key
            guard let local = keys.locate(etcdKey), roams(local.domain) else { continue }
            let entry: RoamingKeys.Entry
            if event.kind == .delete {
                entry = RoamingKeys.Entry(value: nil, host: "")  // removed outside defaultsd
            } else if let decoded = RoamingKeys.decode(event.keyValue.value) {
                entry = decoded
            } else {
                logger.warning("ignoring an etcd value that is not a defaultsd entry", metadata: ["key": "\(etcdKey)"])
                continue
            }
            if entry.host == hostName {
                // Our own write coming back: etcd holds what this machine sent.
                if (seen[etcdKey] ?? 0) < revisionOfEvent { synced[etcdKey] = RoamingKeys.digest(entry.value) }
                seen[etcdKey] = max(seen[etcdKey] ?? 0, revisionOfEvent)
                continue
            }
            guard (seen[etcdKey] ?? 0) < revisionOfEvent else { continue }
            seen[etcdKey] = revisionOfEvent
            synced[etcdKey] = RoamingKeys.digest(entry.value)
            queue[LocalKey(domain: local.domain, key: local.key)] = nil
            remote.add(LocalKey(domain: local.domain, key: local.key), entry, revision: revisionOfEvent)
        }
        apply(remote, to: store)
        markJournal()
    }

    /// Makes the given domains equal to what etcd holds (`range`), as one changeset per domain:
    /// after a compaction, at the first start, and for a domain that starts roaming. Keys only
    /// this machine has are queued to be sent; keys with a queued change are left to the guarded
    /// transaction. A full read (every roaming domain) also moves the watch to its revision.
    func resynchronize(_ range: EtcdRange, domains: [DomainName]? = nil, in store: DefaultsStore) {
        eventLoop.preconditionInEventLoop()
        let chosen = Set(domains ?? Array(roamingDomains)).intersection(roamingDomains)
        var inEtcd: [DomainName: [String: (entry: RoamingKeys.Entry, revision: Int64)]] = [:]
        for pair in range.keyValues {
            guard let local = keys.locate(pair.key), chosen.contains(local.domain),
                let entry = RoamingKeys.decode(pair.value)
            else { continue }
            inEtcd[local.domain, default: [:]][local.key] = (entry, pair.modRevision)
        }
        for domain in chosen.sorted() {
            let values = (try? store.values(of: domain)) ?? [:]
            let remoteKeys = inEtcd[domain] ?? [:]
            var remote = RemoteChanges()
            for (key, found) in remoteKeys {
                let local = LocalKey(domain: domain, key: key)
                if queue[local] != nil { continue }
                seen[keys.etcdKey(domain: domain, key: key)] = found.revision
                synced[keys.etcdKey(domain: domain, key: key)] = RoamingKeys.digest(found.entry.value)
                if values[key] != found.entry.value { remote.add(local, found.entry, revision: found.revision) }
            }
            apply(remote, to: store)
            let onlyHere = values.keys.filter { remoteKeys[$0] == nil && queue[LocalKey(domain: domain, key: $0)] == nil }
            if !onlyHere.isEmpty { enqueue(onlyHere, of: domain, in: store) }
        }
        if domains == nil {
            revision = max(revision, range.revision)
            needsFullRead = false
        }
        markJournal()
    }

    /// Queues the keys of roaming domains whose value differs from the one this machine last
    /// exchanged with etcd: changes that reached a domain file while no journal recorded them,
    /// because the daemon was killed between the two, or because the file was edited while the
    /// daemon was stopped. Called once at start, before the sender runs; each is then sent,
    /// guarded like any local change, so a newer write from another machine still wins.
    func takeInChangesMadeWhileStopped(in store: DefaultsStore) {
        eventLoop.preconditionInEventLoop()
        guard journalKeptDigests else { return }
        var found = 0
        for domain in roamingDomains.sorted() {
            let values = (try? store.values(of: domain)) ?? [:]
            let domainPrefix = keys.domainPrefix(domain)
            var candidates = Set(values.keys)
            for etcdKey in synced.keys where etcdKey.hasPrefix(domainPrefix) {
                if let local = keys.locate(etcdKey), local.domain == domain { candidates.insert(local.key) }
            }
            let changed = candidates.filter { key in
                let local = LocalKey(domain: domain, key: key)
                guard queue[local] == nil else { return false }
                let known = synced[keys.etcdKey(domain: domain, key: key)]
                return known.map { $0 != RoamingKeys.digest(values[key]) } ?? (values[key] != nil)
            }
            guard !changed.isEmpty else { continue }
            found += changed.count
            enqueue(changed.sorted(), of: domain, in: store)
        }
        if found > 0 {
            logger.notice("sending changes that reached the domain files while no journal recorded them", metadata: ["keys": "\(found)"])
        }
    }

    /// Stops a domain roaming until a reload names it again: a change it would take or send can
    /// never be applied (past this machine's size limit, or refused by etcd). Logged once.
    func stopRoaming(_ domain: DomainName, because reason: String) {
        roamingDomains.remove(domain)
        queue = queue.filter { $0.key.domain != domain }
        stopped[domain] = reason
        logger.error("a domain stopped roaming", metadata: ["domain": "\(domain)", "reason": "\(reason)"])
    }

    /// Changes of other machines gathered for one revision (or one full read).
    struct RemoteChanges {
        var byDomain: [DomainName: (changes: Changeset, host: String, revision: Int64)] = [:]

        mutating func add(_ local: LocalKey, _ entry: RoamingKeys.Entry, revision: Int64) {
            var current = byDomain[local.domain] ?? (Changeset(domain: local.domain), entry.host, revision)
            if let value = entry.value { current.changes.set(local.key, to: value) } else { current.changes.remove(local.key) }
            if revision >= current.revision { (current.host, current.revision) = (entry.host, revision) }
            byDomain[local.domain] = current
        }
    }

    func apply(_ remote: RemoteChanges, to store: DefaultsStore) {
        for (_, change) in remote.byDomain.sorted(by: { $0.key < $1.key }) {
            let domain = change.changes.domain
            guard roamingDomains.contains(domain) else { continue }
            do {
                try store.applyRoaming(change.changes, host: change.host.isEmpty ? nil : change.host)
            } catch where error.code == .tooLarge {
                stopRoaming(domain, because: error.message)
            } catch {
                logger.error("could not apply a roaming change", metadata: [
                    "domain": "\(change.changes.domain)", "error": "\(error.message)"])
            }
        }
    }

}
