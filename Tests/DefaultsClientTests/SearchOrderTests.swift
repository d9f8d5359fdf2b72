import DefaultsClient
import DefaultsCore
import DaemonTestSupport
import Foundation
import TestThreads
import Testing

@Suite("Search order: arguments, app domain, suites, NSGlobalDomain, registration", .serialized, .ownThreads)
struct SearchOrderTests {
    @Test("registration is searched last, merges across calls, and is shared by every instance")
    func registrationPrecedence() throws {
        let daemon = try DaemonProcess()
        _ = try rawRequest(daemon, #"{"op":"set","domain":"NSGlobalDomain","key":"level","value":"global"}"#)
        let defaults = SharedDefaults(configuration: configuration(daemon))
        defaults.register(defaults: ["warpFactor": 5, "favoriteAlien": "Vulcan", "level": "registered"])
        defaults.register(defaults: ["favoriteAlien": "Klingon"])  // later calls win per key

        #expect(defaults.value(forKey: "warpFactor") == .integer(5))
        #expect(defaults.double(forKey: "warpFactor") == 5.0)
        #expect(defaults.string(forKey: "favoriteAlien") == "Klingon")
        #expect(defaults.string(forKey: "level") == "global")  // NSGlobalDomain beats registration

        defaults.set(7.5, forKey: "warpFactor")
        defaults.set("app", forKey: "level")
        #expect(defaults.value(forKey: "warpFactor") == .real(7.5))
        #expect(defaults.string(forKey: "level") == "app")  // the app domain beats NSGlobalDomain

        defaults.removeObject(forKey: "warpFactor")
        defaults.removeObject(forKey: "level")
        #expect(defaults.value(forKey: "warpFactor") == .integer(5))
        #expect(defaults.string(forKey: "level") == "global")

        // Registration is process-wide (per daemon), as in Foundation, and never stored.
        let suite = try #require(SharedDefaults(suiteName: "group.example.fleet", configuration: configuration(daemon)))
        #expect(suite.string(forKey: "favoriteAlien") == "Klingon")
        #expect(defaults.volatileDomain(forName: SharedDefaults.registrationDomain)["warpFactor"] as? Int == 5)
        #expect(defaults.synchronize())
        #expect(try storedJSON(daemon, "com.example.BridgeControl") == .object([:]))
    }

    @Test("suites: init?(suiteName:) refuses the app domain and NSGlobalDomain; addSuite sits between app and global")
    func suitesAndGlobalDomain() throws {
        let daemon = try DaemonProcess()
        _ = try rawRequest(
            daemon,
            #"{"op":"replaceDomain","domain":"NSGlobalDomain","values":{"AppleLocale":"en_GB","shared":"global","onlyGlobal":1}}"#,
            #"{"op":"replaceDomain","domain":"group.example.fleet","values":{"shared":"fleet","fleetOnly":true,"appAndFleet":"fleet"}}"#,
            #"{"op":"replaceDomain","domain":"com.example.BridgeControl","values":{"appAndFleet":"app"}}"#)
        let config = configuration(daemon)
        #expect(SharedDefaults(suiteName: "com.example.BridgeControl", configuration: config) == nil)
        #expect(SharedDefaults(suiteName: "NSGlobalDomain", configuration: config) == nil)
        #expect(SharedDefaults(suiteName: "../escape", configuration: config) == nil)
        #expect(SharedDefaults(suiteName: nil, configuration: config)?.domainName == "com.example.BridgeControl")

        // A suite instance: the suite, then NSGlobalDomain; it writes to the suite.
        let fleet = try #require(SharedDefaults(suiteName: "group.example.fleet", configuration: config))
        #expect(fleet.searchList == ["group.example.fleet", "NSGlobalDomain"])
        #expect(fleet.string(forKey: "shared") == "fleet")
        #expect(fleet.string(forKey: "AppleLocale") == "en_GB")
        #expect(fleet.string(forKey: "appAndFleet") == "fleet")

        let app = SharedDefaults(configuration: config)
        #expect(app.string(forKey: "shared") == "global")
        #expect(app.object(forKey: "fleetOnly") == nil)
        app.addSuite(named: "group.example.fleet")
        app.addSuite(named: "NSGlobalDomain")  // ignored, as Apple documents
        app.addSuite(named: "com.example.BridgeControl")  // ignored
        #expect(app.searchList == ["com.example.BridgeControl", "group.example.fleet", "NSGlobalDomain"])
        #expect(app.string(forKey: "shared") == "fleet")
        #expect(app.bool(forKey: "fleetOnly"))
        #expect(app.string(forKey: "appAndFleet") == "app")

        // A write through the suite instance is seen at once by the app instance that added it.
        fleet.set("fleet-2", forKey: "shared")
        #expect(app.string(forKey: "shared") == "fleet-2")

        // dictionaryRepresentation is the resolved view: rep[k] == object(forKey: k) for every key.
        let representation = app.resolvedValues()
        // (The test runner's own `-key value` arguments are in the argument domain too.)
        #expect(Set(representation.keys).subtracting(ArgumentDomain.current.keys) == ["AppleLocale", "shared", "onlyGlobal", "fleetOnly", "appAndFleet"])
        for (key, value) in representation { #expect(app.value(forKey: key) == value, "\(key)") }
        #expect(app.dictionaryRepresentation().count == representation.count)
        #expect(app.dictionaryRepresentation()["onlyGlobal"] as? Int == 1)

        app.removeSuite(named: "group.example.fleet")
        #expect(app.string(forKey: "shared") == "global")
        #expect(app.object(forKey: "fleetOnly") == nil)
        #expect(fleet.synchronize())
        #expect(try storedJSON(daemon, "group.example.fleet")?["shared"] == .string("fleet-2"))
    }

    @Test("persistent domains: read any domain, replace and remove them")
    func persistentDomains() throws {
        let daemon = try DaemonProcess()
        _ = try rawRequest(daemon, #"{"op":"replaceDomain","domain":"com.example.tea","values":{"favoriteTea":"Earl Grey","cups":3}}"#)
        let defaults = SharedDefaults(configuration: configuration(daemon))
        let tea = try #require(defaults.persistentDomain(forName: "com.example.tea"))
        #expect(tea.count == 2 && tea["favoriteTea"] as? String == "Earl Grey" && tea["cups"] as? Int == 3)
        #expect(defaults.persistentDomain(forName: "com.example.empty") == nil)
        #expect(defaults.persistentDomain(forName: "NSArgumentDomain") == nil)

        defaults.setPersistentDomain(["favoriteTea": "Jasmine"], forName: "com.example.tea")
        #expect(defaults.persistentValues(forName: "com.example.tea") == ["favoriteTea": "Jasmine"])
        defaults.setPersistentDomain(["AppleLocale": "fr_FR"], forName: "NSGlobalDomain")
        #expect(defaults.string(forKey: "AppleLocale") == "fr_FR")
        #expect(defaults.synchronize())
        #expect(try storedJSON(daemon, "com.example.tea") == (try json(#"{"favoriteTea":"Jasmine"}"#)))
        #expect(try daemon.storedValues("NSGlobalDomain") == ["AppleLocale": "fr_FR"])

        defaults.removePersistentDomain(forName: "com.example.tea")
        #expect(defaults.persistentDomain(forName: "com.example.tea") == nil)
        #expect(defaults.synchronize())
        #expect(try daemon.storedValues("com.example.tea") == nil)
        #expect(try storedJSON(daemon, "com.example.tea") == .object([:]))
    }

    @Test("volatile domains: the argument domain is searched first; others are kept, not searched")
    func volatileDomains() throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon))
        defaults.set(7, forKey: "warpFactor")
        #expect(defaults.volatileDomainNames == ["NSArgumentDomain", "NSRegistrationDomain"])

        defaults.setVolatileDomain(["warpFactor": "9"], forName: SharedDefaults.argumentDomain)
        #expect(defaults.object(forKey: "warpFactor") as? String == "9")
        #expect(defaults.integer(forKey: "warpFactor") == 9)

        defaults.setVolatileDomain(["scratch": 1], forName: "com.example.scratch")
        #expect(defaults.volatileDomainNames == ["NSArgumentDomain", "NSRegistrationDomain", "com.example.scratch"])
        #expect(defaults.volatileDomain(forName: "com.example.scratch")["scratch"] as? Int == 1)
        #expect(defaults.object(forKey: "scratch") == nil)
        #expect(defaults.volatileDomain(forName: "com.example.none").isEmpty)

        defaults.removeVolatileDomain(forName: SharedDefaults.argumentDomain)
        #expect(defaults.value(forKey: "warpFactor") == .integer(7))
        defaults.setVolatileDomain(["registered": true], forName: SharedDefaults.registrationDomain)
        #expect(defaults.bool(forKey: "registered"))
    }

    @Test("command-line arguments of a real process beat its app domain")
    func argumentDomainOfAProcess() async throws {
        let daemon = try DaemonProcess()
        _ = try rawRequest(
            daemon, #"{"op":"replaceDomain","domain":"com.example.BridgeControl","values":{"warpFactor":7,"rank":"Ensign"}}"#)
        let bridge = try BridgeControlProcess(daemon, ["print", "-warpFactor", "9", "-favoriteTea", "Earl Grey"])
        #expect(try await bridge.exitStatus() == 0)
        _ = try await bridge.lines.first { $0 == "---" }
        let lines = bridge.lines.items
        #expect(lines.contains("Warp factor:        9.0"))
        #expect(lines.contains("Favorite tea:       Earl Grey"))
        #expect(lines.contains("Rank:               Ensign"))
        #expect(lines.contains("Favorite alien:     Vulcan"))  // registered by the app
    }
}
