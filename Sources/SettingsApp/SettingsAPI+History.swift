import DefaultsCore
import Hummingbird

/// A domain's change journal as the page shows it: when and by what each key last changed (the
/// note beside its row), the history list, and Restore (docs/SETTINGS-APP.md, "History").
///
/// Secure values stay here, as everywhere in the app: an entry of a key that an installed bundle
/// shows as a secure field carries no value, whatever the journal holds. The daemon records no
/// value for such a key, but a value written before its bundle was installed is in the journal
/// in full.
extension SettingsAPI {
    /// The newest entries of a domain the app reads from the journal: the history list shows
    /// them, and the notes beside rows come from them (a key whose last change is older has no
    /// note). The daemon's own default, and a list a person can still scroll through.
    static let journalEntriesRead: Int64 = 1000

    /// `domain`'s newest entries, oldest first as the daemon answers them; nil when the daemon
    /// keeps no journal of it: `no_journal` (the journal is off, or the domain excluded), or
    /// `unknown_op` (a daemon from before the journal).
    func journal(of domain: String) async throws -> [JSON]? {
        let answer = try await reply(to: .request(.history, ["domain": .string(domain), "limit": .integer(Self.journalEntriesRead)]))
        if let refusal = DefaultsError(answer: answer) {
            if refusal.code == .noJournal || refusal.code == .unknownOp { return nil }
            throw Self.failure(refusal)
        }
        guard case .array(let entries)? = answer["entries"] else { return [] }
        return entries
    }

    /// When and by what each key of each of `domains` last changed, by domain then key, each
    /// domain's as ``lastChanges(of:)`` gives them.
    func lastChangesByDomain(_ domains: Set<String>) async -> JSON {
        var byDomain: [String: JSON] = [:]
        for domain in domains { byDomain[domain] = await lastChanges(of: domain) }
        return .object(byDomain)
    }

    /// When and by what each key of `domain` last changed, by key: `{"time","writer"}` of its
    /// latest entry among the newest ``journalEntriesRead``. The notes only add to a view: a
    /// daemon without a journal, or one that cannot answer now, leaves them out and the view is
    /// drawn without them.
    func lastChanges(of domain: String) async -> JSON {
        guard let entries = try? await journal(of: domain) else { return [:] }
        var notes: [String: JSON] = [:]
        // Oldest first: a later entry of a key replaces an earlier one.
        for entry in entries {
            guard case .string(let key)? = entry["key"] else { continue }
            let note: JSON = ["time": entry["time"] ?? .null, "writer": entry["writer"] ?? .null]
            notes[key] = note
        }
        return .object(notes)
    }

    /// The history view of `domain`: its entries newest first, each `{"id","time","writer","key"}`
    /// with `old` and `new` as the plain editor shows a value (`{"type","text"}`; left out when
    /// the key was absent before, or removed), or `"secure":true` and neither; `revert` (the entry
    /// it returned to) when the change was a restore. `journal` is false when the daemon keeps no
    /// journal of the domain. `bundle` (whether a Settings bundle shows the domain) and `title`
    /// (the app's name, else the domain) name the view to go back to.
    func history(_ domain: String, acceptLanguage: String?) async throws -> JSON {
        let bundles = try await ask(.request(.listBundles))
        let bundle: JSON? = if case .array(let list)? = bundles["bundles"] { list.first { $0["domain"] == .string(domain) } } else { nil }
        var title = domain
        if let bundle {
            if let name = desktopEntries.entry(for: domain)?.name(for: LanguageChoice.preferred(acceptLanguage ?? "")) {
                title = name
            } else if case .string(let bundleTitle)? = bundle["title"] {
                title = bundleTitle
            }
        }
        var view: [String: JSON] = ["domain": .string(domain), "bundle": .bool(bundle != nil), "title": .string(title)]
        guard let entries = try await journal(of: domain) else {
            view["journal"] = .bool(false)
            view["entries"] = .array([])
            return .object(view)
        }
        let secret = try await secureKeys(of: domain)
        view["journal"] = .bool(true)
        view["limit"] = .integer(Self.journalEntriesRead)
        view["entries"] = .array(entries.reversed().map { Self.shownEntry($0, secret: secret) })
        return .object(view)
    }

    /// A journal entry as the history view shows it; a key in `secret` (or one the journal marks
    /// secure) without its values.
    static func shownEntry(_ entry: JSON, secret: Set<String>) -> JSON {
        var shown: [String: JSON] = [:]
        for member in ["id", "time", "writer", "key"] { shown[member] = entry[member] ?? .null }
        let key: String = if case .string(let name)? = entry["key"] { name } else { "" }
        if entry["secure"] == .bool(true) || secret.contains(key) {
            shown["secure"] = .bool(true)
        } else {
            for member in ["old", "new"] {
                guard let value = entry[member], value != .null else { continue }
                let plain = PlainValue(wire: value)
                let text: JSON = ["type": .string(plain.type), "text": .string(plain.text)]
                shown[member] = text
            }
        }
        if case .integer(let to)? = entry["origin"]?["revert"] { shown["revert"] = .integer(to) }
        return .object(shown)
    }

    /// Restore: `{"to": <an entry's id>, "key": <its key>}` returns the key to the value that
    /// entry replaced (removes it, when the key was absent before), in one `revert` of the entry
    /// and every later change of the key. A secure key's earlier value was never recorded, so it
    /// cannot be restored, and the page offers no Restore for it.
    func restore(_ domain: String, body: JSON) async throws {
        guard case .integer(let to)? = body["to"], case .string(let key)? = body["key"], !key.isEmpty else {
            throw Failure(status: .badRequest, code: "bad_request", message: "expected to (an entry's id) and key")
        }
        let answer = try await ask(.request(.revert, ["domain": .string(domain), "to": .integer(to), "key": .string(key)]))
        if case .array(let skipped)? = answer["skipped"], skipped.contains(.string(key)) {
            throw Failure(
                status: .unprocessableContent, code: "not_recorded",
                message: "\(key) is a secure value, whose earlier values are never recorded; it is left as it is")
        }
    }
}
