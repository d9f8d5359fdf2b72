import DefaultsCore
import Foundation
import Logging

/// An app's name and icon as its freedesktop desktop entry gives them. On Linux that is where a
/// person's apps are named (menus, docks), and an entry's ID is a reverse-DNS name like a
/// defaults domain, so the entry whose ID is the domain describes the app.
///
/// Only the `[Desktop Entry]` group is read, and of it `Name`, its localised forms
/// (`Name[fr]`, `Name[pt_BR]`) and `Icon`. Written by hand rather than with a library: no
/// Swift package reads desktop entries, and the format is lines of `key=value` under headers.
struct DesktopEntry: Sendable, Equatable {
    /// `Name` under "", each `Name[locale]` under its locale.
    var names: [String: String] = [:]
    var icon: String?

    /// The longest entry read: a desktop entry is a few kilobytes.
    static let maximumBytes = 64 << 10

    init(names: [String: String] = [:], icon: String? = nil) {
        self.names = names
        self.icon = icon
    }

    /// The entry in `text`, or nil when it has no `[Desktop Entry]` group with a name.
    init?(parsing text: String) {
        var inEntry = false
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") {
                inEntry = trimmed == "[Desktop Entry]"
                continue
            }
            guard inEntry, !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
            let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if key == "Icon" { icon = value.isEmpty ? nil : value }
            if key == "Name" { names[""] = value }
            if key.hasPrefix("Name["), key.hasSuffix("]") { names[String(key.dropFirst(5).dropLast())] = value }
        }
        guard names[""] != nil else { return nil }
    }

    /// The name in the first wanted language the entry has (`fr-CA` takes `Name[fr]`), chosen as
    /// a bundle's language is, else `Name`.
    func name(for wanted: [String]) -> String? {
        // A locale may carry an encoding or modifier (`sr@latin`, `de_DE.UTF-8`), which a browser's tags never do.
        let locales = names.keys.filter { !$0.isEmpty }
        let plain = Dictionary(locales.map { (String($0.prefix { $0 != "." && $0 != "@" }), $0) }, uniquingKeysWith: { first, _ in first })
        if let chosen = LanguageChoice.best(of: Array(plain.keys).sorted(), for: wanted), let locale = plain[chosen] {
            return names[locale]
        }
        return names[""]
    }
}

/// Where desktop entries and their icons are found: `applications/` and `icons/hicolor/` (then
/// `pixmaps/`) under `$XDG_DATA_HOME`, then under each of `$XDG_DATA_DIRS`, as the
/// freedesktop specifications say. Every file is read as a regular file (a FIFO or a device is
/// skipped, never waited on) and size-capped (``DiskFile``); one refused is logged by name.
///
/// ```swift
/// let lookup = DesktopEntryLookup(environment: ProcessInfo.processInfo.environment)
/// lookup.entry(for: "org.gnome.TextEditor")?.name(for: ["fr"])   // "Éditeur de texte"
/// ```
struct DesktopEntryLookup: Sendable {
    let dataDirectories: [String]
    let logger: Logger

    /// The largest icon served: a hicolor icon is a few kilobytes, a large PNG well under this.
    static let maximumIconBytes = 1 << 20
    /// Sizes looked at, best first: a scalable icon, then the largest bitmaps.
    static let sizes = ["scalable", "512x512", "256x256", "128x128", "96x96", "64x64", "48x48", "32x32", "24x24", "16x16"]

    init(environment: [String: String], logger: Logger = Logger(label: "defaultsd-settings")) {
        self.logger = logger
        let home = environment["HOME"] ?? NSHomeDirectory()
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/share"
        let system = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        dataDirectories = [dataHome] + system
    }

    /// The desktop entry whose ID is `domain`, from the first data directory that has one.
    func entry(for domain: String) -> DesktopEntry? {
        guard (try? DomainName(domain)) != nil else { return nil }
        for directory in dataDirectories {
            guard let data = DiskFile.read("\(directory)/applications/\(domain).desktop", maximumBytes: DesktopEntry.maximumBytes, logger: logger)
            else { continue }
            return DesktopEntry(parsing: String(decoding: data, as: UTF8.self))
        }
        return nil
    }

    /// The file of the icon an entry names: an absolute path to a PNG or SVG, or a name looked
    /// up in the hicolor theme and then in `pixmaps`. Nil when nothing suitable exists.
    func iconFile(named icon: String) -> String? {
        if icon.hasPrefix("/") {
            return ImageType.contentType(of: icon) != nil && isServable(icon) ? icon : nil
        }
        guard !icon.isEmpty, !icon.hasPrefix("."),
            icon.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0) })
        else { return nil }
        var candidates: [String] = []
        for directory in dataDirectories {
            for size in Self.sizes {
                for type in size == "scalable" ? ["svg"] : ["png", "svg"] {
                    candidates.append("\(directory)/icons/hicolor/\(size)/apps/\(icon).\(type)")
                }
            }
        }
        for directory in dataDirectories {
            candidates += ["\(directory)/pixmaps/\(icon).png", "\(directory)/pixmaps/\(icon).svg"]
        }
        return candidates.first(where: isServable)
    }

    /// Whether `entry` names an icon that exists.
    func hasIcon(_ entry: DesktopEntry?) -> Bool { entry?.icon.flatMap(iconFile(named:)) != nil }

    /// The icon of the app whose domain this is: its bytes and content type.
    func icon(for domain: String) -> (bytes: [UInt8], contentType: String)? {
        guard let name = entry(for: domain)?.icon, let path = iconFile(named: name), let type = ImageType.contentType(of: path),
            let data = DiskFile.read(path, maximumBytes: Self.maximumIconBytes, logger: logger)
        else { return nil }
        return ([UInt8](data), type)
    }

    private func isServable(_ path: String) -> Bool {
        DiskFile.isServable(path, maximumBytes: Self.maximumIconBytes, logger: logger)
    }
}

/// The one rule for which image files the app serves, and as what: a bundle's images and apps'
/// icons alike, by their extension.
enum ImageType {
    static func contentType(of path: String) -> String? {
        switch path.split(separator: ".").last?.lowercased() {
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "svg": "image/svg+xml"
        default: nil
        }
    }
}
