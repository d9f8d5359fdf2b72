import DefaultsCore
import Foundation
import TestThreads
import Testing

/// The journal entry's one form, and the writer's name as people read it.
@Suite(.ownThreads) struct JournalEntryTests {
    static func connection(command: String?, executable: String?, client: String? = nil) -> Origin {
        var origin = Origin(pid: 4242, uid: 1000, connection: 7, client: client)
        origin.command = command
        origin.executable = executable
        return origin
    }

    @Test func theWriterIsNamedAsAPersonKnowsIt() {
        // The kernel cuts a process name at 15 bytes: the executable's name is whole.
        #expect(Self.connection(command: "defaultsd-setti", executable: "/usr/bin/defaultsd-settings").writerName == "defaultsd-settings")
        #expect(Self.connection(command: "firefox", executable: "/usr/lib/firefox/firefox").writerName == "firefox")
        // A script names itself; its interpreter's executable does not start with that name.
        #expect(Self.connection(command: "backup.py", executable: "/usr/bin/python3.11").writerName == "backup.py")
        #expect(Self.connection(command: nil, executable: nil, client: "Settings").writerName == "Settings")
        #expect(Self.connection(command: nil, executable: nil).writerName == "pid 4242")
        #expect(Origin.file.writerName == "file")
        #expect(Origin.roaming(host: "ada-laptop").writerName == "ada-laptop")
        #expect(Origin.roaming(host: nil).writerName == "roaming")
    }

    @Test func aWriterIsFoundByAnyOfItsNames() {
        let settings = Self.connection(command: "defaultsd-setti", executable: "/usr/bin/defaultsd-settings", client: "Settings")
        for name in ["defaultsd-settings", "defaultsd-setti", "/usr/bin/defaultsd-settings", "Settings", "connection"] {
            #expect(settings.isWriter(named: name), "\(name)")
        }
        #expect(!settings.isWriter(named: "settings") && !settings.isWriter(named: "file"))
        #expect(Origin.roaming(host: "ada-laptop").isWriter(named: "ada-laptop") && Origin.roaming(host: "ada-laptop").isWriter(named: "roaming"))
    }

    /// An entry written and read again is the same entry: in a file (no domain), in an answer
    /// (with it), a by-host domain, a secure change, a revert's origin.
    @Test func anEntryReadsBackAsWritten() throws {
        var revert = Self.connection(command: "defaults", executable: "/usr/bin/defaults")
        revert.revert = 12
        let entries = [
            JournalEntry(
                id: 12, time: Date(timeIntervalSince1970: 1_800_000_000_123_000.0 / 1_000_000), domain: try DomainName("com.example.app"), key: "warp.factor",
                change: .values(old: .real(5), new: .integer(9)), origin: revert),
            JournalEntry(
                id: 3, time: Date(timeIntervalSince1970: 1_800_000_001), domain: try DomainName("com.example.app", host: .current), key: "when",
                change: .values(old: nil, new: .date(Date(timeIntervalSince1970: 1_800_000_000))), origin: .roaming(host: "ada-laptop")),
            JournalEntry(
                id: 4, time: Date(timeIntervalSince1970: 1_800_000_002), domain: try DomainName("com.example.app"), key: "password",
                change: .secure, origin: .file),
        ]
        for entry in entries {
            var answer = JSONWriter()
            entry.encode(into: &answer, withDomain: true)
            #expect(JournalEntry(json: try JSONParser.parse(answer.bytes), domain: nil) == entry)
        }
        var lines = JSONWriter()
        JournalEntry.encodeLines(entries, into: &lines)
        let text = String(decoding: lines.bytes, as: UTF8.self)
        #expect(text.hasPrefix(#"{"id":12,"time":"2027-01-15T08:00:00.123Z","key":"warp.factor","old":5.0,"new":9,"writer":"defaults","origin":{"pid":4242,"uid":1000,"connection":7,"command":"defaults","executable":"/usr/bin/defaults","revert":12}}"# + "\n"))
        #expect(text.contains(#""key":"password","secure":true,"writer":"file","origin":{"source":"file"}}"#))
        let read = text.split(separator: "\n").map { JournalEntry(json: try! JSONParser.parse(String($0)), domain: try! DomainName("com.example.app")) }
        #expect(read[0] == entries[0] && read[2] == entries[2])
        #expect(read[1]?.domain.isCurrentHost == false, "a file line has no host: its file's domain is the entry's")
    }
}
