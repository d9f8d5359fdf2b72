import DaemonTestSupport
import DefaultsCore
import Foundation
import LocalServices
import TestThreads
import Testing

/// The `roaming` section of the configuration and `defaults roaming`, with the real binaries.
@Suite("Roaming: configuration and defaults roaming", .ownThreads)
struct RoamingConfigurationTests {
    static let defaults = URL(fileURLWithPath: DaemonProcess.binary).deletingLastPathComponent().appendingPathComponent("defaults").path

    private func configuration(_ text: String, mode: Int) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("defaultsd-roaming-\(UUID().uuidString.prefix(8)).json").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    private func daemon(_ arguments: [String]) throws -> FinishedRun {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("defaultsd-home-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        return try FinishedRun.run(DaemonProcess.binary, arguments, environment: TestEnvironment.isolated(home: home))
    }

    @Test("credentials in a file others can read: exit 78, the password never printed")
    func readableCredentialsAreRefused() throws {
        let text = #"{ roaming: { endpoints: ["https://127.0.0.1:1"], domains: ["com.example.a"], user: "ada", password: "s3cret-pw" } }"#
        let open = try configuration(text, mode: 0o644)
        defer { try? FileManager.default.removeItem(atPath: open) }
        let refused = try daemon(["--config", open, "--print-config"])
        #expect(refused.status == 78)
        #expect(refused.output.contains("holds credentials but others can read it (mode 644); chmod 600 it"))
        #expect(!refused.output.contains("s3cret-pw"))

        let closed = try configuration(text, mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: closed) }
        let printed = try daemon(["--config", closed, "--print-config"])
        #expect(printed.status == 0)
        #expect(printed.output.contains(#"roaming.password"#) && printed.output.contains("(set; not shown)"))
        #expect(printed.output.contains(#"roaming.domains"#) && printed.output.contains(#"["com.example.a"]"#))
        #expect(!printed.output.contains("s3cret-pw"))
    }

