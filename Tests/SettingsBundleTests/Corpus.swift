import DaemonTestSupport
import DefaultsCore
import Foundation
import SettingsBundles
import SharedCorpus

/// The shared corpus of real bundles in `../shared/corpus/settings-bundles` (override the
/// shared directory with `DEFAULTSD_SHARED`), and the fixtures of this target.
enum Corpus {
    static let directory = SharedCorpus.settingsBundles

    /// Every corpus folder (`grp__newsyc`, ...), sorted.
    static let folders: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(
                atPath: directory.appendingPathComponent(name).path, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }.sorted()
    }()

    /// The `*.bundle` directory inside a corpus folder.
    static func bundleURL(_ folder: String) -> URL {
        let folderURL = directory.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folderURL.path)) ?? []
        let bundle = names.sorted().first { $0.hasSuffix(".bundle") } ?? "Settings.bundle"
        return folderURL.appendingPathComponent(bundle)
    }

    static func load(
        _ folder: String, languages: [String] = ["en"], idiom: Idiom = .phone,
        policy: StringsTablePolicy = .apple
    ) throws -> SettingsBundle {
        try SettingsBundle.load(
            at: bundleURL(folder), options: LoadOptions(idiom: idiom, languages: languages, stringsTablePolicy: policy))
    }
}

enum Fixtures {
    static let directory: URL = Bundle.module.resourceURL!.appendingPathComponent("Fixtures")

    static var bridgeControl: URL { directory.appendingPathComponent("BridgeControl/Settings.bundle") }
}
