import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// The administrator's managed (forced) preferences, through the real daemon: forced values win
/// every lookup, writes that would change them are refused whole with `forced`, and a managed
/// file added, changed or removed while clients run is a `didChange` with origin `managed`.
@Suite(.ownThreads) struct ManagedPreferencesTests {
    static let domain = "com.example.bridge"

    /// A managed directory (mode 0755, owned by the test's user) and a daemon reading it.
    func managedDaemon(system: [String: PlistValue]? = nil, user: [String: PlistValue]? = nil) throws -> (DaemonProcess, String) {
        let managed = FileManager.default.temporaryDirectory.appendingPathComponent("managed-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: managed, withIntermediateDirectories: true)
        if let system { try write(system, to: managed + "/" + Self.domain + ".plist") }
        if let user {
            try FileManager.default.createDirectory(atPath: managed + "/users/" + userName, withIntermediateDirectories: true)
            try write(user, to: managed + "/users/" + userName + "/" + Self.domain + ".plist")
        }
        return (try DaemonProcess(arguments: ["--managed-dir", managed]), managed)
    }

    var userName: String { String(cString: getpwuid(getuid())!.pointee.pw_name) }

    func write(_ values: [String: PlistValue], to path: String) throws {
        let temporary = path + ".new"
        try PropertyListFile.encode(values, format: .xml).write(to: URL(fileURLWithPath: temporary))
        #expect(rename(temporary, path) == 0)
    }

    let forcedError = #"{"ok":false,"error":{"code":"forced","message":"warpFactor of com.example.bridge is forced by the administrator's managed preferences"}}"#

    @Test(.enabled(if: getuid() == 0, "trusted managed files must belong to root"))
    func forcedKeysWinEveryLookupAndTheUsersOwnFileWinsKeyByKey() throws {
        let (daemon, managed) = try managedDaemon(
            system: ["warpFactor": .integer(9), "shields": .bool(true)], user: ["warpFactor": .integer(10)])
        defer { try? FileManager.default.removeItem(atPath: managed) }
        let client = try daemon.connect()
        try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"rank","value":"Ensign"}"#)
        #expect(try client.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#)
            == #"{"ok":true,"value":10,"domain":"\#(Self.domain)","layer":"managed"}"#)
        #expect(try client.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"shields"}"#)
            == #"{"ok":true,"value":true,"domain":"\#(Self.domain)","layer":"managed"}"#)
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)"}"#)
            == #"{"ok":true,"value":{"rank":"Ensign"},"generation":1,"forced":{"shields":true,"warpFactor":10}}"#)
        // Forced on the app domain, so through the search list of an app too.
        try client.request(#"{"op":"hello","appDomain":"\#(Self.domain)"}"#)
        #expect(try client.request(#"{"op":"lookup","key":"warpFactor"}"#).contains(#""layer":"managed""#))
    }

