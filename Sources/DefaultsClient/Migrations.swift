import DefaultsCore
import Foundation

/// A change to the values an app stored under an older version: a key renamed, a value
/// converted. Each runs once per domain, whatever the number of processes of the app that start
/// at once: see ``SharedDefaults/migrate(_:)``.
///
/// ```swift
/// try await defaults.migrate([
///     .rename("warp", to: "warpFactor"),
///     .convert("speed") { $0 == "fast" ? 9 : $0 },
/// ])
/// ```
public struct Migration: Sendable {
    /// What the domain's record of migrations names it by: unique and stable across versions.
    public let id: String
    let transform: @Sendable (inout [String: PlistValue]) throws -> Void

    /// A migration that changes the domain's values as `transform` does.
    public init(_ id: String, _ transform: @escaping @Sendable (inout [String: PlistValue]) throws -> Void) {
        self.id = id
        self.transform = transform
    }

    /// Moves the value of `old` to `new`, where `new` has none yet; `old` is removed either way.
    public static func rename(_ old: String, to new: String) -> Migration {
        Migration("rename \(old) to \(new)") { values in
            guard let value = values.removeValue(forKey: old) else { return }
            if values[new] == nil { values[new] = value }
        }
    }

    /// Replaces `key`'s value, when it has one, with what `convert` makes of it (nil removes the
    /// key). `id` names it; by default "convert <key>".
    public static func convert(_ key: String, id: String? = nil, _ convert: @escaping @Sendable (PlistValue) -> PlistValue?) -> Migration {
        Migration(id ?? "convert \(key)") { values in
            guard let value = values[key] else { return }
            values[key] = convert(value)
        }
    }
}

extension SharedDefaults {
    /// The key of a domain that records, by id, the migrations run on it: visible to
    /// `defaults read` and `read-effective` like any value.
    public static let migrationsKey = "defaultsd.migrations"

    /// Runs, in order, each migration not yet recorded in this instance's domain. Each is one
    /// compare-and-set `apply`: its changes and its entry in the record (``migrationsKey``),
    /// only if the whole domain, record included, still holds what it read. It throws
    /// `unavailable` while the domain is not loaded from the daemon. Of ten
    /// processes that start at once, one runs each migration; the others find it recorded when
    /// their apply is refused, and do nothing. Each run is logged. Returns the ids this process ran.
    @discardableResult
    public func migrate(_ migrations: [Migration], maximumAttempts: Int = 100) async throws -> [String] {
        await load()
        var ran: [String] = []
        for migration in migrations {
            var done = false
            for _ in 0..<max(maximumAttempts, 1) where !done {
                // Only a domain loaded from the daemon says what is stored: a migration judged on
                // a cache that is not (the daemon away) would record itself without its changes.
                guard let stored = engine.cache.state.withLock({ $0.domains[domain]?.loaded == true ? $0.domains[domain]?.visible ?? [:] : nil })
                else { throw DefaultsClientError.unavailable("\(domainName) is not loaded from defaultsd; migrations run once it is") }
                let record = Self.migrationsRecorded(in: stored)
                if record.contains(migration.id) {
                    done = true
                    break
                }
                var values = stored
                try migration.transform(&values)
                values[Self.migrationsKey] = .array((record + [migration.id]).map(PlistValue.string))
                let changes = Changeset.difference(from: stored, to: values, domain: domain)
                // The whole domain as read, and what the migration adds: a write of any key in
                // between (an older version of the app, still running) makes it look again.
                var expected: [String: PlistValue?] = stored.mapValues { .some($0) }
                for (key, _) in changes { expected[key] = .some(stored[key]) }
                let ticket = Ticket(eventLoop: engine.eventLoop)
                engine.edit(.changes(changes), of: domain, ticket: ticket, expecting: expected)
                switch await engine.result(of: ticket, timeout: configuration.synchronizeTimeout) {
                case .success:
                    engine.logger.notice("migration ran", metadata: [
                        "domain": "\(domainName)", "migration": "\(migration.id)", "keys": "\(changes.count - 1)"])
                    ran.append(migration.id)
                    done = true
                case .failure(.writeRefused(_, let refusal)) where refusal.code == .conflict:
                    continue  // another process wrote first: its values have come; look again
                case .failure(let failure):
                    throw failure
                }
            }
            guard done else {
                throw DefaultsClientError.writeRefused(
                    domain: domainName, DefaultsError(.conflict, "migration \(migration.id) kept meeting other writes"))
            }
        }
        return ran
    }

    static func migrationsRecorded(in values: [String: PlistValue]) -> [String] {
        guard case .array(let entries)? = values[migrationsKey] else { return [] }
        return entries.compactMap { if case .string(let id) = $0 { id } else { nil } }
    }
}
