import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// A domain file left in a state the daemon cannot take in, in place of the daemon's own file:
/// the write after it is durable within the stated time, other domains keep working, the stop
/// finishes, and the file is kept aside as `.rejected-<time>` while the last good state goes
/// back in its place. Each state was once a `synchronize` that never answered.
@Suite(.ownThreads) struct TornFileTests {
    static let domain = "com.example.zero"
    /// The watcher's torn delay (1 s) and the write-behind's longest deferral (3 s), with room.
    static let answerWithin: Duration = .seconds(5)

    /// Each state, made over the daemon's file at `path` the way a person or a crash makes it.
    static let states: [(name: String, make: @Sendable (String) -> Void)] = [
        ("0 bytes (O_TRUNC, then a crash)", { path in close(open(path, O_WRONLY | O_TRUNC)) }),
        ("cut short mid-element, in place", { path in
            let whole = FileManager.default.contents(atPath: path) ?? Data()
            let fd = open(path, O_WRONLY | O_TRUNC)
            whole.prefix(whole.count / 2).withUnsafeBytes { _ = write(fd, $0.baseAddress!, $0.count) }
            close(fd)
        }),
        ("a FIFO renamed over it", { path in
            mkfifo(path + ".fifo", 0o600)
            rename(path + ".fifo", path)
        }),
        ("grown past the size cap, in place", { path in
            let fd = open(path, O_WRONLY)
            ftruncate(fd, off_t(PropertyListLimits.maximumFileBytes + 1))
            close(fd)
        }),
        ("removed, then a directory in its place", { path in
            unlink(path)
            mkdir(path, 0o700)
        }),
    ]

    @Test(arguments: 0..<states.count)
    func theWriteAfterItIsDurableAndTheStopFinishes(state: Int) throws {
        let (name, make) = Self.states[state]
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"apply","domain":"\#(Self.domain)","set":{"rank":"Ensign","hull":"NCC-1701"}}"#)
            == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        let path = daemon.storagePath + "/" + Self.domain + ".plist"
        make(path)

        _ = try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"warpFactor","value":9}"#)
        let started = ContinuousClock.now
        #expect(try client.request(#"{"op":"synchronize"}"#, timeout: 10) == #"{"ok":true}"#, "\(name)")
        #expect(ContinuousClock.now - started < Self.answerWithin, "\(name)")

        // Other domains keep working.
        let other = try daemon.connect()
        #expect(try other.request(#"{"op":"set","domain":"com.example.other","key":"k","value":1}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try other.request(#"{"op":"synchronize"}"#, timeout: 10) == #"{"ok":true}"#, "\(name)")

        // The file holds what memory holds, and what was in its place is kept aside.
        let memory = try JSONParser.parse(try client.request(#"{"op":"get","domain":"\#(Self.domain)"}"#))["value"]
        let stored = try #require(try daemon.storedValues(Self.domain), "\(name)")
        #expect(memory == WireValue.json(.dictionary(stored)), "\(name)")
        #expect(stored["warpFactor"] == .integer(9), "\(name)")
        #expect(daemon.storageListing().contains { $0.hasPrefix(Self.domain + ".plist.rejected-") }, "\(name)")

        let stopping = ContinuousClock.now
        #expect(daemon.terminate() == 0, "\(name)")
        #expect(ContinuousClock.now - stopping < .seconds(10), "\(name)")
    }

    /// A 0-byte file nobody finishes is torn: the last good state is back on disk within the
    /// stated time, without any write to wake the daemon, so a program starting after a crash
    /// reads it.
    @Test func anEmptyFileIsReplacedByTheLastGoodStateAtOnce() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"rank","value":"Ensign"}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        let path = daemon.storagePath + "/" + Self.domain + ".plist"
        close(open(path, O_WRONLY | O_TRUNC))
        #expect(daemon.waitForLog("was not taken in", timeout: 5))
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(try daemon.storedValues(Self.domain) == ["rank": .string("Ensign")])
        #expect(client.pendingEvents.isEmpty, "memory did not change, so nothing is announced")
    }
}
