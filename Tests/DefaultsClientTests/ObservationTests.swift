import DefaultsClient
import DefaultsCore
import DaemonTestSupport
import Foundation
import TestThreads
import Testing

enum Rank: String, DefaultsValue {
    case ensign, commander, captain
}

@Suite("Observation: change streams, key streams, observers, notifications, @Default", .serialized, .ownThreads)
struct ObservationTests {
    @Test("changes() and didChangeNotification report local and remote changes with their keys and origin")
    func changesAndNotifications() async throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon))
        #expect(defaults.object(forKey: "warpFactor") == nil)  // loaded
        let (changes, task) = Recorder.of(defaults.changes())
        defer { task.cancel() }
        let notifications = NotificationRecorder(object: defaults)

        defaults.set(7, forKey: "warpFactor")
        let local = try await changes.first { $0.keys == ["warpFactor"] }
        #expect(local == DefaultsChange(domain: "com.example.BridgeControl", keys: ["warpFactor"], origin: .local))
        let localNote = try await notifications.recorder.first { $0.keys == ["warpFactor"] }
        #expect(localNote.isFromObject && localNote.origin == .local && localNote.domain == "com.example.BridgeControl")

        _ = try rawRequest(
            daemon, #"{"op":"apply","domain":"com.example.BridgeControl","set":{"rank":"Captain","warp":true}}"#)
        let remote = try await changes.first { $0.keys == ["rank", "warp"] }
        guard case .remote(let writer) = remote.origin else {
            Issue.record("origin \(remote.origin)")
            return
        }
        #expect(writer.pid == getpid() && writer.client == nil)
        let remoteNote = try await notifications.recorder.first { $0.keys == ["rank", "warp"] }
        #expect(remoteNote.isFromObject && remoteNote.origin == remote.origin)

        defaults.set(7, forKey: "warpFactor")  // the value it has: no change, nothing announced
        // A change to NSGlobalDomain is a change in the search list too.
        _ = try rawRequest(daemon, #"{"op":"set","domain":"NSGlobalDomain","key":"AppleLocale","value":"en_GB"}"#)
        let global = try await changes.first { $0.domain == "NSGlobalDomain" }
        #expect(global.keys == ["AppleLocale"])
        #expect(defaults.string(forKey: "AppleLocale") == "en_GB")
        #expect(changes.items.count == 3)
    }

    @Test("cancelling an observer whose handler holds the last reference to its SharedDefaults releases the instance, which cancels its own observer without a deadlock")
    func cancellingTheObserverThatHoldsTheInstance() throws {
        let daemon = try DaemonProcess()
        var defaults: SharedDefaults? = SharedDefaults(configuration: configuration(daemon))
        weak let released = defaults
        let delivered = DispatchSemaphore(value: 0)
        let token = defaults!.observe(key: "warpFactor") { [defaults] _ in
            _ = defaults
            delivered.signal()
        }
        #expect(delivered.wait(timeout: .now() + 10) == .success)  // the first value: the handler is idle
        defaults = nil
        #expect(released != nil)
        // The handler goes with its observer; with it the instance, whose deinit cancels the
        // observer it keeps for its notifications. The delivery queue lets go of its copy of the
        // handler just after the call that signalled.
        token.cancel()
        let deadline = Date().addingTimeInterval(5)
        while released != nil, Date() < deadline { usleep(1_000) }
        #expect(released == nil)
    }

    @Test("values(forKey:) yields the value now, then each new one, for keys with dots")
    func keyStream() async throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon))
        let (values, task) = Recorder.of(defaults.values(forKey: "bridge.warp.factor"))
        let (changes, changesTask) = Recorder.of(defaults.changes())
        defer { task.cancel(); changesTask.cancel() }
        #expect(await values.wait { $0.count == 1 })
        #expect(values.items == [nil])

        defaults.set(5, forKey: "bridge.warp.factor")
        #expect(await values.wait { $0.count == 2 })
        #expect(defaults.synchronize())  // the local write reaches the daemon before the next one
        _ = try rawRequest(daemon, #"{"op":"set","domain":"com.example.BridgeControl","key":"bridge.warp.factor","value":7.5}"#)
        #expect(await values.wait { $0.count == 3 })
        defaults.set("unrelated", forKey: "bridge.warp")  // another key: no element
        _ = try rawRequest(daemon, #"{"op":"set","domain":"NSGlobalDomain","key":"bridge.warp.factor","value":1}"#)  // shadowed
        _ = try await changes.first { $0.domain == "NSGlobalDomain" }
        defaults.removeObject(forKey: "bridge.warp.factor")  // now NSGlobalDomain's 1 shows through
        #expect(await values.wait { $0.count == 4 })
        _ = try rawRequest(daemon, #"{"op":"remove","domain":"NSGlobalDomain","key":"bridge.warp.factor"}"#)
        #expect(await values.wait { $0.count == 5 })
        #expect(values.items == [nil, .integer(5), .real(7.5), .integer(1), nil])
    }

    @Test("a closure observer stops with its token")
    func closureObserver() async throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon))
        let first = Recorder<DefaultsChange>()
        let second = Recorder<DefaultsChange>()
        let firstToken = defaults.observe { first.append($0) }
        let secondToken = defaults.observe { second.append($0) }
        let keyValues = Recorder<PlistValue?>()
        let keyToken = defaults.observe(key: "warp") { keyValues.append($0) }

        defaults.set(true, forKey: "warp")
        _ = try await first.first { $0.keys == ["warp"] }
        firstToken.cancel()
        defaults.set(false, forKey: "warp")
        #expect(await second.wait { $0.count == 2 })
        #expect(first.items.count == 1)  // the second change came after the cancel
        #expect(await keyValues.wait { $0.count == 3 })
        #expect(keyValues.items == [nil, .bool(true), .bool(false)])
        withExtendedLifetime((secondToken, keyToken)) {}
    }

    @Test("@Default reads typed values with their default, writes them, and projects a stream")
    func propertyWrapper() async throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon))
        @Default("warpFactor", defaults: defaults) var warpFactor = 5.0
        @Default("rank", defaults: defaults) var rank = Rank.ensign
        @Default("officer", defaults: defaults) var officer: String? = nil
        @Default("fleet", defaults: defaults) var fleet: [String] = []

        #expect(warpFactor == 5.0)
        #expect(defaults.object(forKey: "warpFactor") == nil)  // a default is not stored
        let (stream, task) = Recorder.of($warpFactor)
        defer { task.cancel() }
        #expect(await stream.wait { $0 == [5.0] })

        _ = try rawRequest(daemon, #"{"op":"set","domain":"com.example.BridgeControl","key":"warpFactor","value":7}"#)
        #expect(await stream.wait { $0 == [5.0, 7.0] })
        #expect(warpFactor == 7.0)
        warpFactor = 9.5
        #expect(defaults.value(forKey: "warpFactor") == .real(9.5))
        defaults.removeObject(forKey: "warpFactor")
        #expect(await stream.wait { $0 == [5.0, 7.0, 9.5, 5.0] })

        rank = .captain
        #expect(defaults.value(forKey: "rank") == .string("captain"))
        defaults.set("admiral", forKey: "rank")
        #expect(rank == .ensign)  // not a Rank: the default
        officer = "Picard"
        #expect(defaults.string(forKey: "officer") == "Picard")
        officer = nil
        #expect(defaults.object(forKey: "officer") == nil)
        fleet = ["Enterprise", "Voyager"]
        #expect(defaults.stringArray(forKey: "fleet") == ["Enterprise", "Voyager"])
        #expect(defaults.synchronize())
        #expect(try storedJSON(daemon, "com.example.BridgeControl") == (try json(#"{"fleet":["Enterprise","Voyager"],"rank":"admiral"}"#)))
    }

    @Test("@Default refuses a value with no property-list form (an infinity, nil in an array) and keeps the stored one")
    func propertyWrapperRefusesUnrepresentableValues() throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon))
        @Default("warpFactor", defaults: defaults) var warpFactor = 5.0
        @Default("shieldLevel", defaults: defaults) var shieldLevel: Float = 1
        @Default("speeds", defaults: defaults) var speeds: [Double] = []
        @Default("crew", defaults: defaults) var crew: [String: String?] = [:]
        @Default("officer", defaults: defaults) var officer: String? = nil

        warpFactor = 7.5
        shieldLevel = 0.5
        speeds = [1, 2]
        crew = ["captain": "Picard"]
        officer = "Riker"
        #expect(defaults.synchronize())

        warpFactor = .infinity  // refused and logged, as set(Double.infinity, forKey:) is
        shieldLevel = -.infinity
        speeds = [1, .nan]
        crew = ["captain": "Picard", "counselor": nil]  // nil inside a collection: refused
        #expect(warpFactor == 7.5)
        #expect(shieldLevel == 0.5)
        #expect(speeds == [1, 2])
        #expect(crew == ["captain": "Picard"])
        officer = nil  // only a nil optional removes the key
        #expect(defaults.object(forKey: "officer") == nil)

        #expect(defaults.synchronize())
        #expect(try storedJSON(daemon, "com.example.BridgeControl") == (try json(
            #"{"crew":{"captain":"Picard"},"shieldLevel":0.5,"speeds":[1.0,2.0],"warpFactor":7.5}"#)))
    }
}
