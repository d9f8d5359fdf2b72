import Foundation
import TestThreads
import Testing

@testable import SettingsApp

/// Apps' names and icons from desktop entries: the parsing, the choice of language, and the
/// lookup through the XDG data directories and the hicolor theme, on files the test lays out.
@Suite(.ownThreads) struct DesktopEntryTests {
    static let entry = """
        # a comment
        [Desktop Entry]
        Type=Application
        Name=Bridge Control
        Name[fr]=Contrôle de passerelle
        Name[pt_BR]=Controle da ponte
        Name[sr@latin]=Kontrola mosta
        Icon = bridge-control
        Exec=bridge-control %U

        [Desktop Action new]
        Name=New Bridge
        Icon=other
        """

    @Test("the [Desktop Entry] group gives the names and the icon; another group changes nothing")
    func parsing() throws {
        let entry = try #require(DesktopEntry(parsing: Self.entry))
        #expect(entry.icon == "bridge-control")
        #expect(entry.names == ["": "Bridge Control", "fr": "Contrôle de passerelle", "pt_BR": "Controle da ponte", "sr@latin": "Kontrola mosta"])
        #expect(DesktopEntry(parsing: "[Desktop Action x]\nName=Only an action\n") == nil)
        #expect(DesktopEntry(parsing: "garbage\u{0}=\n[[[") == nil)
    }

    @Test("the name is chosen as a bundle's language is: fr-CA takes Name[fr], pt-BR Name[pt_BR], sr Name[sr@latin], de falls back to Name")
    func names() throws {
        let entry = try #require(DesktopEntry(parsing: Self.entry))
        #expect(entry.name(for: ["fr-CA", "en"]) == "Contrôle de passerelle")
        #expect(entry.name(for: ["pt-BR"]) == "Controle da ponte")
        #expect(entry.name(for: ["sr"]) == "Kontrola mosta")
        #expect(entry.name(for: ["de", "it"]) == "Bridge Control")
        #expect(entry.name(for: []) == "Bridge Control")
    }

    /// A data home and a system data directory, each with what `lay` puts there.
    func directories(_ lay: (_ home: String, _ system: String) throws -> Void) throws -> DesktopEntryLookup {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("defaultsd-desktop-\(UUID().uuidString.prefix(8))").path
        let home = root + "/home", system = root + "/system"
        for folder in [home + "/applications", system + "/applications"] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        try lay(home, system)
        return DesktopEntryLookup(environment: ["HOME": root, "XDG_DATA_HOME": home, "XDG_DATA_DIRS": system + ":relative/ignored"])
    }

    func write(_ text: String, _ path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test("the user's entry wins over the system's; icons: scalable SVG first, then the largest PNG, then pixmaps")
    func lookup() throws {
        let lookup = try directories { home, system in
            try write("[Desktop Entry]\nName=Mine\nIcon=mine\n", home + "/applications/com.example.app.desktop")
            try write("[Desktop Entry]\nName=System's\nIcon=mine\n", system + "/applications/com.example.app.desktop")
            try write("png 48", system + "/icons/hicolor/48x48/apps/mine.png")
            try write("png 256", system + "/icons/hicolor/256x256/apps/mine.png")
            try write("[Desktop Entry]\nName=Old\nIcon=old\n", system + "/applications/com.example.old.desktop")
            try write("pixmap", system + "/pixmaps/old.png")
            try write("[Desktop Entry]\nName=Vector\nIcon=vector\n", system + "/applications/com.example.vector.desktop")
            try write("<svg/>", system + "/icons/hicolor/scalable/apps/vector.svg")
            try write("png", home + "/icons/hicolor/16x16/apps/vector.png")
        }
        #expect(lookup.dataDirectories.count == 2)
        #expect(lookup.entry(for: "com.example.app")?.names[""] == "Mine")
        #expect(lookup.icon(for: "com.example.app").map { String(decoding: $0.bytes, as: UTF8.self) } == "png 256")
        #expect(lookup.icon(for: "com.example.app")?.contentType == "image/png")
        #expect(lookup.icon(for: "com.example.old").map { String(decoding: $0.bytes, as: UTF8.self) } == "pixmap")
        // The user's 16x16 PNG comes before the system's scalable one: the user's directory is searched first.
        #expect(lookup.icon(for: "com.example.vector").map { String(decoding: $0.bytes, as: UTF8.self) } == "png")
        #expect(lookup.entry(for: "com.example.none") == nil)
        #expect(lookup.entry(for: "../../etc/passwd") == nil)
    }

    @Test("hostile entries and icons: a FIFO, a link to /dev/zero, a file past the cap, a path out of the theme, a non-image path are never served")
    func hostile() throws {
        var fifo = ""
        let lookup = try directories { home, system in
            fifo = home + "/applications/com.example.fifo.desktop"
            #expect(mkfifo(fifo, 0o600) == 0)
            try write("[Desktop Entry]\nName=Big\nIcon=big\n", home + "/applications/com.example.big.desktop")
            try write("", home + "/icons/hicolor/48x48/apps/big.png")
            try Data(count: DesktopEntryLookup.maximumIconBytes + 1).write(to: URL(fileURLWithPath: home + "/icons/hicolor/48x48/apps/big.png"))
            try write("[Desktop Entry]\nName=Escape\nIcon=../../../../etc/passwd\n", home + "/applications/com.example.escape.desktop")
            try write("[Desktop Entry]\nName=Text\nIcon=/etc/hostname\n", home + "/applications/com.example.text.desktop")
            try write(String(repeating: "x", count: DesktopEntry.maximumBytes + 1), home + "/applications/com.example.huge.desktop")
            // Links to a device that never ends: an entry, and an icon.
            try FileManager.default.createSymbolicLink(atPath: home + "/applications/com.example.devzero.desktop", withDestinationPath: "/dev/zero")
            try write("[Desktop Entry]\nName=Zero\nIcon=zero\n", home + "/applications/com.example.zero.desktop")
            try FileManager.default.createSymbolicLink(atPath: home + "/icons/hicolor/48x48/apps/zero.png", withDestinationPath: "/dev/zero")
        }
        #expect(lookup.entry(for: "com.example.fifo") == nil)
        #expect(lookup.entry(for: "com.example.huge") == nil)
        #expect(lookup.entry(for: "com.example.big")?.names[""] == "Big")
        #expect(lookup.icon(for: "com.example.big") == nil)
        #expect(lookup.icon(for: "com.example.escape") == nil)
        #expect(lookup.icon(for: "com.example.text") == nil)
        #expect(lookup.entry(for: "com.example.devzero") == nil)
        #expect(lookup.entry(for: "com.example.zero")?.names[""] == "Zero")
        #expect(lookup.icon(for: "com.example.zero") == nil)
        #expect(!lookup.hasIcon(lookup.entry(for: "com.example.zero")))
    }
}
