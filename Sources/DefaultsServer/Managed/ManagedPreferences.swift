import DefaultsCore
import FoundationEssentials
import Glibc
import Logging

/// The administrator's managed preferences: the keys they force, by domain, above everything a
/// user stores (as macOS managed preferences and dconf locks).
///
/// Owned by the store's event loop: read by the store (`lookup`, the `forced` check, `get`'s
/// `forced` member) and replaced whole by the `ManagedPreferencesWatcher` when the files change.
///
/// ```swift
/// let managed = ManagedPreferences()
/// managed.forced = [try DomainName("com.example.bridge"): ["warpFactor": .integer(9)]]
/// managed.refusal(of: changeset) // DefaultsError(.forced, "warpFactor of com.example.bridge is forced ...")
/// ```
final class ManagedPreferences: ChangesetCheck {
    /// The forced keys of each domain, with their values.
    var forced: [DomainName: [String: PlistValue]] = [:]

    init() {}

    /// Refuses a changeset that touches a forced key, whole.
    func check(_ changeset: Changeset) -> DefaultsError? {
        // Forced keys win over both of a domain's variants, so neither may change them.
        guard let keys = forced[changeset.domain.anyHost] else { return nil }
        for (key, _) in changeset where keys[key] != nil {
            return DefaultsError(
                .forced, "\(key) of \(changeset.domain) is forced by the administrator's managed preferences")
        }
        return nil
    }
}

/// Reads the managed preference files, trusting only those the daemon's user cannot change.
///
/// A plain value: the `ManagedPreferencesWatcher` runs it on the loop whenever the files change.
struct ManagedPreferenceFiles: Sendable {
    let directory: String
    let userName: String
    let daemonUID: UInt32

    /// `<dir>/users/<user name>`.
    var userDirectory: String { directory + "/users/" + userName }

    /// Every forced key by domain: the files for every user, then the user's own, which win key by key.
    func load(logger: Logger) -> [DomainName: [String: PlistValue]] {
        var result: [DomainName: [String: PlistValue]] = [:]
        // Each directory counts only when every directory above it, up to the managed one, does.
        let chains = [[directory], [self.directory, self.directory + "/users", userDirectory]]
        for chain in chains {
            guard chain.allSatisfy({ trusts($0, logger: logger) }), let directory = chain.last else { continue }
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted() {
                guard let domain = DomainName.fromFileName(name) else { continue }
                let path = directory + "/" + name
                guard trusts(path, logger: logger) else { continue }
                switch DomainFiles.read(atPath: path) {
                case .parsed(let values, _):
                    result[domain, default: [:]].merge(values) { _, userOwn in userOwn }
                case .unparseable(let reason, _):
                    logger.warning("managed preferences file could not be parsed; ignored", metadata: [
                        "file": "\(path)", "error": "\(reason)"])
                default:
                    continue
                }
            }
        }
        return result.filter { !$0.value.isEmpty }
    }

    /// Whether `path` is out of reach of everyone but the administrator (``PathTrust``): the path,
    /// where its links lead, and every directory above them up to `/`, must be owned by root (for
    /// a per-user daemon: by root or another user, never the daemon's own), and none may be
    /// writable by its group or others, nor by the daemon's user, except a directory with the
    /// sticky bit (as `/tmp`). A missing path is not trusted, silently.
    func trusts(_ path: String, logger: Logger) -> Bool {
        guard FileManager.default.fileExists(atPath: path) else { return false }
        guard let problem = trust.problem(with: path) else { return true }
        logger.warning("managed preferences ignored: someone other than the administrator could change them", metadata: [
            "path": "\(path)", "because": "\(problem)"])
        return false
    }

    /// Who may own each component of a managed path, and what else it must keep to.
    private var trust: PathTrust {
        let daemonUID = self.daemonUID
        return PathTrust(
            acceptsOwner: { daemonUID == 0 ? $0 == 0 : $0 != daemonUID }, acceptsPrivateGroup: false,
            furtherProblem: { component in
                daemonUID != 0 && access(component, W_OK) == 0 ? "can be written by the daemon's user" : nil
            })
    }
}
