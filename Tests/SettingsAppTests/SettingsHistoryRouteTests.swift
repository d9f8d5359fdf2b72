import DaemonTestSupport
import DefaultsCore
import Foundation
import Hummingbird
import HummingbirdTesting
import LineSocket
import LocalServices
import Testing

@testable import SettingsApp

/// The history routes over a real daemon and its change journal: the entries as the page shows
/// them, Restore, a secure key's entries without their values, and a daemon that keeps no journal.
extension SettingsRouteTests {
    /// The `defaults` command built beside the app.
    static let defaultsTool = URL(fileURLWithPath: SettingsAppProcess.binary).deletingLastPathComponent()
        .appendingPathComponent("defaults").path

    /// Runs `defaults` beside `daemon` in a process of its own, as a person in a terminal does:
    /// a writer the daemon names `defaults`.
    static func runDefaults(_ arguments: [String], on daemon: DaemonProcess) throws {
        let run = try FinishedRun.run(defaultsTool, arguments, environment: daemon.clientEnvironment)
        guard run.status == 0 else { throw LineSocket.Failure(description: "defaults \(arguments.joined(separator: " ")): \(run.output)") }
    }

    /// The daemon's own `history` answer for `domain`, oldest first: the ids, times and writers
    /// the app passes on.
    static func journalEntries(_ domain: String, on daemon: DaemonProcess) throws -> [JSON] {
        let answer = try JSONParser.parse(Array(try daemon.connect().request(#"{"op":"history","domain":"\#(domain)"}"#).utf8))
        guard case .array(let entries)? = answer["entries"] else { throw LineSocket.Failure(description: "no entries: \(answer)") }
        return entries
    }

    /// The answer's JSON; `null` when it is not JSON (which no expected answer is).
    static func body(_ response: TestResponse) -> JSON { (try? JSONParser.parse(Array(response.body.readableBytesView))) ?? .null }

    @Test("a domain's history lists each change newest first, with its writer and its values as the page shows them; Restore returns a key to the value an entry replaced, type and all")
    func theHistoryListsEachChangeAndRestoreReturnsTheValueAnEntryReplaced() async throws {
        let domain = "com.example.history"
        let daemon = try DaemonProcess()
        let watcher = try daemon.connect()
        #expect(try watcher.request(#"{"op":"subscribe","domains":["\#(domain)"]}"#) == #"{"ok":true,"generations":{"\#(domain)":0}}"#)
        // Two writers: `defaults` sets an integer, a person's hand edit of the file makes it a
        // real (once the daemon's own write is on disk, so the edit comes after it), and
        // `defaults` removes it.
        try Self.runDefaults(["write", domain, "volume", "-int", "3"], on: daemon)
        #expect(try watcher.readEvent().hasPrefix(#"{"event":"didChange","domain":"\#(domain)","generation":1,"changes":{"volume":3},"#))
        #expect(try watcher.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        let file = daemon.storagePath + "/\(domain).plist"
        try PropertyListFile.encode(["volume": .real(7.5)], format: .xml).write(to: URL(fileURLWithPath: file + ".new"))
        #expect(rename(file + ".new", file) == 0)
        #expect(try watcher.readEvent()
            == #"{"event":"didChange","domain":"\#(domain)","generation":2,"changes":{"volume":7.5},"origin":{"source":"file"}}"#)
        try Self.runDefaults(["delete", domain, "volume"], on: daemon)
        let recorded = try Self.journalEntries(domain, on: daemon)
        try #require(recorded.count == 3, "\(recorded)")
        let times = recorded.map { $0["time"] ?? .null }

        try await withRoutes(over: daemon) { client in
            let removed: JSON = ["id": 3, "time": times[2], "writer": "defaults", "key": "volume", "old": ["type": "real", "text": "7.5"]]
            let edited: JSON = [
                "id": 2, "time": times[1], "writer": "file", "key": "volume",
                "old": ["type": "integer", "text": "3"], "new": ["type": "real", "text": "7.5"],
            ]
            let set: JSON = ["id": 1, "time": times[0], "writer": "defaults", "key": "volume", "new": ["type": "integer", "text": "3"]]
            let expected: JSON = [
                "domain": .string(domain), "bundle": false, "title": .string(domain), "journal": true, "limit": 1000,
                "entries": [removed, edited, set],
            ]
            try await client.execute(uri: "/api/domains/\(domain)/history", method: .get) { response in
                #expect(response.status == .ok)
                #expect(Self.body(response) == expected)
            }

            // Restore the removal: the real comes back. Restore the hand edit: the integer.
            try await client.execute(
                uri: "/api/domains/\(domain)/history/restore", method: .post, body: ByteBuffer(string: #"{"to":3,"key":"volume"}"#)
            ) { response in
                #expect(response.status == .ok)
                #expect(Self.body(response) == ["ok": true])
            }
            #expect(try daemon.connect().request(#"{"op":"get","domain":"\#(domain)","key":"volume"}"#) == #"{"ok":true,"value":7.5,"generation":4}"#)
            try await client.execute(
                uri: "/api/domains/\(domain)/history/restore", method: .post, body: ByteBuffer(string: #"{"to":2,"key":"volume"}"#)
            ) { response in
                #expect(response.status == .ok)
            }
            #expect(try daemon.connect().request(#"{"op":"get","domain":"\#(domain)","key":"volume"}"#) == #"{"ok":true,"value":3,"generation":5}"#)

            // Each restore is a change of its own, at the top, saying which entry it returned to.
            let again = try Self.journalEntries(domain, on: daemon)
            try #require(again.count == 5, "\(again)")
            let secondRestore: JSON = [
                "id": 5, "time": again[4]["time"] ?? .null, "writer": again[4]["writer"] ?? .null, "key": "volume",
                "old": ["type": "real", "text": "7.5"], "new": ["type": "integer", "text": "3"], "revert": 2,
            ]
            let firstRestore: JSON = [
                "id": 4, "time": again[3]["time"] ?? .null, "writer": again[3]["writer"] ?? .null, "key": "volume",
                "new": ["type": "real", "text": "7.5"], "revert": 3,
            ]
            try await client.execute(uri: "/api/domains/\(domain)/history", method: .get) { response in
                #expect(Self.body(response)["entries"] == [secondRestore, firstRestore, removed, edited, set])
            }

            // A body without an entry's id is refused, and nothing changes.
            try await client.execute(
                uri: "/api/domains/\(domain)/history/restore", method: .post, body: ByteBuffer(string: #"{"key":"volume"}"#)
            ) { response in
                #expect(response.status == .badRequest)
                #expect(Self.body(response)
                    == ["ok": false, "error": ["code": "bad_request", "message": "expected to (an entry's id) and key"]])
            }
            #expect(try Self.journalEntries(domain, on: daemon).count == 5)
        }
        _ = watcher
    }

    @Test("a secure key's changes are listed without a value, before or after, even one written before its bundle was installed; its note says when and by what")
    func aSecureKeysChangesAreListedWithoutTheirValues() async throws {
        let domain = SettingsBrowserTests.bridge
        let daemon = try DaemonProcess()
        // Written before the bundle that makes the key secure is installed, so the journal
        // holds the value itself.
        try Self.runDefaults(["write", domain, "authorizationCode", "SECRET-0"], on: daemon)
        try SettingsBrowserTests.Stage.register(domain, path: SharedData.bridgeControlBundle, on: daemon)
        try Self.runDefaults(["write", domain, "authorizationCode", "SECRET-1"], on: daemon)
        try Self.runDefaults(["write", domain, "officer", "Kirk"], on: daemon)
        let recorded = try Self.journalEntries(domain, on: daemon)
        try #require(recorded.count == 3, "\(recorded)")
        let ids = recorded.map { $0["id"] ?? .null }
        let times = recorded.map { $0["time"] ?? .null }
        guard case .integer(let secureChange) = ids[1] else {
            Issue.record("no id: \(recorded)")
            return
        }

        try await withRoutes(over: daemon) { client in
            let expected: JSON = [
                "domain": .string(domain), "bundle": true, "title": .string(domain), "journal": true, "limit": 1000,
                "entries": [
                    ["id": ids[2], "time": times[2], "writer": "defaults", "key": "officer", "new": ["type": "string", "text": "Kirk"]],
                    ["id": ids[1], "time": times[1], "writer": "defaults", "key": "authorizationCode", "secure": true],
                    ["id": ids[0], "time": times[0], "writer": "defaults", "key": "authorizationCode", "secure": true],
                ],
            ]
            try await client.execute(uri: "/api/domains/\(domain)/history", method: .get) { response in
                #expect(response.status == .ok)
                #expect(!String(buffer: response.body).contains("SECRET"))
                #expect(Self.body(response) == expected)
            }
            let note: JSON = ["time": times[1], "writer": "defaults"]
            try await client.execute(uri: "/api/apps/\(domain)", method: .get) { response in
                #expect(!String(buffer: response.body).contains("SECRET"))
                #expect(Self.body(response)["lastChanges"]?[domain]?["authorizationCode"] == note)
            }
            try await client.execute(uri: "/api/domains/\(domain)", method: .get) { response in
                #expect(!String(buffer: response.body).contains("SECRET"))
                #expect(Self.body(response)["lastChanges"]?["authorizationCode"] == note)
            }
            // The value a secure change replaced was never recorded: nothing to restore, and nothing changes.
            try await client.execute(
                uri: "/api/domains/\(domain)/history/restore", method: .post,
                body: ByteBuffer(string: #"{"to":\#(secureChange),"key":"authorizationCode"}"#)
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(Self.body(response) == [
                    "ok": false,
                    "error": [
                        "code": "not_recorded",
                        "message": "authorizationCode is a secure value, whose earlier values are never recorded; it is left as it is",
                    ],
                ])
            }
            #expect(try Self.journalEntries(domain, on: daemon).count == 3)
        }
    }

    @Test("a daemon that keeps no journal: the history says so, rows have no notes, and Restore is refused with the reason")
    func withoutAJournalTheHistorySaysSo() async throws {
        let domain = "com.example.history"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("journal-off-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try #"{ "journal": { "enabled": false } }"#.write(toFile: folder + "/defaultsd.json", atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: ["--config", folder + "/defaultsd.json"])
        try Self.runDefaults(["write", domain, "volume", "-int", "3"], on: daemon)
        // The daemon's own refusal, which the page is given as it stands.
        let refusal = try JSONParser.parse(
            Array(try daemon.connect().request(#"{"op":"revert","domain":"\#(domain)","to":1,"key":"volume"}"#).utf8))
        #expect(refusal["error"]?["code"] == "no_journal", "\(refusal)")
        try await withRoutes(over: daemon) { client in
            try await client.execute(uri: "/api/domains/\(domain)/history", method: .get) { response in
                #expect(response.status == .ok)
                #expect(Self.body(response)
                    == ["domain": .string(domain), "bundle": false, "title": .string(domain), "journal": false, "entries": []])
            }
            try await client.execute(uri: "/api/domains/\(domain)", method: .get) { response in
                #expect(Self.body(response)["lastChanges"] == .object([:]))
            }
            try await client.execute(
                uri: "/api/domains/\(domain)/history/restore", method: .post, body: ByteBuffer(string: #"{"to":1,"key":"volume"}"#)
            ) { response in
                #expect(response.status == .unprocessableContent)
                #expect(Self.body(response) == ["ok": false, "error": refusal["error"] ?? .null])
            }
        }
        #expect(try daemon.connect().request(#"{"op":"get","domain":"\#(domain)","key":"volume"}"#) == #"{"ok":true,"value":3,"generation":1}"#)
    }
}