    @Test(.enabled(if: getuid() == 0, "trusted managed files must belong to root"))
    func everyWriteThatWouldChangeAForcedKeyIsRefusedWhole() throws {
        let (daemon, managed) = try managedDaemon(system: ["warpFactor": .integer(9)])
        defer { try? FileManager.default.removeItem(atPath: managed) }
        let client = try daemon.connect()
        try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"rank","value":"Ensign"}"#)
        let refused = [
            #"{"op":"set","domain":"\#(Self.domain)","key":"warpFactor","value":5}"#,
            #"{"op":"remove","domain":"\#(Self.domain)","key":"warpFactor"}"#,
            #"{"op":"apply","domain":"\#(Self.domain)","set":{"rank":"Captain","warpFactor":5}}"#,
            #"{"op":"replaceDomain","domain":"\#(Self.domain)","values":{"rank":"Captain","warpFactor":5}}"#,
            #"{"op":"import","domain":"\#(Self.domain)","plist":"{ rank = Captain; warpFactor = 5; }"}"#,
        ]
        for request in refused { #expect(try client.request(request) == forcedError, "\(request)") }
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)"}"#)
            == #"{"ok":true,"value":{"rank":"Ensign"},"generation":1,"forced":{"warpFactor":9}}"#, "nothing changed")
        // A stored value beneath a forced key: deleting the domain would change it.
        let (other, otherManaged) = try managedDaemon()
        defer { try? FileManager.default.removeItem(atPath: otherManaged) }
        let user = try other.connect()
        try user.request(#"{"op":"set","domain":"\#(Self.domain)","key":"warpFactor","value":3}"#)
        try user.request(#"{"op":"subscribe","domains":["\#(Self.domain)"]}"#)
        try write(["warpFactor": .integer(9)], to: otherManaged + "/" + Self.domain + ".plist")
        #expect(try user.readEvent().contains(#""changes":{"warpFactor":9},"origin":{"source":"managed"}"#))
        #expect(try user.request(#"{"op":"deleteDomain","domain":"\#(Self.domain)"}"#) == forcedError)
        #expect(try user.request(#"{"op":"get","domain":"\#(Self.domain)","key":"warpFactor"}"#) == #"{"ok":true,"value":3,"generation":2}"#)
        // `defaults` says so the macOS way and exits 1.
        let result = try DefaultsCommandTests.run(other, ["write", Self.domain, "warpFactor", "-int", "4"])
        #expect(result.status == 1)
        #expect(result.message == "Could not write domain \(Self.domain); exiting (forced: warpFactor of \(Self.domain) is forced by the administrator's managed preferences)\n")
    }

    @Test(.enabled(if: getuid() == 0, "trusted managed files must belong to root"))
    func aManagedFileAddedChangedAndRemovedIsADidChangeWithTheEffectiveValues() throws {
        let (daemon, managed) = try managedDaemon()
        defer { try? FileManager.default.removeItem(atPath: managed) }
        let client = try daemon.connect()
        try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"warpFactor","value":3}"#)
        try client.request(#"{"op":"subscribe","domains":["\#(Self.domain)"]}"#)
        let path = managed + "/" + Self.domain + ".plist"
        func event(_ generation: Int, _ changes: String) -> String {
            #"{"event":"didChange","domain":"\#(Self.domain)","generation":\#(generation),"changes":\#(changes),"origin":{"source":"managed"}}"#
        }
        try write(["warpFactor": .integer(9), "shields": .bool(true)], to: path)
        #expect(try client.readEvent() == event(2, #"{"shields":true,"warpFactor":9}"#))
        try write(["warpFactor": .integer(8)], to: path)
        #expect(try client.readEvent() == event(3, #"{"shields":null,"warpFactor":8}"#))
        #expect(unlink(path) == 0)
        // No longer forced: the user's own value again.
        #expect(try client.readEvent() == event(4, #"{"warpFactor":3}"#))
        #expect(try client.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#)
            == #"{"ok":true,"value":3,"domain":"\#(Self.domain)","layer":"persistent"}"#)
        // A per-user directory created later is watched too.
        try FileManager.default.createDirectory(atPath: managed + "/users/" + userName, withIntermediateDirectories: true)
        try write(["warpFactor": .integer(7)], to: managed + "/users/" + userName + "/" + Self.domain + ".plist")
        #expect(try client.readEvent() == event(5, #"{"warpFactor":7}"#))
    }

    @Test func aManagedFileTheDaemonsUserCouldChangeIsIgnored() throws {
        let (daemon, managed) = try managedDaemon()
        defer { try? FileManager.default.removeItem(atPath: managed) }
        let path = managed + "/" + Self.domain + ".plist"
        try write(["warpFactor": .integer(9)], to: path)
        // As root: owned by someone else, so root could change it for them. As a user: their own.
        if getuid() == 0 { #expect(chown(path, 65534, 65534) == 0) }
        let client = try daemon.connect()
        try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"rank","value":"Ensign"}"#)
        #expect(daemon.waitForLog("managed preferences ignored: someone other than the administrator could change them"))
        #expect(daemon.logText.contains("path=\(path)"))
        #expect(try client.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#)
            == #"{"ok":true,"value":null,"domain":null,"layer":null}"#)
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"warpFactor","value":5}"#) == #"{"ok":true,"generation":2}"#)
    }

