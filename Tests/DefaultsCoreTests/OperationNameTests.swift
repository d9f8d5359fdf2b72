@testable import DefaultsCore
import TestThreads
import Testing

/// A request's `op` is matched once, when the line is read, against the one list of operations;
/// clients write it from the same list.
@Suite(.ownThreads) struct OperationNameTests {
    func operation(_ line: String) throws -> OperationName? {
        OperationName(of: try #require(try JSONParser.parseObjectMembers(Array(line.utf8))))
    }

    @Test(arguments: OperationName.allCases)
    func everyOperationIsFoundByItsName(_ name: OperationName) throws {
        #expect(try operation(#"{"op":"\#(name.rawValue)","domain":"com.x"}"#) == name)
    }

    /// The bytes of a plain name are matched without a `String`: every name, and nothing that is
    /// a name's prefix, extension or another case of it.
    @Test func theBytesOfEachNameAreMatchedDirectly() {
        func operation(_ text: String) -> OperationName? {
            let bytes = Array(text.utf8)
            return bytes.withUnsafeBytes { OperationName(utf8: $0) }
        }
        for name in OperationName.allCases { #expect(operation(name.rawValue) == name) }
        for text in ["", "se", "sett", "pin", "Get", "synchronise", "getx"] { #expect(operation(text) == nil) }
    }

    @Test func unknownNamesAndOtherValuesAreNotOperations() throws {
        #expect(try operation(#"{"op":"fly"}"#) == nil)
        #expect(try operation(#"{"op":"sett"}"#) == nil)
        #expect(try operation(#"{"op":"Set"}"#) == nil)
        #expect(try operation(#"{"op":"synchronise"}"#) == nil)
        #expect(try operation(#"{"op":""}"#) == nil)
        #expect(try operation(#"{"op":7}"#) == nil)
        #expect(try operation(#"{"domain":"com.x"}"#) == nil)
    }

    @Test func aNameWrittenWithEscapesIsStillFound() throws {
        #expect(try operation(#"{"op":"s\u0065t"}"#) == .set)
        #expect(try operation(#"{"\u006fp":"get"}"#) == .get)
        #expect(try operation(#"{"op":"fly","op":"ping"}"#) == .ping)
    }

    @Test func requestsWrittenFromTheListReadBackAsTheirOperation() throws {
        for name in OperationName.allCases {
            #expect(try operation(JSON.requestLine(name, ["domain": "com.x"])) == name)
        }
        #expect(JSON.requestLine(.set, ["value": 1, "key": "k", "domain": "com.x"]) == #"{"op":"set","domain":"com.x","key":"k","value":1}"#)
    }
}
