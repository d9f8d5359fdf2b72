import DefaultsCore
import Foundation
import SettingsBundles

/// A bundle directory written by a test into a fresh temporary directory, removed on deinit.
/// Owned by the test that creates it.
final class TemporaryBundle {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("settings-bundle-tests-\(UUID().uuidString)")
            .appendingPathComponent("Settings.bundle")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url.deletingLastPathComponent())
    }

    /// Writes raw bytes at a path relative to the bundle, creating folders.
    func write(_ path: String, bytes: [UInt8]) throws {
        let file = url.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: file)
    }

    func write(_ path: String, text: String) throws {
        try write(path, bytes: Array(text.utf8))
    }

    /// Writes a page: a dictionary with `PreferenceSpecifiers` (and any other root keys).
    func writePage(
        _ path: String, _ specifiers: [PlistValue], stringsTable: String? = nil, extra: [String: PlistValue] = [:],
        format: PropertyListFile.Format = .xml
    ) throws {
        var root = extra
        root["PreferenceSpecifiers"] = .array(specifiers)
        if let stringsTable { root["StringsTable"] = .string(stringsTable) }
        try write(path, bytes: Array(try PropertyListFile.encode(root, format: format)))
    }

    func load(_ options: LoadOptions = LoadOptions(languages: ["en"])) throws -> SettingsBundle {
        try SettingsBundle.load(at: url, options: options)
    }
}

/// Shorthands for specifier dictionaries in tests.
enum Spec {
    static func group(_ title: String, footer: String? = nil) -> PlistValue {
        var d: [String: PlistValue] = ["Type": "PSGroupSpecifier", "Title": .string(title)]
        if let footer { d["FooterText"] = .string(footer) }
        return .dictionary(d)
    }

    static func toggle(_ key: String, _ title: String, default value: PlistValue = false) -> PlistValue {
        ["Type": "PSToggleSwitchSpecifier", "Key": .string(key), "Title": .string(title), "DefaultValue": value]
    }

    static func child(_ title: String, file: String) -> PlistValue {
        ["Type": "PSChildPaneSpecifier", "Title": .string(title), "File": .string(file)]
    }
}

extension SettingsBundle {
    /// `"SEVERITY CODE place"` of every diagnostic, for compact exact assertions.
    var findings: [String] { diagnostics.map { "\($0.severity.rawValue) \($0.code.rawValue) \($0.place)" } }
}
