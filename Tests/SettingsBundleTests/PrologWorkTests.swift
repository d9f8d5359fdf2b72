import Foundation
@testable import SettingsBundles
import TestThreads
import Testing

/// The XML prolog scan does work linear in its text: prolog items of every kind repeated n and
/// 8n times cost at most about 8 times as much, counted in bytes examined, and a bundle page made
/// of 240 KB of them is read at once.
@Suite(.ownThreads) struct PrologWorkTests {
    /// Texts whose prolog repeats one item `count` times, each shape one a quadratic scan would
    /// choke on: bare `<!>`, DOCTYPEs whose `[` is never closed, unterminated comments after many
    /// items, processing instructions, and whitespace between items.
    static let shapes: [(name: String, text: @Sendable (Int) -> String)] = [
        ("<!>", { String(repeating: "<!>", count: $0) }),
        ("<!DOCTYPE x> then an open [", { String(repeating: "<!DOCTYPE x>", count: $0) + "<![" }),
        ("<!-- --> then an open comment", { String(repeating: "<!-- c -->", count: $0) + "<!--" }),
        ("<?pi?>", { String(repeating: "<?pi x?>\n", count: $0) + "<plist/>" }),
        ("whitespace", { String(repeating: " \n\t", count: $0) + "<!" }),
    ]

    @Test(arguments: 0..<shapes.count)
    func workGrowsLinearly(shape: Int) {
        let (name, text) = Self.shapes[shape]
        let small = Prolog(text(2_000)).bytesExamined
        let large = Prolog(text(16_000)).bytesExamined
        #expect(small > 0, "\(name)")
        #expect(Double(large) <= 8.2 * Double(small), "\(name): \(small) bytes examined for n, \(large) for 8n")
    }

    @Test func bangItemsAreReadAsDoctypes() {
        let prolog = Prolog("<?xml version=\"1.0\"?>\n<!>\n<!DOCTYPE plist [ <!ENTITY x \">\"> ]>\n<plist/>")
        #expect(prolog.items == [.declaration, .doctype, .doctype])
        #expect(prolog.problem == nil)
    }

    @Test func aPageOf240KilobytesOfBangItemsLoadsAtOnce() throws {
        let bundle = try TemporaryBundle()
        try bundle.write("Root.plist", text: String(repeating: "<!>", count: 80_000))
        try bundle.write("en.lproj/Root.strings", text: String(repeating: "<!>", count: 80_000))
        let started = ContinuousClock.now
        let loaded = try SettingsBundle.load(at: bundle.url)
        // A scan quadratic in the items would examine some 10 GB here, minutes in a debug build;
        // a linear one takes a fraction of a second, and up to about one while other tests load
        // the machine. The work itself is counted in `workGrowsLinearly`.
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(loaded.diagnostics.contains { $0.code == .plistUnparseable })
    }
}
