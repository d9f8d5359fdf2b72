import DaemonTestSupport
import Foundation
import TestThreads
import Testing

@testable import SettingsApp

/// Reading a desktop entry is work linear in its text: an entry of about n and 8n bytes, made of
/// long lines, many keys, many localised names, many groups or long escapes, takes CPU time that
/// grows by at most ``WorkGrowth/bound``, and gives the names and icon it should.
@Suite(.ownThreads) struct DesktopEntryWorkTests {
    /// The size of the small entry, in bytes: 8 times it is the largest entry the lookup reads
    /// (`DesktopEntry.maximumBytes`), so the large input is the worst a file can make it do.
    static let n = DesktopEntry.maximumBytes / WorkGrowth.factor

    /// As ``DesktopEntryLookup`` reads a file: its bytes as UTF-8, then parsed.
    static func read(_ bytes: [UInt8]) -> DesktopEntry? {
        DesktopEntry(parsing: String(decoding: bytes, as: UTF8.self))
    }

    struct Shape: Sendable, CustomTestStringConvertible {
        let name: String
        /// The entry of about the given size in bytes.
        let input: @Sendable (Int) -> WorkInput
        /// The entry it gives, for the count of its input; nil when it has no name.
        let expected: @Sendable (Int) -> DesktopEntry?

        init(_ name: String, _ input: @escaping @Sendable (Int) -> WorkInput, _ expected: @escaping @Sendable (Int) -> DesktopEntry?) {
            self.name = name
            self.input = input
            self.expected = expected
        }

        var testDescription: String { name }
    }

    static let shapes: [Shape] = [
        Shape("many keys", { .filling($0, "[Desktop Entry]\n", numbered: { i in "Key\(i)=value\n" }, "Name=App\n") }, { _ in namedApp }),
        Shape("many localised names", { .filling($0, "[Desktop Entry]\nName=App\n", numbered: { i in "Name[l\(i)]=App \(i)\n" }, "") }, { localizedNames($0) }),
        Shape("one localised name repeated", { .filling($0, "[Desktop Entry]\nName=App\n", "Name[fr]=Appli\n", "") }, { _ in DesktopEntry(names: ["": "App", "fr": "Appli"]) }),
        Shape("a long line", { .filling($0, "[Desktop Entry]\nName=", "a", "\n") }, { DesktopEntry(names: ["": String(repeating: "a", count: $0)]) }),
        // The parser keeps a value's escapes as written.
        Shape("a long value of escapes", { .filling($0, "[Desktop Entry]\nName=", #"\s\n\t\\"#, "\n") }, { DesktopEntry(names: ["": String(repeating: #"\s\n\t\\"#, count: $0)]) }),
        Shape("a long localised key", { .filling($0, "[Desktop Entry]\nName=App\nName[", "x", "]=Appli\n") }, { DesktopEntry(names: ["": "App", String(repeating: "x", count: $0): "Appli"]) }),
        Shape("one character of many combining marks", { .filling($0, "[Desktop Entry]\nName=a", "\u{301}", "\n") }, { DesktopEntry(names: ["": "a" + String(repeating: "\u{301}", count: $0)]) }),
        Shape("many groups", { .filling($0, "", numbered: { i in "[Group \(i)]\nName=Other\n" }, "[Desktop Entry]\nName=App\n") }, { _ in namedApp }),
        Shape("many [Desktop Entry] groups", { .filling($0, "", "[Desktop Entry]\nName=App\n", "") }, { _ in namedApp }),
        Shape("many comments", { .filling($0, "[Desktop Entry]\n", "# a comment\n", "Name=App\n") }, { _ in namedApp }),
        Shape("many blank lines", { .filling($0, "[Desktop Entry]\n", "\r\n", "Name=App\n") }, { _ in namedApp }),
        Shape("a line of spaces", { .filling($0, "[Desktop Entry]\nName=App\n", " ", "\n") }, { _ in namedApp }),
        Shape("spaces before the =", { .filling($0, "[Desktop Entry]\nName", " ", "=App\n") }, { _ in namedApp }),
        Shape("spaces and tabs after the =", { .filling($0, "[Desktop Entry]\nName=", " \t", "App\n") }, { _ in namedApp }),
        Shape("a line of equals signs", { .filling($0, "[Desktop Entry]\nName=App\n", "=", "\n") }, { _ in namedApp }),
        Shape("many icons", { .filling($0, "[Desktop Entry]\nName=App\n", "Icon=icon\n", "") }, { _ in DesktopEntry(names: ["": "App"], icon: "icon") }),
        Shape("a long icon name", { .filling($0, "[Desktop Entry]\nName=App\nIcon=", "i", "\n") }, { DesktopEntry(names: ["": "App"], icon: String(repeating: "i", count: $0)) }),
        Shape("no name after many keys", { .filling($0, "[Desktop Entry]\n", numbered: { i in "Key\(i)=value\n" }, "") }, { _ in nil }),
    ]

    @Test(arguments: Self.shapes)
    func workGrowsLinearly(_ shape: Shape) {
        let small = shape.input(Self.n)
        let large = shape.input(WorkGrowth.factor * Self.n)
        for input in [small, large] {
            #expect(Self.read(input.bytes) == shape.expected(input.count), "\(shape.name), \(input.bytes.count) bytes")
        }
        let growth = WorkGrowth.measure(small: small.bytes, large: large.bytes) { Self.read($0) }
        #expect(growth.ratio <= WorkGrowth.bound, "\(shape.name): \(growth)")
    }
}

/// The entry of `Name=App` alone.
private let namedApp = DesktopEntry(names: ["": "App"])

/// `Name=App` and `Name[l0]=App 0` … `Name[l<count - 1>]`.
private func localizedNames(_ count: Int) -> DesktopEntry {
    var names = ["": "App"]
    for index in 0..<count { names["l\(index)"] = "App \(index)" }
    return DesktopEntry(names: names)
}
