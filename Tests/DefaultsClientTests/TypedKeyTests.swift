import DefaultsClient
import DefaultsCore
import DaemonTestSupport
import Foundation
import LocalServices
import TestThreads
import Testing

struct CrewMember: Codable, Sendable, Equatable {
    var name: String
    var rank: Int
}

struct Crew: Codable, Sendable, Equatable {
    var captain: String
    var officers: [CrewMember]
    var commissioned: Date?
}

/// A Codable class: readers must not share an instance.
final class Insignia: Codable, Sendable {
    let rank: Int
    init(rank: Int) { self.rank = rank }
}

extension Keys {
    static let insignia = Key<Insignia>("insignia", default: Insignia(rank: 0))
    static let warp = Key<Double>("warpFactor", default: 5)
    static let crew = Key<Crew>("crew", default: Crew(captain: "nobody", officers: []))
    static let launches = Key<Int>("launches", default: 0)
    static let dotted = Key<String>("display.scale.mode", default: "fit")
}

/// Typed keys, Codable values and compare-and-set, through the real daemon and other processes.
@Suite("Typed keys, Codable values and compare-and-set", .serialized, .ownThreads)
struct TypedKeyTests {
    @Test func aTypedKeyReadsItsDefaultAndWritesThroughTheDaemon() async throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon, appDomain: "com.example.typed"))
        #expect(defaults[.warp] == 5)
        defaults[.warp] = 7
        #expect(defaults[.warp] == 7)
        #expect(defaults.synchronize())
        #expect(try rawRequest(daemon, #"{"op":"get","domain":"com.example.typed","key":"warpFactor"}"#)
            == [#"{"ok":true,"value":7.0,"generation":1}"#])
        defaults[.dotted] = "fill"
        #expect(defaults.synchronize())
        #expect(try rawRequest(daemon, #"{"op":"get","domain":"com.example.typed","key":"display.scale.mode"}"#)
            == [#"{"ok":true,"value":"fill","generation":2}"#], "keys may hold dots")
    }

    /// A Codable value is stored as its fields, which another client reads and a hand edit
    /// changes; a stored value of another shape reads as the default.
    @Test func aCodableValueIsStoredAsItsFields() async throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon, appDomain: "com.example.typed"))
        let crew = Crew(
            captain: "Picard", officers: [CrewMember(name: "Riker", rank: 3), CrewMember(name: "Data", rank: 2)],
            commissioned: Date(timeIntervalSince1970: 1_700_000_000))
        defaults[.crew] = crew
        #expect(defaults[.crew] == crew)
        #expect(defaults.synchronize())
        #expect(try rawRequest(daemon, #"{"op":"get","domain":"com.example.typed","key":"crew"}"#)
            == [#"{"ok":true,"value":{"captain":"Picard","commissioned":{"$date":"2023-11-14T22:13:20Z"},"officers":[{"name":"Riker","rank":3},{"name":"Data","rank":2}]},"generation":1}"#])
        // As `defaults read` prints it: real fields, not a JSON string.
        #expect(try defaultsCommand(daemon, "read", "com.example.typed", "crew").output == """
            {
                captain = Picard;
                commissioned = "2023-11-14 22:13:20 +0000";
                officers =     (
                            {
                        name = Riker;
                        rank = 3;
                    },
                            {
                        name = Data;
                        rank = 2;
                    }
                );
            }

            """)

        // A hand edit of one field reaches the typed value.
        let path = daemon.storagePath + "/com.example.typed.plist"
        var file = try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: path)))
        file["crew"] = ["captain": "Janeway", "officers": [["name": "Chakotay", "rank": 3]]]
        try PropertyListFile.encode(file, format: .xml).write(to: URL(fileURLWithPath: path + ".new"))
        let (values, task) = Recorder.of(defaults.values(of: .crew))
        defer { task.cancel() }
        #expect(rename(path + ".new", path) == 0)
        let edited = try await values.first { $0.captain == "Janeway" }
        #expect(edited == Crew(captain: "Janeway", officers: [CrewMember(name: "Chakotay", rank: 3)], commissioned: nil))

        // An old shape (a plain string) reads as the default, never traps.
        _ = try rawRequest(daemon, #"{"op":"set","domain":"com.example.typed","key":"crew","value":"Picard"}"#)
        _ = try await values.first { $0.captain == "nobody" }
        #expect(defaults[.crew] == Crew(captain: "nobody", officers: []))
    }

    /// A value type's unchanged value is decoded once; a class is decoded at every read, so no
    /// two readers share an instance.
    @Test func eachReadOfAClassValueIsItsOwnInstance() throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon, appDomain: "com.example.typed"))
        defaults[.insignia] = Insignia(rank: 4)
        let first = defaults[.insignia]
        let second = defaults[.insignia]
        #expect(first.rank == 4 && second.rank == 4)
        #expect(first !== second)
    }

    @Test func applyWithExpectIsCompareAndSet() throws {
        let daemon = try DaemonProcess()
        let replies = try rawRequest(
            daemon,
            #"{"op":"apply","domain":"com.example.cas","set":{"count":1},"expect":{"count":null}}"#,
            #"{"op":"apply","domain":"com.example.cas","set":{"count":2},"expect":{"count":null}}"#,
            #"{"op":"apply","domain":"com.example.cas","set":{"count":2,"name":"x"},"expect":{"count":1,"name":null}}"#,
            #"{"op":"apply","domain":"com.example.cas","remove":["name"],"expect":{"count":1}}"#,
            #"{"op":"get","domain":"com.example.cas"}"#)
        #expect(replies == [
            #"{"ok":true,"generation":1}"#,
            #"{"ok":false,"error":{"code":"conflict","message":"count is 1, not absent; nothing changed","key":"count","found":1}}"#,
            #"{"ok":true,"generation":2}"#,
            #"{"ok":false,"error":{"code":"conflict","message":"count is 2, not 1; nothing changed","key":"count","found":2}}"#,
            #"{"ok":true,"value":{"count":2,"name":"x"},"generation":2}"#,
        ])
    }

    /// Two processes that each add 1 a thousand times, at once, end at 2,000: each step is a
    /// compare-and-set, tried again when the other process changed the key in between.
    @Test func twoProcessesCountingAtOnceLoseNoStep() async throws {
        let daemon = try DaemonProcess()
        let first = try BridgeControlProcess(daemon, ["count", "1000"])
        let second = try BridgeControlProcess(daemon, ["count", "1000"])
        #expect(try await first.exitStatus(timeout: 120) == 0)
        #expect(try await second.exitStatus(timeout: 120) == 0)
        #expect(try rawRequest(daemon, #"{"op":"get","domain":"com.example.BridgeControl","key":"launches"}"#).first?
            .hasPrefix(#"{"ok":true,"value":2000,"#) == true)
        let defaults = SharedDefaults(configuration: configuration(daemon))
        #expect(try await defaults.update(.launches) { $0 + 1 } == 2001)
    }

    /// `update` changes the instance's own domain, starting from what it stores (the default
    /// while nothing): a value in `NSGlobalDomain` is neither its input nor what it writes over.
    @Test func updateWorksOnTheDomainsOwnValue() async throws {
        let daemon = try DaemonProcess()
        _ = try rawRequest(daemon, #"{"op":"set","domain":"NSGlobalDomain","key":"launches","value":100}"#)
        let defaults = SharedDefaults(configuration: configuration(daemon, appDomain: "com.example.updated"))
        #expect(defaults[.launches] == 100, "reads resolve along the search list")
        #expect(try await defaults.update(.launches) { $0 + 1 } == 1)
        #expect(try await defaults.update(.launches) { $0 + 1 } == 2)
        #expect(try rawRequest(daemon, #"{"op":"get","domain":"NSGlobalDomain","key":"launches"}"#).first?.hasPrefix(#"{"ok":true,"value":100,"#) == true)
    }

    /// A date a binary file keeps to the nanosecond is sent to the microsecond; expecting the
    /// value as sent holds.
    @Test func aDateIsExpectedAsItWasSent() throws {
        let daemon = try DaemonProcess()
        let path = daemon.storagePath + "/com.example.dated.plist"
        try PropertyListFile.encode(["when": .date(Date(timeIntervalSince1970: 1_700_000_000.123456789))], format: .binary)
            .write(to: URL(fileURLWithPath: path))
        let read = try rawRequest(daemon, #"{"op":"get","domain":"com.example.dated","key":"when"}"#)
        #expect(read == [#"{"ok":true,"value":{"$date":"2023-11-14T22:13:20.123457Z"},"generation":0}"#])
        #expect(try rawRequest(daemon, #"{"op":"apply","domain":"com.example.dated","set":{"seen":true},"expect":{"when":{"$date":"2023-11-14T22:13:20.123457Z"}}}"#)
            == [#"{"ok":true,"generation":1}"#])
    }

    /// Migrations run only on a domain loaded from the daemon: judged on a cache without one,
    /// they would record themselves without their changes.
    @Test func migrationsWaitForTheDaemon() async throws {
        let defaults = SharedDefaults(configuration: DefaultsConfiguration(
            socketPath: "/nonexistent/defaultsd/socket", appDomain: "com.example.offline", clientName: "TypedKeyTests",
            loadTimeout: .milliseconds(100), synchronizeTimeout: .seconds(1)))
        await #expect(throws: DefaultsClientError.self) { try await defaults.migrate([.rename("a", to: "b")]) }
    }

    /// A connection's registrations are bounded: past 4,096 keys, `too_large`.
    @Test func registrationsAreBounded() throws {
        let daemon = try DaemonProcess()
        let many = (0..<4097).map { #""k\#($0)":1"# }.joined(separator: ",")
        let answer = try rawRequest(daemon, #"{"op":"register","domain":"com.example.many","defaults":{\#(many)}}"#)
        #expect(answer.first?.hasPrefix(#"{"ok":false,"error":{"code":"too_large","message":"a connection may register 4096 keys"#) == true, "\(answer)")
        #expect(try rawRequest(daemon, #"{"op":"registeredDefaults","domain":"com.example.many"}"#) == [#"{"ok":true,"values":{}}"#])
    }
}
