import DaemonTestSupport
import DefaultsCore
import Foundation
import Testing
import WebDriver

/// The notes of when and by what a key last changed, the history and Restore, in Chromium over
/// the real app and the real daemon with its change journal.
extension SettingsBrowserTests {
    /// The history's entries as a person reads them, newest first, one line each:
    /// `key | before → after | when | by what`.
    static let historyLines = """
        return [...document.querySelectorAll('.history-entry')].map((entry) => [entry.dataset.key,
          entry.querySelector('.change').textContent, entry.querySelector('time').textContent,
          entry.querySelector('.writer').textContent].join(' | ')).join('\\n');
        """

    @Test("a value `defaults write` changed is noted beside its row with when and by what; the history lists the change, and Restore brings back the value it replaced, on the page and in the daemon")
    func aChangeIsNotedListedAndRestored() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        try await stage.open("/apps/\(Self.bridge)")
        let b = stage.browser
        try SettingsRouteTests.runDefaults(["write", Self.bridge, "officer", "Jean-Luc Picard"], on: stage.daemon)
        try SettingsRouteTests.runDefaults(["write", Self.bridge, "officer", "Kathryn Janeway"], on: stage.daemon)
        try await b.wait(
            until: """
                return document.querySelector('#row-Root_plist-1-input').value === 'Kathryn Janeway'
                  && document.querySelector('#row-Root_plist-1 .last-change')?.textContent === 'changed just now by defaults'
                """, timeout: 2, "the new value and its note")
        // A row nobody changed has no note.
        #expect(try await b.run("return document.querySelector('#row-Root_plist-3 .last-change') === null") as? Bool == true)

        try await b.click("#history-link")
        try await b.wait(until: "return document.querySelector('.history') !== null", "the history")
        #expect(try await b.text("h1") == "History")
        #expect(try await b.text("#back-title") == Self.bridge)
        #expect(try await b.run(Self.historyLines) as? String == """
            officer | Jean-Luc Picard → Kathryn Janeway | just now | by defaults
            officer | not set → Jean-Luc Picard | just now | by defaults
            """)

        // The newest entry's Restore: Janeway replaced Picard, so Picard comes back. The restore
        // is a change of its own, shown at the top by the live update.
        try await b.click(".history-entry .restore")
        try await b.wait(
            until: "return document.querySelector('.history-entry .change')?.textContent === 'Kathryn Janeway → Jean-Luc Picard'",
            "the restore at the top of the history")
        #expect(try await b.text(".history-entry .writer") == "by defaultsd-settings")
        #expect(try await b.text(".history-entry .restored") == "restored")
        #expect(try await b.run("return document.querySelectorAll('.history-entry').length") as? Int == 3)
        let answer = try JSONParser.parse(Array(try stage.request(#"{"op":"get","domain":"\#(Self.bridge)","key":"officer"}"#).utf8))
        #expect(answer["value"] == "Jean-Luc Picard", "\(answer)")

        try await b.click("#back")
        try await b.wait(
            until: "return document.querySelector('#row-Root_plist-1-input')?.value === 'Jean-Luc Picard'", "the restored value on the pane")
        #expect(try await b.text("#row-Root_plist-1 .last-change") == "changed just now by defaultsd-settings")
    }

    @Test("a secure key's change shows beside its row and in the history, which offers no Restore for it, and its value is nowhere in the page, its text or its API answers")
    func aSecureKeysChangeIsListedWithoutItsValue() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        let secret = "SECRET-31337"
        try SettingsRouteTests.runDefaults(["write", Self.bridge, "authorizationCode", secret + "-1"], on: stage.daemon)
        try SettingsRouteTests.runDefaults(["write", Self.bridge, "authorizationCode", secret + "-2"], on: stage.daemon)
        try await stage.open("/apps/\(Self.bridge)")
        let b = stage.browser
        #expect(try await b.text("#row-Root_plist-2 .last-change") == "changed just now by defaults")
        var everything = [try await b.pageSource]
        everything.append(try await b.run("return document.body.innerText") as? String ?? "")

        // The history's own address, as a bookmark opens it.
        try await stage.open("/history/\(Self.bridge)")
        #expect(try await b.text("h1") == "History")
        #expect(try await b.run(Self.historyLines) as? String == """
            authorizationCode | secure value changed | just now | by defaults
            authorizationCode | secure value changed | just now | by defaults
            """)
        #expect(try await b.run("return document.querySelectorAll('.history-entry .restore').length") as? Int == 0)
        everything.append(try await b.pageSource)
        everything.append(try await b.run("return document.body.innerText") as? String ?? "")

        for path in ["/api/domains/\(Self.bridge)/history", "/api/apps/\(Self.bridge)", "/api/domains/\(Self.bridge)"] {
            let answer = try LoopbackHTTP.send(port: stage.app.port, "GET", stage.app.prefix + path, headers: ["Cookie": stage.app.cookie])
            #expect(answer.status == 200, "\(path)")
            everything.append(answer.body)
        }
        #expect(everything.allSatisfy { !$0.contains(secret) })
        #expect(everything.joined().contains("authorizationCode"), "the history and the API answers were read")
    }
}
