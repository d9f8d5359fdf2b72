import DefaultsCore
import FoundationEssentials
import Glibc
import SettingsBundles

/// Finds and reads the installed Settings bundles: `<dir>/<domain>/Settings.bundle` in every
/// configured directory (system first, so a later one wins), plus those registered over the
/// socket. Runs on the scanner thread; a plain value with no shared state.
///
/// A bundle is read again only when its signature — the paths, sizes and modification times of
/// its files — changed, so a scan costs a directory walk, not a parse.
struct BundleScanner: Sendable {
    var directories: [String]
    var registered: [DomainName: String]
    var options: LoadOptions

    struct Found: Sendable {
        var path: String
        var signature: String
    }

    /// Every installed bundle by domain, with its signature (registered ones override installed ones).
    func find() -> [DomainName: Found] {
        var result: [DomainName: Found] = [:]
        let manager = FileManager.default
        for directory in directories {
            for name in (try? manager.contentsOfDirectory(atPath: directory)) ?? [] {
                guard let domain = try? DomainName(name) else { continue }
                let path = directory + "/" + name + "/Settings.bundle"
                guard SystemText.isDirectory(path) else { continue }
                result[domain] = Found(path: path, signature: BundleScanner.signature(of: path))
            }
        }
        // A registered bundle whose directory is gone is not found, so it is removed; it comes
        // back if the directory does.
        for (domain, path) in registered where manager.fileExists(atPath: path) {
            result[domain] = Found(path: path, signature: BundleScanner.signature(of: path))
        }
        return result
    }

    /// The directories whose changes can change what `find` finds: each configured directory
    /// and every directory inside it, and each registered bundle with its directories (`false`);
    /// for a configured directory that does not exist, the nearest ancestor that does (`true`).
    func directoriesToWatch() -> [String: Bool] {
        var result: [String: Bool] = [:]
        func addTree(_ path: String, depth: Int) {
            guard result[path] != false else { return }
            result[path] = false
            guard depth < 8 else { return }
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                let child = path + "/" + name
                if SystemText.isDirectory(child) {
                    addTree(child, depth: depth + 1)
                }
            }
        }
        for directory in directories + registered.values.sorted() {
            if SystemText.isDirectory(directory) {
                addTree(directory, depth: 0)
                continue
            }
            let ancestor = WatchedDirectories.nearestExisting(directory)
            if result[ancestor] == nil { result[ancestor] = true }
        }
        return result
    }

    func load(_ found: Found) -> Result<SettingsBundle, SettingsBundleError> {
        Result { () throws(SettingsBundleError) in
            try SettingsBundle.load(at: URL(fileURLWithPath: found.path), options: options)
        }
    }

    static func signature(of path: String) -> String {
        guard let files = try? FileManager.default.subpathsOfDirectory(atPath: path) else { return "missing" }
        var parts: [String] = []
        for file in files {
            let attributes = (try? FileManager.default.attributesOfItem(atPath: path + "/" + file)) ?? [:]
            let size = attributes[.size] as? UInt ?? 0
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            parts.append("\(file):\(size):\(modified)")
        }
        return parts.sorted().joined(separator: "|")
    }
}
