import DefaultsClient
import DefaultsCore
import DaemonTestSupport
import Foundation
import Synchronization
import TestThreads
import Testing

/// The cases of swift-corelibs-foundation's own `TestUserDefaults`, written as our tests and run
/// against `SharedUserDefaults` on the real daemon: code that passes Foundation's suite passes here.
@Suite("Foundation's UserDefaults cases, on SharedUserDefaults", .serialized, .ownThreads)
struct FoundationSuiteTests {
    func defaults(_ daemon: DaemonProcess) -> UserDefaults {
        SharedUserDefaults(SharedDefaults(configuration: configuration(daemon, appDomain: "org.swift.Foundation.Tests")))
    }

    /// The suite's cases that it runs both registered and set: a value, and how it must read back.
    static var casesOfBothKinds: [(Any, (UserDefaults) -> Bool)] {
        let bytes: [UInt8] = [0, 1, 2, 3, 4]
        return [
            ("hello" as NSString, { $0.string(forKey: "key1") == "hello" }),
            ("hello", { $0.string(forKey: "key1") == "hello" }),
            (NSURL(fileURLWithPath: "/hello/world"), { $0.url(forKey: "key1") == URL(fileURLWithPath: "/hello/world") }),
            (URL(fileURLWithPath: "/hello/world"), { $0.url(forKey: "key1") == URL(fileURLWithPath: "/hello/world") }),
            (NSData(bytes: bytes, length: bytes.count), { $0.data(forKey: "key1") == Data(bytes) }),
            (Data(bytes), { $0.data(forKey: "key1") == Data(bytes) }),
            ("YES", { $0.bool(forKey: "key1") == true }),
            ("1234", { $0.integer(forKey: "key1") == 1234 }),
        ]
    }

    @Test func registeredDefaultsAreReadAsEveryType() throws {
        let daemon = try DaemonProcess()
        let defaults = defaults(daemon)
        let cases: [(Any, (UserDefaults) -> Bool)] = [(5, { $0.integer(forKey: "key1") == 5 })] + Self.casesOfBothKinds
            + [("12.34", { $0.double(forKey: "key1") == 12.34 })]
        for (index, (registered, check)) in cases.enumerated() {
            defaults.register(defaults: ["key1": registered])
            defaults.removeObject(forKey: "key1")
            #expect(check(defaults), "case \(index): \(registered)")
        }
    }

    @Test func setValuesAreReadAsEveryType() throws {
        let daemon = try DaemonProcess()
        let defaults = defaults(daemon)
        let cases: [(Any, (UserDefaults) -> Bool)] = Self.casesOfBothKinds + [
            (true, { $0.float(forKey: "key1") == 1 }),
            (42, { $0.float(forKey: "key1") == 42 }),
            (12.34, { $0.float(forKey: "key1") == 12.34 }),
            ("1234", { $0.float(forKey: "key1") == 1234 }),
            ("12.34", { $0.double(forKey: "key1") == 12.34 }),
        ]
        for (index, (value, check)) in cases.enumerated() {
            defaults.set(value, forKey: "key1")
            #expect(check(defaults), "case \(index): \(value)")
        }
    }

    /// A `Float` is stored as its decimal form's real: read back as the string "12.34" and the
    /// double 12.34, not 12.34000015258789.
    @Test func aFloatReadsBackAsItsDecimalForm() throws {
        let daemon = try DaemonProcess()
        let defaults = defaults(daemon)
        defaults.set(Float(12.34), forKey: "key1")
        #expect(defaults.string(forKey: "key1") == "12.34")
        #expect(defaults.double(forKey: "key1") == 12.34)
        #expect(defaults.float(forKey: "key1") == Float(12.34))
        defaults.set(Float(12.34) as Any, forKey: "key2")
        #expect(defaults.string(forKey: "key2") == "12.34")
    }

    @Test func volatileDomainsHoldEveryType() throws {
        let daemon = try DaemonProcess()
        let defaults = defaults(daemon)
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let values: [String: Any] = [
            "A Date": date, "A String": "The String", "An Array": [1, 2, 3],
            "A Dictionary": ["Swift": "Imperative", "Haskell": "Functional", "Today": date],
            "Some Data": Data("The Data".utf8), "A Bool": true,
        ]
        #expect(!defaults.volatileDomainNames.contains("TestDomain"))
        defaults.setVolatileDomain(values, forName: "TestDomain")
        let read = defaults.volatileDomain(forName: "TestDomain")
        #expect(read.count == values.count)
        #expect(read["A Date"] as? Date == date)
        #expect(read["A String"] as? String == "The String")
        #expect(read["An Array"] as? [Int] == [1, 2, 3])
        #expect(read["A Dictionary"] as? [String: AnyHashable] == ["Swift": "Imperative", "Haskell": "Functional", "Today": date])
        #expect(read["Some Data"] as? Data == Data("The Data".utf8))
        #expect(read["A Bool"] as? Bool == true)
    }

    /// `setPersistentDomain` and `removePersistentDomain` post `didChangeNotification` for any
    /// domain, once per call: remove, set, remove make three.
    @Test func persistentDomainsAreReadAndEachCallIsAnnounced() async throws {
        let daemon = try DaemonProcess()
        let defaults1 = defaults(daemon)
        let domainName = "org.swift.Foundation.TestPersistentDomainName"
        let posted = Recorder<String>()
        let observer = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: defaults1, queue: nil) { note in
            posted.append(note.userInfo?[SharedDefaults.changedDomainKey] as? String ?? "?")
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        defaults1.removePersistentDomain(forName: domainName)
        #expect((defaults1.persistentDomain(forName: domainName) ?? [:]).isEmpty)
        let values: [String: Any] = [
            "An Integer": 1234, "A Double": 5678.1234, "A String": "Some string",
            "An Array": [1, 2, 3, 4, "Surprise"] as [AnyHashable],
            "A Dictionary": ["Swift": "Imperative", "Haskell": "Functional"] as [String: AnyHashable],
        ]
        defaults1.setPersistentDomain(values, forName: domainName)
        let defaults2 = defaults(daemon)
        let returned = try #require(defaults2.persistentDomain(forName: domainName))
        #expect(returned.count == values.count)
        #expect(returned["An Integer"] as? Int == 1234)
        #expect(returned["A Double"] as? Double == 5678.1234)
        #expect(returned["A String"] as? String == "Some string")
        #expect(returned["An Array"] as? [AnyHashable] == [1, 2, 3, 4, "Surprise"])
        #expect(returned["A Dictionary"] as? [String: AnyHashable] == ["Swift": "Imperative", "Haskell": "Functional"])
        defaults1.removePersistentDomain(forName: domainName)
        #expect((defaults(daemon).persistentDomain(forName: domainName) ?? [:]).isEmpty)
        #expect(await posted.wait { $0.count == 3 })
        #expect(posted.items == [domainName, domainName, domainName])
    }
}
