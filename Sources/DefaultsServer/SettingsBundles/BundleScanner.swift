import DefaultsCore
import Foundation
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
                var isDirectory: ObjCBool = false
                guard manager.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
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
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: child, isDirectory: &isDirectory), isDirectory.boolValue {
                    addTree(child, depth: depth + 1)
                }
            }
        }
        for directory in directories + registered.values.sorted() {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue {
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
        guard let walker = FileManager.default.enumerator(atPath: path) else { return "missing" }
        var parts: [String] = []
        while let file = walker.nextObject() as? String {
            let attributes = walker.fileAttributes ?? [:]
            let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
            let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            parts.append("\(file):\(size):\(modified)")
        }
        return parts.sorted().joined(separator: "|")
    }
}
