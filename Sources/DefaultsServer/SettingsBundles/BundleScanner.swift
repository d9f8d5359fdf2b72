import DefaultsCore
import Foundation
import SettingsBundles

/// Finds and reads the installed Settings bundles: `<dir>/<domain>/Settings.bundle` in every
/// configured directory (system first, so a later one wins), plus those registered over the
/// socket. Runs on the scanner thread; a plain value with no shared state.
///
/// A bundle is read again only when its signature — the paths, sizes and modification times of
/// its files — changed, so polling every couple of seconds costs a directory walk, not a parse.
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
