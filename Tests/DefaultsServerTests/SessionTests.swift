@testable import DefaultsCore
@testable import DefaultsServer
import TestThreads
import Testing

/// The domain a request names, with its host, read through a connection's ``Session``.
@Suite(.ownThreads) struct SessionTests {
    func request(_ line: String) throws -> Request {
        let members = try #require(try JSONParser.parseObjectMembers(Array(line.utf8)))
        guard case .success(let request) = Request.parse(members) else { throw DefaultsError(.invalidParameter, line) }
        return request
    }

    @Test func theDomainAndHostARequestNames() throws {
        let session = Session(id: 1, origin: Origin(pid: 0, uid: 0, connection: 1))
        let domain = { (line: String) throws -> DomainName in try session.domain(of: try self.request(line)) }
        #expect(try domain(#"{"op":"get","domain":"com.a"}"#) == DomainName("com.a"))
        #expect(try domain(#"{"op":"get","domain":"com.a","host":"current"}"#) == DomainName("com.a", host: .current))
        #expect(try domain(#"{"op":"get","domain":"c\u006fm.a"}"#) == DomainName("com.a"))
        #expect(throws: DefaultsError.self) { try domain(#"{"op":"get","domain":"com/a"}"#) }
        #expect(throws: DefaultsError.self) { try domain(#"{"op":"get","domain":"com.a","host":"elsewhere"}"#) }
        #expect(throws: DefaultsError.self) { try domain(#"{"op":"get"}"#) }
    }
}
