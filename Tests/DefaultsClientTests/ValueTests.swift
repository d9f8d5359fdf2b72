@testable import DefaultsClient
import DefaultsCore
import DaemonTestSupport
import Foundation
import TestThreads
import Testing
import ValueSyntaxCases

/// The daemon's `value` for a whole domain, as parsed JSON (so `5` and `5.0` stay apart).
func storedJSON(_ daemon: DaemonProcess, _ domain: String) throws -> JSON? {
    let line = try rawRequest(daemon, #"{"op":"get","domain":"\#(domain)"}"#)[0]
    return try JSONParser.parse(line)["value"]
}

func json(_ text: String) throws -> JSON { try JSONParser.parse(text) }

@Suite("Values: typed getters, conversions and refusals", .serialized, .ownThreads)
struct ValueTests {
    @Test("each setter stores its exact property-list type, and object(forKey:) returns Swift-native values")
    func settersAndObjectTypes() throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon))
        let when = Date(timeIntervalSince1970: 1_795_000_000.25)
        defaults.set(5, forKey: "int")
        defaults.set(7.5, forKey: "double")
        defaults.set(Float(2.5), forKey: "float")
        defaults.set(true, forKey: "bool")
        defaults.set("Vulcan", forKey: "string")
        defaults.set(when, forKey: "date")
        defaults.set(Data([0, 1, 2, 255]), forKey: "data")
        defaults.set([1, 2.0, "three", false] as [Any], forKey: "array")
        defaults.set(["inner": ["deep": 1]], forKey: "dict")
        defaults.set(URL(fileURLWithPath: "/tmp/bridge.log"), forKey: "fileURL")
        defaults.set(URL(string: "https://example.com/fleet?ship=1701")!, forKey: "webURL")
        defaults.set(Int64.max, forKey: "int64")
        defaults.set(UInt8(200), forKey: "uint8")
        defaults.set(NSNumber(value: 3), forKey: "nsInt")
        defaults.set(NSNumber(value: true), forKey: "nsBool")
        defaults.set(NSNumber(value: 0.5), forKey: "nsReal")
        #expect(defaults.synchronize())

        // Read-your-writes, with the types Foundation's object(forKey:) returns on Linux.
        #expect(type(of: defaults.object(forKey: "int")!) == Int.self)
        #expect(defaults.object(forKey: "int") as? Int == 5)
        #expect(type(of: defaults.object(forKey: "double")!) == Double.self)
        #expect(defaults.object(forKey: "float") as? Double == 2.5)
        #expect(type(of: defaults.object(forKey: "bool")!) == Bool.self)
        #expect(defaults.object(forKey: "date") as? Date == when)
        #expect(defaults.object(forKey: "data") as? Data == Data([0, 1, 2, 255]))
        let array = try #require(defaults.object(forKey: "array") as? [Any])
        #expect(array.count == 4)
        #expect(type(of: array[0]) == Int.self && type(of: array[1]) == Double.self)
        #expect(array[2] as? String == "three" && array[3] as? Bool == false)
        #expect((defaults.dictionary(forKey: "dict")?["inner"] as? [String: Any])?["deep"] as? Int == 1)

        // What the daemon holds: exact JSON types (integer, real, bool never mixed up).
        let stored = try #require(try storedJSON(daemon, "com.example.BridgeControl"))
        #expect(stored["int"] == .integer(5))
        #expect(stored["double"] == .real(7.5))
        #expect(stored["float"] == .real(2.5))
        #expect(stored["bool"] == .bool(true))
        #expect(stored["string"] == .string("Vulcan"))
        #expect(stored["date"] == (try json(#"{"$date":"2026-11-18T11:06:40.250Z"}"#)))
        #expect(stored["data"] == (try json(#"{"$data":"AAEC/w=="}"#)))
        #expect(stored["array"] == (try json(#"[1,2.0,"three",false]"#)))
        #expect(stored["dict"] == (try json(#"{"inner":{"deep":1}}"#)))
        #expect(stored["fileURL"] == .string("/tmp/bridge.log"))
        #expect(stored["webURL"] == .string("https://example.com/fleet?ship=1701"))
        #expect(stored["int64"] == .integer(Int64.max))
        #expect(stored["uint8"] == .integer(200))
        #expect(stored["nsInt"] == .integer(3))
        #expect(stored["nsBool"] == .bool(true))
        #expect(stored["nsReal"] == .real(0.5))
    }

    @Test("typed getters convert as Apple documents")
    func getterConversions() throws {
        let daemon = try DaemonProcess()
        _ = try rawRequest(daemon, #"""
            {"op":"replaceDomain","domain":"com.example.conversions","values":{"int":12,"real":7.9,"negative":-2.5,"yes":"YES","true":"true","one":"1","no":"NO","abc":"abc","numeric":"12","prefixed":" 12abc","decimal":"7.5","boolTrue":true,"boolFalse":false,"strings":["a","b"],"mixed":["a",1],"path":"~/bridge.log","absolute":"/var/log/bridge.log","web":"https://example.com/a","blob":{"$data":"AAE="},"when":{"$date":"2026-11-21T10:00:00Z"}}}
            """#)
        let defaults = SharedDefaults(configuration: configuration(daemon, appDomain: "com.example.conversions"))

        // number → string
        #expect(defaults.string(forKey: "int") == "12")
        #expect(defaults.string(forKey: "real") == "7.9")
        #expect(defaults.string(forKey: "boolTrue") == "1")
        #expect(defaults.string(forKey: "strings") == nil)
        #expect(defaults.string(forKey: "missing") == nil)
        // string → number; reals truncate; bools are 1/0
        #expect(defaults.integer(forKey: "numeric") == 12)
        #expect(defaults.integer(forKey: "prefixed") == 12)
        #expect(defaults.integer(forKey: "decimal") == 7)
        #expect(defaults.integer(forKey: "abc") == 0)
        #expect(defaults.integer(forKey: "real") == 7)
        #expect(defaults.integer(forKey: "negative") == -2)
        #expect(defaults.integer(forKey: "boolTrue") == 1)
        #expect(defaults.integer(forKey: "missing") == 0)
        #expect(defaults.double(forKey: "decimal") == 7.5)
        #expect(defaults.double(forKey: "int") == 12.0)
        #expect(defaults.double(forKey: "abc") == 0)
        #expect(defaults.float(forKey: "real") == Float(7.9))
        // → bool
        #expect(defaults.bool(forKey: "yes"))
        #expect(defaults.bool(forKey: "true"))
        #expect(defaults.bool(forKey: "one"))
        #expect(!defaults.bool(forKey: "no"))
        #expect(!defaults.bool(forKey: "abc"))
        #expect(defaults.bool(forKey: "int"))
        #expect(defaults.bool(forKey: "boolTrue") && !defaults.bool(forKey: "boolFalse"))
        #expect(!defaults.bool(forKey: "missing"))
        // stringArray converts nothing
        #expect(defaults.stringArray(forKey: "strings") == ["a", "b"])
        #expect(defaults.stringArray(forKey: "mixed") == nil)
        #expect(defaults.array(forKey: "mixed")?.count == 2)
        #expect(defaults.array(forKey: "int") == nil)
        #expect(defaults.dictionary(forKey: "strings") == nil)
        // url from a path (tilde expanded), or a stored URL string
        #expect(defaults.url(forKey: "path") == URL(fileURLWithPath: NSString(string: "~/bridge.log").expandingTildeInPath))
        #expect(defaults.url(forKey: "path")?.path.hasPrefix("~") == false)
        #expect(defaults.url(forKey: "absolute") == URL(fileURLWithPath: "/var/log/bridge.log"))
        #expect(defaults.url(forKey: "web") == URL(string: "https://example.com/a"))
        #expect(defaults.url(forKey: "int") == nil)
        #expect(defaults.data(forKey: "blob") == Data([0, 1]))
        #expect(defaults.data(forKey: "abc") == nil)
        #expect(defaults.object(forKey: "when") as? Date == Date(timeIntervalSince1970: 1_795_255_200))
        #expect(defaults.value(forKey: "real") == .real(7.9))
        #expect(!defaults.objectIsForced(forKey: "int"))
    }

    @Test("a value that is not a property-list value is refused, never stored, never a crash")
    func nonPlistValuesAreRefused() throws {
        struct Starship { var name = "Enterprise" }
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon))
        defaults.set("kept", forKey: "ship")

        #expect(throws: DefaultsClientError.notAPropertyList(path: "ship", reason: "Starship is not a property-list type")) {
            try defaults.trySet(Starship(), forKey: "ship")
        }
        do {
            try defaults.trySet(["fine", NSObject()] as [Any], forKey: "list")
            Issue.record("an NSObject in an array was accepted")
        } catch {
            guard case .notAPropertyList(let path, _) = error else { throw error }
            #expect(path == "list[1]")
        }
        #expect(throws: DefaultsClientError.self) { try defaults.trySet(Double.nan, forKey: "nan") }
        #expect(throws: DefaultsClientError.self) { try defaults.trySet(UInt64.max, forKey: "huge") }
        #expect(throws: DefaultsClientError.self) { try defaults.trySet([1: "one"], forKey: "intKeys") }
        #expect(throws: DefaultsClientError.self) { try defaults.trySet(["a": Optional<Int>.none as Any], forKey: "nilInside") }
        #expect(throws: DefaultsClientError.invalid(DefaultsError(.invalidKey, "keys must not be empty"))) {
            try defaults.trySet(1, forKey: "")
        }
        defaults.set(Starship(), forKey: "ship")  // logged, ignored
        defaults.set(Double.infinity, forKey: "infinite")
        defaults.register(defaults: ["bad": Starship(), "good": 1])

        #expect(defaults.string(forKey: "ship") == "kept")
        #expect(defaults.object(forKey: "list") == nil)
        #expect(defaults.object(forKey: "infinite") == nil)
        #expect(defaults.object(forKey: "bad") == nil)
        #expect(defaults.integer(forKey: "good") == 1)
        #expect(defaults.synchronize())
        #expect(try storedJSON(daemon, "com.example.BridgeControl") == (try json(#"{"ship":"kept"}"#)))
    }

    @Test("the argument domain parses -key value pairs as Foundation does")
    func argumentDomainParsing() {
        let parsed = ArgumentDomain.parse([
            "print", "-warpFactor", "9", "-fleet", "(Enterprise, Voyager)", "-officer", " Picard ",
            "-settings", "{ rank = Captain; }", "-offset", "-5", "-flag", "YES", "-json", "[1,2]",
        ])
        #expect(parsed == [
            "warpFactor": "9",
            "fleet": ["Enterprise", "Voyager"],
            "officer": "Picard",
            "settings": ["rank": "Captain"],
            "flag": "YES",  // "-offset -5" is no pair: a negative number cannot be a value
            "json": "[1,2]",
        ])
    }
}

@Suite("Configuration from the environment", .ownThreads)
struct ConfigurationTests {
    @Test("DEFAULTSD_SOCKET and DEFAULTSD_APP_DOMAIN override the defaults; names are made valid")
    func environment() {
        let explicit = DefaultsConfiguration.fromEnvironment([
            "DEFAULTSD_SOCKET": "/run/test/socket", "DEFAULTSD_APP_DOMAIN": "com.example.BridgeControl",
            "XDG_RUNTIME_DIR": "/run/user/1000",
        ])
        #expect(explicit.socketPath == "/run/test/socket")
        #expect(explicit.appDomain == "com.example.BridgeControl")
        #expect(DefaultsConfiguration.defaultSocketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/defaultsd/socket")
        #expect(DefaultsConfiguration.defaultSocketPath(environment: [:]) == "/tmp/defaultsd-\(getuid())/socket")
        // Without an override: the bundle identifier, else the process name (the test runner's here).
        let derived = DefaultsConfiguration.defaultAppDomain(environment: [:])
        #expect(derived == DefaultsConfiguration.defaultAppDomain(environment: ["DEFAULTSD_APP_DOMAIN": ""]))
        #expect((try? DomainName(derived)) != nil)
        let odd = SharedDefaults(configuration: DefaultsConfiguration(socketPath: "/nonexistent/socket", appDomain: "../my app"))
        #expect(odd.domainName == "_my app")
        // A process name as Foundation names its `.standard` file: a space inside stays.
        #expect(DefaultsConfiguration.sanitized("My Tool") == "My Tool")
        #expect(DefaultsConfiguration.sanitized(" x ") == "_x_")
        #expect(DefaultsConfiguration.sanitized("café+") == "caf__")
    }
}

/// `bool(forKey:)` of a string is `NSString.boolValue`, on the table every user of ValueSyntax
/// is tested against.
@Suite(.ownThreads) struct StringTruthTests {
    @Test func aStringIsTrueAsFoundationSays() {
        for text in ValueSyntaxCases.boolValueStrings {
            #expect(Conversions.bool(.string(text)) == NSString(string: text).boolValue, "\(text.debugDescription)")
        }
    }
}
