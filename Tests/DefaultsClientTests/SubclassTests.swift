import DefaultsClient
import DefaultsCore
import DaemonTestSupport
import Foundation
import TestThreads
import Testing

/// Code written against Foundation's `UserDefaults`, unaware of defaultsd.
enum BridgeSettingsCode {
    static func configure(_ defaults: UserDefaults) {
        defaults.register(defaults: ["warp": true, "warpFactor": 5, "favoriteAlien": "Vulcan"])
        defaults.set(7, forKey: "warpFactor")
        defaults.set(Float(2.5), forKey: "shieldRatio")
        defaults.set(0.75, forKey: "impulse")
        defaults.set(false, forKey: "warp")
        defaults.set("Jean-Luc Picard", forKey: "officer")
        defaults.set(["Enterprise", "Voyager"], forKey: "fleet")
        defaults.set(URL(fileURLWithPath: "/tmp/captain.log"), forKey: "log")
        defaults.set(NSObject(), forKey: "notAPlist")  // refused and logged, never a crash
        defaults.set("temporary", forKey: "scratch")
        defaults.removeObject(forKey: "scratch")
    }

    static func read(_ defaults: UserDefaults) -> String {
        "\(defaults.integer(forKey: "warpFactor")) \(defaults.bool(forKey: "warp")) \(defaults.string(forKey: "favoriteAlien") ?? "-") "
            + "\(defaults.float(forKey: "shieldRatio")) \(defaults.double(forKey: "impulse")) \(defaults.stringArray(forKey: "fleet") ?? []) "
            + "\(defaults.url(forKey: "log")?.path ?? "-") \(defaults.string(forKey: "warpFactor") ?? "-")"
    }
}

@Suite("SharedUserDefaults: the UserDefaults subclass", .serialized, .ownThreads)
struct SubclassTests {
    @Test("code handed a UserDefaults works unchanged and stores exact types in the daemon")
    func usedThroughUserDefaults() throws {
        let daemon = try DaemonProcess()
        let shared = SharedDefaults(configuration: configuration(daemon))
        let defaults: UserDefaults = SharedUserDefaults(shared)

        BridgeSettingsCode.configure(defaults)
        #expect(BridgeSettingsCode.read(defaults) == "7 false Vulcan 2.5 0.75 [\"Enterprise\", \"Voyager\"] /tmp/captain.log 7")
        #expect(type(of: defaults.object(forKey: "warpFactor")!) == Int.self)  // Swift-native, not NSNumber
        #expect(type(of: defaults.object(forKey: "warp")!) == Bool.self)
        #expect(defaults.object(forKey: "notAPlist") == nil)
        #expect(defaults.object(forKey: "scratch") == nil)
        #expect(defaults.dictionaryRepresentation()["favoriteAlien"] as? String == "Vulcan")
        #expect(defaults.dictionaryRepresentation().count == shared.resolvedValues().count)
        #expect(!defaults.objectIsForced(forKey: "warp"))
        #expect(defaults.synchronize())
        #expect(try storedJSON(daemon, "com.example.BridgeControl") == (try json(#"""
            {"fleet":["Enterprise","Voyager"],"impulse":0.75,"log":"/tmp/captain.log","officer":"Jean-Luc Picard","shieldRatio":2.5,"warp":false,"warpFactor":7}
            """#)))

        // Domains go to the daemon too, not to Foundation's plist files.
        defaults.setPersistentDomain(["favoriteTea": "Earl Grey"], forName: "com.example.tea")
        #expect(defaults.persistentDomain(forName: "com.example.tea")?["favoriteTea"] as? String == "Earl Grey")
        defaults.addSuite(named: "com.example.tea")
        #expect(defaults.string(forKey: "favoriteTea") == "Earl Grey")
        defaults.removeSuite(named: "com.example.tea")
        #expect(defaults.string(forKey: "favoriteTea") == nil)
        defaults.removePersistentDomain(forName: "com.example.tea")
        #expect(defaults.persistentDomain(forName: "com.example.tea") == nil)
        defaults.setVolatileDomain(["warpFactor": 9], forName: UserDefaults.argumentDomain)
        #expect(defaults.integer(forKey: "warpFactor") == 9)
        #expect(defaults.volatileDomainNames == ["NSArgumentDomain", "NSRegistrationDomain"])
        #expect(defaults.volatileDomain(forName: UserDefaults.registrationDomain)["favoriteAlien"] as? String == "Vulcan")
        #expect(defaults.synchronize())
    }

    @Test("its notifications carry the UserDefaults instance, for changes from any process")
    func notificationsCarryTheSubclass() async throws {
        let daemon = try DaemonProcess()
        let defaults: UserDefaults = SharedUserDefaults(SharedDefaults(configuration: configuration(daemon)))
        #expect(defaults.object(forKey: "rank") == nil)
        let notifications = NotificationRecorder(object: defaults)
        defaults.set("Ensign", forKey: "rank")
        let local = try await notifications.recorder.first { $0.keys == ["rank"] }
        #expect(local.isFromObject && local.origin == .local)
        #expect(defaults.synchronize())  // the local write reaches the daemon first
        _ = try rawRequest(daemon, #"{"op":"set","domain":"com.example.BridgeControl","key":"rank","value":"Captain"}"#)
        let remote = try await notifications.recorder.first { $0.origin != .local }
        #expect(remote.isFromObject && remote.keys == ["rank"])
        #expect(defaults.string(forKey: "rank") == "Captain")
    }

    @Test("suites refuse the global domain; standard is the shared instance, not Foundation's")
    func suitesAndStandard() {
        #expect(SharedUserDefaults(suiteName: "NSGlobalDomain") == nil)
        #expect(SharedUserDefaults(suiteName: SharedDefaults.standard.domainName) == nil)
        #expect(SharedUserDefaults().shared.domainName == SharedDefaults.standard.domainName)  // Foundation's init()
        #expect(SharedUserDefaults.standard is SharedUserDefaults)
        #expect(SharedUserDefaults.standard === SharedUserDefaults.standard)
        #expect(!(UserDefaults.standard is SharedUserDefaults))  // cannot be redirected (docs/CLIENT.md)
    }
}