    @Test("a password over http:// is refused unless the configuration allows it: exit 78, the password never printed")
    func aPasswordOverHTTP() throws {
        let plain = try configuration(
            #"{ roaming: { endpoints: ["https://127.0.0.1:1", "http://127.0.0.1:2"], domains: ["com.example.a"], user: "ada", password: "s3cret-pw" } }"#,
            mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: plain) }
        let refused = try daemon(["--config", plain, "--print-config"])
        #expect(refused.status == 78)
        #expect(refused.output.contains(
            "http://127.0.0.1:2 would carry the etcd password unencrypted; use https://, or set roaming.sendPasswordOverHTTP to true"))
        #expect(!refused.output.contains("s3cret-pw"))
        let allowed = try configuration(
            #"{ roaming: { endpoints: ["http://127.0.0.1:2"], domains: ["com.example.a"], user: "ada", password: "s3cret-pw", sendPasswordOverHTTP: true } }"#,
            mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: allowed) }
        let printed = try daemon(["--config", allowed, "--print-config"])
        #expect(printed.status == 0)
        #expect(printed.output.split(separator: "\n").contains { $0.hasPrefix("roaming.sendPasswordOverHTTP ") && $0.contains(" = true  # ") })
    }

    @Test("a roaming section that cannot work is refused with the key named: exit 78")
    func unusableSections() throws {
        let cases = [
            #"{ roaming: { domains: ["com.example.a"] } }"#: #"key "roaming.endpoints": roaming needs at least one etcd endpoint"#,
            #"{ roaming: { endpoints: ["127.0.0.1:2379"] } }"#: #"key "roaming.endpoints": expected an array of http:// or https:// URLs"#,
            #"{ roaming: { endpoints: ["http://e:2379"], colour: "red" } }"#: #"key "roaming.colour": unknown key"#,
            #"{ roaming: { endpoints: ["http://e:2379"], prefix: "no-slashes" } }"#: #"key "roaming.prefix": expected a string starting and ending with /"#,
            #"{ roaming: { endpoints: ["http://e:2379"], user: "ada" } }"#: "roaming.user and roaming.password go together",
            #"{ roaming: { endpoints: ["http://e:2379"], trustedCAFile: "/nonexistent/ca.pem" } }"#: "/nonexistent/ca.pem cannot be read",
        ]
        for (text, message) in cases {
            let path = try configuration(text, mode: 0o600)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let run = try daemon(["--config", path, "--print-config"])
            #expect(run.status == 78, "\(text)")
            #expect(run.output.contains(message), "\(text): \(run.output)")
        }
    }

    @Test("without a roaming section nothing roams: stats says off, and so does defaults roaming")
    func offByDefault() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try JSONParser.parse(try client.request(#"{"op":"stats"}"#))["roaming"] == ["state": "off"])
        let run = try FinishedRun.run(Self.defaults, ["roaming"], environment: daemon.clientEnvironment)
        #expect(run.status == 0)
        #expect(run.output == "Roaming is off: the daemon's configuration has no roaming section.\n")
        #expect(!daemon.storageListing().contains(".defaultsd-roaming.plist"))
    }

    /// A value etcd will never take (past its 1.5 MiB request limit) is refused, not retried for
    /// ever: the domain stops roaming with etcd's reason, and other domains' keys still roam.
    @Test("a value past etcd's request limit stops its domain roaming, with etcd's reason, and another domain's keys still roam")
    func aValueEtcdRefusesStopsItsDomain() throws {
        let other = "com.example.roaming.other"
        let machines = try RoamingMachines(hosts: ["B"], domains: [RoamingMachines.domain, other])
        // A request line long enough for the value: the limit this test is about is etcd's.
        try machines.start("A", domains: [RoamingMachines.domain, other], arguments: ["--max-line-bytes", "4194304"])
        try machines.waitAllOnline()
        #expect(try machines.set("A", "huge", "\"\(String(repeating: "x", count: 2_000_000))\"")["ok"] == true)
        #expect(try machines.set("A", "fine", "1", domain: other)["ok"] == true)
        let state = try machines.waitFor("A", timeout: 30) { $0["stopped"]?[RoamingMachines.domain] != nil && $0["queue"] == .integer(0) }
        guard case .string(let reason)? = state["stopped"]?[RoamingMachines.domain] else { Issue.record("\(state)"); return }
        #expect(reason.contains("etcd refused its key huge"), "\(reason)")
        try machines.waitForValues("B", ["fine": 1], domain: other)
        #expect(machines["A"].logOccurrences(of: "a domain stopped roaming") == 1)
    }

    @Test("a remote change past this machine's size limit is refused there, and the domain stops roaming, as defaults roaming says")
    func aRemoteChangePastTheLimitStopsRoaming() throws {
        let machines = try RoamingMachines(hosts: ["A"])
        try machines.start("B", arguments: ["--max-domain-bytes", "65536"])
        try machines.waitAllOnline()
        #expect(try machines.set("A", "small", "1")["ok"] == true)
        try machines.waitForValues("B", ["small": 1])
        #expect(try machines.set("A", "large", "\"\(String(repeating: "x", count: 100_000))\"")["ok"] == true)
        let state = try machines.waitFor("B") { $0["stopped"]?[RoamingMachines.domain] != nil }
        #expect(state["domains"] == .array([]))
        #expect(machines["B"].waitForLog("a domain stopped roaming"))
        #expect(try machines.values("B") == ["small": 1], "B keeps the domain as it was")
        let run = try FinishedRun.run(Self.defaults, ["roaming"], environment: machines["B"].clientEnvironment)
        #expect(run.output.contains("""
            No domain roams.
            Domains that stopped roaming (reload the daemon to try again):
                \(RoamingMachines.domain): domain \(RoamingMachines.domain) would be
            """))
        // B's own writes stay local now.
        #expect(try machines.set("B", "local", "2")["ok"] == true)
        #expect(try machines.cluster.keys(prefix: machines.prefix).allSatisfy { !$0.hasSuffix("/local") })
    }

    @Test("a first read of more keys than one page of a range holds takes every key, at one revision")
    func aFirstReadIsPaginated() throws {
        let machines = try RoamingMachines(hosts: ["A"])
        try machines.waitOnline("A")
        let members = (0..<50).map { #""key\#($0)":\#($0)"# }.joined(separator: ",")
        let client = try machines["A"].connect()
        #expect(try client.request(#"{"op":"apply","domain":"\#(RoamingMachines.domain)","set":{\#(members)}}"#) == #"{"ok":true,"generation":1}"#)
        try machines.waitFor("A") { $0["queue"] == .integer(0) }
        try machines.start("B")
        try machines.waitForValues("B", .object(Dictionary(uniqueKeysWithValues: (0..<50).map { ("key\($0)", JSON.integer(Int64($0))) })))
    }

    @Test("defaults roaming: online with the members and the domains, then offline with the queue, in text and JSON")
    func defaultsRoamingVerb() throws {
        let machines = try RoamingMachines(hosts: ["A"])
        // Online, and the first check of the members done.
        try machines.waitFor("A") { state in
            guard state["state"] == "online", case .array(let members)? = state["members"] else { return false }
            return members.allSatisfy { $0["answers"] == true }
        }
        let environment = machines["A"].clientEnvironment
        guard case .integer(let revision)? = try machines.roaming("A")["revision"] else { Issue.record("no revision"); return }
        let online = try FinishedRun.run(Self.defaults, ["roaming"], environment: environment)
        #expect(online.status == 0)
        let lines = online.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let endpoints = machines.cluster.endpoints
        #expect(lines.count == 13)
        #expect(Array(lines.prefix(4)) == ["Roaming through etcd: online", "Host name: A", "Watching through: \(endpoints[0])", "Members:"])
        for (line, endpoint) in zip(lines[4..<7], endpoints) {
            #expect(line.hasPrefix("    \(endpoint)  answers, leader "), "\(line)")
            #expect(line.hasSuffix(", revision \(revision)"), "\(line)")
        }
        #expect(lines[7].hasPrefix("Behind the cluster: 0 revisions (last event or progress ") && lines[7].hasSuffix(" s ago)"))
        #expect(Array(lines[8...]) == [
            "Last revision applied: \(revision)", "Changes waiting to be sent: 0", "Domains that roam:", "    \(RoamingMachines.domain)", "",
        ])

        machines.cluster.killAll()
        try machines.waitFor("A") { $0["state"] == "offline" }
        _ = try machines.set("A", "queued", "1")
        try machines.waitFor("A") { $0["queue"] == .integer(1) }
        let offline = try FinishedRun.run(Self.defaults, ["roaming"], environment: environment)
        #expect(offline.output.contains("Roaming through etcd: offline (no etcd endpoint answers; changes are queued)\n"))
        #expect(offline.output.contains("Changes waiting to be sent: 1\n"))
        let json = try FinishedRun.run(Self.defaults, ["--json", "roaming"], environment: environment)
        let parsed = try JSONParser.parse(json.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(parsed["state"] == "offline" && parsed["queue"] == .integer(1) && parsed["host"] == "A")
    }
}
