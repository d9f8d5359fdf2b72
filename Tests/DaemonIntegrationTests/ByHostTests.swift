import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// By-host domains through the real daemon: `"host":"current"` on every operation that names a
/// domain, this machine's files in `ByHost`, events and lookups that say so, Apple's order, and a
/// machine without an id.
@Suite(.ownThreads) struct ByHostTests {
    static let domain = "com.example.bridge"
    let byHostFile = "ByHost/com.example.bridge.\(DaemonProcess.machineID).plist"

    func stored(_ daemon: DaemonProcess, _ file: String) throws -> [String: PlistValue] {
        try PropertyListFile.decode(try Data(contentsOf: URL(fileURLWithPath: daemon.storagePath + "/" + file)))
    }

    @Test func everyOperationAddressesThisMachinesVariantApartFromTheOther() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let d = #""domain":"\#(Self.domain)","host":"current""#
        #expect(try client.request(#"{"op":"set",\#(d),"key":"screen","value":"HDMI-1"}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"screen","value":"any"}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"apply",\#(d),"set":{"scale":2,"dock":true},"remove":["screen"]}"#) == #"{"ok":true,"generation":2}"#)
        #expect(try client.request(#"{"op":"get",\#(d)}"#) == #"{"ok":true,"value":{"dock":true,"scale":2},"generation":2}"#)
        #expect(try client.request(#"{"op":"remove",\#(d),"key":"dock"}"#) == #"{"ok":true,"generation":3}"#)
        #expect(try client.request(#"{"op":"get",\#(d),"key":"scale"}"#) == #"{"ok":true,"value":2,"generation":3}"#)
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)"}"#) == #"{"ok":true,"value":{"screen":"any"},"generation":1}"#)
        #expect(try client.request(#"{"op":"domains","host":"current"}"#) == #"{"ok":true,"domains":["\#(Self.domain)"]}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(try stored(daemon, byHostFile) == ["scale": .integer(2)])
        #expect(try stored(daemon, "\(Self.domain).plist") == ["screen": .string("any")])

        let exported = try JSONParser.parse(try client.request(#"{"op":"export",\#(d)}"#))
        guard case .string(let plist)? = exported["plist"] else { Issue.record("\(exported)"); return }
        #expect(try PropertyListFile.decode(Data(plist.utf8)) == ["scale": .integer(2)])
        #expect(try client.request(#"{"op":"replaceDomain",\#(d),"values":{"scale":3}}"#) == #"{"ok":true,"generation":4}"#)
        #expect(try client.request(#"{"op":"import",\#(d),"plist":"{ scale = 4; }"}"#) == #"{"ok":true,"generation":5}"#)
        #expect(try client.request(#"{"op":"deleteDomain",\#(d)}"#) == #"{"ok":true,"existed":true,"generation":6}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(!FileManager.default.fileExists(atPath: daemon.storagePath + "/" + byHostFile))
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)","key":"screen"}"#) == #"{"ok":true,"value":"any","generation":1}"#)

        // Only this machine: any other host, or a host on an operation without a by-host form, is refused.
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)","host":"laptop"}"#)
            == #"{"ok":false,"error":{"code":"invalid_parameter","message":"\"host\" must be \"current\": one machine's daemon serves only its own host's domains"}}"#)
        #expect(try client.request(#"{"op":"bundleDefaults",\#(d)}"#)
            == #"{"ok":false,"error":{"code":"invalid_parameter","message":"bundleDefaults has no by-host form; leave out \"host\""}}"#)
    }

    @Test func eventsSayWhichVariantChangedAndReachOnlyItsSubscribers() throws {
        let daemon = try DaemonProcess()
        let byHost = try daemon.connect()
        let anyHost = try daemon.connect()
        #expect(try byHost.request(#"{"op":"subscribe","domains":["\#(Self.domain)"],"host":"current"}"#)
            == #"{"ok":true,"generations":{"\#(Self.domain)":0}}"#)
        try anyHost.request(#"{"op":"subscribe","domains":["\#(Self.domain)"]}"#)
        let writer = try daemon.connect()
        try writer.request(#"{"op":"set","domain":"\#(Self.domain)","host":"current","key":"scale","value":2}"#)
        try writer.request(#"{"op":"set","domain":"\#(Self.domain)","key":"scale","value":1}"#)
        #expect(try byHost.readEvent().hasPrefix(
            #"{"event":"didChange","domain":"\#(Self.domain)","host":"current","generation":1,"changes":{"scale":2},"origin":{"pid":"#))
        // The any-host subscriber's first event is the any-host write: the by-host one never reached it.
        #expect(try anyHost.readEvent().hasPrefix(
            #"{"event":"didChange","domain":"\#(Self.domain)","generation":1,"changes":{"scale":1},"origin":{"pid":"#))

        // A hand edit of the by-host file is taken in like any other (made once the daemon's own
        // write is on disk, so the edit comes after it).
        #expect(try writer.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        let path = daemon.storagePath + "/" + byHostFile
        try PropertyListFile.encode(["scale": .integer(3)], format: .xml).write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)
        #expect(try byHost.readEvent()
            == #"{"event":"didChange","domain":"\#(Self.domain)","host":"current","generation":2,"changes":{"scale":3},"origin":{"source":"file"}}"#)
    }

    /// The `ByHost` folder removed (its watch ends) and made again is watched again, and the
    /// storage directory's own watch is not lost with it.
    @Test func aByHostFolderRemovedAndMadeAgainIsWatchedAgain() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        try client.request(#"{"op":"subscribe","domains":["\#(Self.domain)"],"host":"current"}"#)
        let anyHost = try daemon.connect()
        try anyHost.request(#"{"op":"subscribe","domains":["\#(Self.domain)"]}"#)
        try client.request(#"{"op":"set","domain":"\#(Self.domain)","host":"current","key":"scale","value":2}"#)
        _ = try client.readEvent()
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)

        let folder = daemon.storagePath + "/ByHost"
        try FileManager.default.removeItem(atPath: folder)
        // Its file removed with it, by a person: the domain is emptied.
        #expect(try client.readEvent()
            == #"{"event":"didChange","domain":"\#(Self.domain)","host":"current","generation":2,"changes":{"scale":null},"origin":{"source":"file"}}"#)
        #expect(daemon.waitForLog("a folder of domain files is no longer watched"))
        // Made again by hand, with an edited by-host file in it: read, as the folder is watched again.
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let path = daemon.storagePath + "/" + byHostFile
        try PropertyListFile.encode(["scale": .integer(3)], format: .xml).write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)
        #expect(try client.readEvent()
            == #"{"event":"didChange","domain":"\#(Self.domain)","host":"current","generation":3,"changes":{"scale":3},"origin":{"source":"file"}}"#)

        // The any-host file's edits are read as before.
        let anyHostPath = daemon.storagePath + "/\(Self.domain).plist"
        try PropertyListFile.encode(["scale": .integer(1)], format: .xml).write(to: URL(fileURLWithPath: anyHostPath + ".new"))
        #expect(rename(anyHostPath + ".new", anyHostPath) == 0)
        #expect(try anyHost.readEvent()
            == #"{"event":"didChange","domain":"\#(Self.domain)","generation":1,"changes":{"scale":1},"origin":{"source":"file"}}"#)
    }

    @Test func lookupTakesEachDomainsCurrentHostVariantJustBeforeIt() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let writes = [
            #"{"op":"set","domain":"\#(Self.domain)","host":"current","key":"scale","value":2}"#,
            #"{"op":"set","domain":"\#(Self.domain)","key":"scale","value":1}"#,
            #"{"op":"set","domain":"\#(Self.domain)","key":"theme","value":"dark"}"#,
            #"{"op":"set","domain":"NSGlobalDomain","host":"current","key":"theme","value":"light"}"#,
            #"{"op":"set","domain":"NSGlobalDomain","host":"current","key":"locale","value":"en_GB"}"#,
            #"{"op":"set","domain":"NSGlobalDomain","key":"locale","value":"fr_FR"}"#,
        ]
        for write in writes { #expect(try client.request(write).hasPrefix(#"{"ok":true"#)) }
        func lookup(_ key: String) throws -> String {
            try client.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"\#(key)"}"#)
        }
        #expect(try lookup("scale") == #"{"ok":true,"value":2,"domain":"\#(Self.domain)","host":"current","layer":"persistent"}"#)
        // The app's own value (any host) comes before the global domain's by-host one.
        #expect(try lookup("theme") == #"{"ok":true,"value":"dark","domain":"\#(Self.domain)","layer":"persistent"}"#)
        #expect(try lookup("locale") == #"{"ok":true,"value":"en_GB","domain":"NSGlobalDomain","host":"current","layer":"persistent"}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(try stored(daemon, "ByHost/.GlobalPreferences.\(DaemonProcess.machineID).plist")
            == ["theme": .string("light"), "locale": .string("en_GB")])
        // And after a restart, from the files.
        try daemon.restart()
        #expect(try daemon.connect().request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"scale"}"#)
            == #"{"ok":true,"value":2,"domain":"\#(Self.domain)","host":"current","layer":"persistent"}"#)
    }

    @Test func withoutAMachineIDByHostDomainsReadEmptyAndRefuseWrites() throws {
        let daemon = try DaemonProcess(arguments: ["--machine-id-file", "/nonexistent/machine-id"])
        #expect(daemon.waitForLog("by-host domains read as empty and cannot be written: this machine has no id"))
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)","host":"current"}"#) == #"{"ok":true,"value":{},"generation":0}"#)
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","host":"current","key":"scale","value":2}"#)
            == #"{"ok":false,"error":{"code":"no_machine_id","message":"\#(Self.domain) (current host) cannot be written: by-host domains need a machine id, and none was found (systemd-machine-id-setup writes /etc/machine-id)"}}"#)
        // Everything else works as before.
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"scale","value":1}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"scale"}"#)
            == #"{"ok":true,"value":1,"domain":"\#(Self.domain)","layer":"persistent"}"#)
        #expect(!daemon.storageListing().contains("ByHost"))
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/etc/machine-id"), "the machine has an id"))
    func theMachinesOwnIDNamesTheFilesByDefault() throws {
        let id = try String(contentsOfFile: "/etc/machine-id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let daemon = try DaemonProcess(arguments: ["--machine-id-file", "/etc/machine-id"])
        let client = try daemon.connect()
        try client.request(#"{"op":"set","domain":"\#(Self.domain)","host":"current","key":"scale","value":2}"#)
        try client.request(#"{"op":"synchronize"}"#)
        #expect(try stored(daemon, "ByHost/\(Self.domain).\(id).plist") == ["scale": .integer(2)])
    }

    @Test func aNameTooLongForAByHostFileIsRefusedAndHasNoByHostLayer() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let long = "com." + String(repeating: "x", count: DomainName.maximumByHostBytes - 3)
        #expect(try client.request(#"{"op":"set","domain":"\#(long)","host":"current","key":"k","value":1}"#).contains(#""code":"invalid_domain""#))
        #expect(try client.request(#"{"op":"set","domain":"\#(long)","key":"k","value":1}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"lookup","domain":"\#(long)","key":"k"}"#)
            == #"{"ok":true,"value":1,"domain":"\#(long)","layer":"persistent"}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(try DefaultsCommandTests.run(daemon, ["read-effective", long]).out == "{\n    k = 1;  // user\n}\n")
    }

    @Test func theCommandTakesCurrentHostAndOnlyThisMachinesName() throws {
        let daemon = try DaemonProcess()
        func defaults(_ arguments: String...) throws -> DefaultsCommandTests.Result { try DefaultsCommandTests.run(daemon, arguments) }
        #expect(try defaults("-currentHost", "write", Self.domain, "scale", "-int", "2").status == 0)
        #expect(try defaults("write", Self.domain, "scale", "-int", "1").status == 0)
        #expect(try defaults("-currentHost", "read", Self.domain, "scale").out == "2\n")
        #expect(try defaults("read", Self.domain, "scale").out == "1\n")
        #expect(try defaults("-currentHost", "domains").out == "\(Self.domain)\n")
        #expect(try defaults("-currentHost", "read-type", Self.domain, "scale").out == "Type is integer\n")
        var hostName = [CChar](repeating: 0, count: 256)
        gethostname(&hostName, hostName.count)
        #expect(try defaults("-host", hostName.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }, "read", Self.domain, "scale").out == "2\n")
        let other = try defaults("-host", "not-this-machine", "read", Self.domain)
        #expect(other.status == 1)
        #expect(other.message.hasPrefix("-host not-this-machine names another machine; defaultsd serves only the one it runs on ("))
        // Commands that read both variants, or the any-host one only, say so rather than ignore it.
        #expect(try defaults("-currentHost", "read-effective", Self.domain).message
            == "read-effective shows both variants of a domain already; leave out -currentHost\n")
        #expect(try defaults("-currentHost", "settings").status == 1)
        #expect(try defaults("read-effective", Self.domain).out == "{\n    scale = 2;  // current host\n}\n")
        #expect(try defaults("-currentHost", "delete", Self.domain).status == 0)
        #expect(try defaults("-currentHost", "read", Self.domain).status == 1)
        #expect(try defaults("read", Self.domain, "scale").out == "1\n")
    }
}
