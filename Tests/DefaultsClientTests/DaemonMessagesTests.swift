import DefaultsCore
import TestThreads
import Testing

@testable import DefaultsClient

/// The client's reading of the daemon's lines, apart from the connection: a `didChange` as a
/// typed change, members that are not values set apart, and the wire's origin as observers see it.
@Suite(.ownThreads) struct DaemonMessagesTests {
    static func line(_ text: String) throws -> JSON { try JSONParser.parse(text) }

    @Test("a didChange: its domain, generation, new values, removals (null) and origin; a member that is not a value is set apart")
    func didChange() throws {
        let event = try #require(DaemonMessages.didChange(try Self.line(
            #"{"event":"didChange","domain":"com.example.app","generation":7,"changes":{"a":1,"b":null,"c":{"$date":"not a date"}},"origin":{"source":"roaming","host":"desktop"}}"#)))
        #expect(event.domain == (try DomainName("com.example.app")))
        #expect(event.generation == 7)
        #expect(event.changes.count == 2)
        #expect(event.changes["a"] == .some(.integer(1)))
        #expect(event.changes["b"] == .some(nil))
        #expect(event.skipped.map(\.key) == ["c"])
        #expect(DaemonMessages.changeOrigin(event.origin, ownConnection: 3) == .roaming(host: "desktop"))
    }

    @Test("other events, and a didChange without a valid domain or generation, are not a change")
    func notAChange() throws {
        #expect(DaemonMessages.didChange(try Self.line(#"{"event":"bundleDefaultsChanged","domain":"com.example.app"}"#)) == nil)
        #expect(DaemonMessages.didChange(try Self.line(#"{"event":"didChange","domain":"no/slashes/allowed","generation":1,"changes":{}}"#)) == nil)
        #expect(DaemonMessages.didChange(try Self.line(#"{"event":"didChange","domain":"com.example.app","changes":{}}"#)) == nil)
        #expect(DaemonMessages.didChange(try Self.line(#"{"ok":true,"generation":1}"#)) == nil)
    }

    @Test("origins: this connection's own write (no source, a connection number) is local, another's is remote with its writer, file and managed as they are, none or unknown is resynchronized")
    func origins() throws {
        func origin(_ text: String, own: Int64? = 3) throws -> ChangeOrigin {
            DaemonMessages.changeOrigin(Origin(wire: try Self.line(text)), ownConnection: own)
        }
        #expect(try origin(#"{"pid":10,"uid":1000,"connection":3}"#) == .local)
        #expect(try origin(#"{"pid":10,"uid":1000,"connection":4,"client":"defaults"}"#)
            == .remote(.init(pid: 10, uid: 1000, connection: 4, client: "defaults")))
        #expect(try origin(#"{"pid":10,"uid":1000,"connection":3}"#, own: nil) != .local)
        #expect(try origin(#"{"source":"file"}"#) == .file)
        #expect(try origin(#"{"source":"managed"}"#) == .managed)
        #expect(try origin(#"{"source":"telepathy"}"#) == .resynchronized)
        #expect(DaemonMessages.changeOrigin(nil, ownConnection: 3) == .resynchronized)
    }
}