    @Test(.enabled(if: getuid() == 0, "trusted managed files must belong to root"))
    func theGlobalDomainsManagedFileIsGlobalPreferences() throws {
        let (daemon, managed) = try managedDaemon()
        defer { try? FileManager.default.removeItem(atPath: managed) }
        let client = try daemon.connect()
        try client.request(#"{"op":"set","domain":"NSGlobalDomain","key":"AppleLocale","value":"fr_FR"}"#)
        try client.request(#"{"op":"subscribe","domains":["NSGlobalDomain"]}"#)
        try write(["AppleLocale": .string("en_GB")], to: managed + "/.GlobalPreferences.plist")
        #expect(try client.readEvent()
            == #"{"event":"didChange","domain":"NSGlobalDomain","generation":2,"changes":{"AppleLocale":"en_GB"},"origin":{"source":"managed"}}"#)
        // Every app sees it, before its own domain.
        #expect(try client.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"AppleLocale"}"#)
            == #"{"ok":true,"value":"en_GB","domain":"NSGlobalDomain","layer":"managed"}"#)
        #expect(try client.request(#"{"op":"set","domain":"NSGlobalDomain","key":"AppleLocale","value":"de_DE"}"#)
            == #"{"ok":false,"error":{"code":"forced","message":"AppleLocale of NSGlobalDomain is forced by the administrator's managed preferences"}}"#)
        // This machine's by-host variant cannot change it either.
        #expect(try client.request(#"{"op":"set","domain":"NSGlobalDomain","host":"current","key":"AppleLocale","value":"de_DE"}"#)
            == #"{"ok":false,"error":{"code":"forced","message":"AppleLocale of NSGlobalDomain (current host) is forced by the administrator's managed preferences"}}"#)
    }

    @Test(.enabled(if: getuid() == 0, "a trusted file in an untrusted directory needs a root-owned file"))
    func aManagedDirectoryTheDaemonsUserCouldChangeIsIgnored() throws {
        let managed = FileManager.default.temporaryDirectory.appendingPathComponent("managed-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: managed) }
        // The file is root's; the directory holding it belongs to someone else, who could swap it.
        try FileManager.default.createDirectory(atPath: managed + "/users/" + userName, withIntermediateDirectories: true)
        try write(["warpFactor": .integer(9)], to: managed + "/users/" + userName + "/" + Self.domain + ".plist")
        #expect(chown(managed + "/users/" + userName, 65534, 65534) == 0)
        let daemon = try DaemonProcess(arguments: ["--managed-dir", managed])
        let client = try daemon.connect()
        try client.request(#"{"op":"subscribe","domains":["\#(Self.domain)"]}"#)
        // A change to a trusted file afterwards shows the directory's file was not taken in.
        try write(["shields": .bool(true)], to: managed + "/" + Self.domain + ".plist")
        #expect(try client.readEvent()
            == #"{"event":"didChange","domain":"\#(Self.domain)","generation":1,"changes":{"shields":true},"origin":{"source":"managed"}}"#)
        #expect(daemon.waitForLog("managed preferences ignored: someone other than the administrator could change them"))
        #expect(daemon.logText.contains("path=\(managed)/users/\(userName)"))
        #expect(try client.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#)
            == #"{"ok":true,"value":null,"domain":null,"layer":null}"#)
    }

    @Test(.enabled(if: getuid() == 0, "trusted managed files must belong to root"))
    func writableByOthersAnywhereOnThePathIsIgnored() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("managed-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Three managed directories: a file anyone may write; a file in a folder under one anyone may
        // write (not sticky); and a link to a file in such a folder. Each is root's own.
        let cases: [(String, String)] = [
            ("open-file", "can be written by its group or others (mode 666)"),
            ("open-parent", "can be written by its group or others (mode 777)"),
            ("link", "can be written by its group or others (mode 777)"),
        ]
        let elsewhere = root + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere + "/inner", withIntermediateDirectories: true)
        chmod(elsewhere, 0o777)
        try write(["warpFactor": .integer(9)], to: elsewhere + "/inner/" + Self.domain + ".plist")
        for (name, problem) in cases {
            let managed = root + "/" + name + "/managed"
            try FileManager.default.createDirectory(atPath: managed, withIntermediateDirectories: true)
            let path = managed + "/" + Self.domain + ".plist"
            switch name {
            case "open-file":
                try write(["warpFactor": .integer(9)], to: path)
                chmod(path, 0o666)
            case "open-parent":
                try write(["warpFactor": .integer(9)], to: path)
                chmod(root + "/" + name, 0o777)
            default:
                try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: elsewhere + "/inner/" + Self.domain + ".plist")
            }
            let daemon = try DaemonProcess(arguments: ["--managed-dir", managed])
            let client = try daemon.connect()
            #expect(daemon.waitForLog("managed preferences ignored: someone other than the administrator could change them"), "\(name)")
            #expect(daemon.logText.contains(problem), "\(name): \(daemon.logText)")
            #expect(try client.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#)
                == #"{"ok":true,"value":null,"domain":null,"layer":null}"#, "\(name)")
        }
        // Made safe, the same files are taken in: the rule is the path's, not the files'.
        let managed = root + "/open-file/managed"
        chmod(managed + "/" + Self.domain + ".plist", 0o644)
        let daemon = try DaemonProcess(arguments: ["--managed-dir", managed])
        #expect(try daemon.connect().request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#)
            == #"{"ok":true,"value":9,"domain":"\#(Self.domain)","layer":"managed"}"#)
    }
}
