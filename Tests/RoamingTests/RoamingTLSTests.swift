import DaemonTestSupport
import LocalServices
import DefaultsCore
import Foundation
import TestThreads
import Testing

/// Roaming to an etcd member that speaks only TLS and asks for a client certificate
/// (`--client-cert-auth`), with a CA and certificates made for the test by openssl.
@Suite("Roaming over TLS with a client certificate", .ownThreads)
struct RoamingTLSTests {
    @Test("with the CA and the client certificate the daemon roams; without the certificate it is refused and logged once")
    func clientCertificate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("defaultsd-tls-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "[req]\ndistinguished_name=dn\n[dn]\n[ext]\nsubjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n"
            .write(toFile: directory + "/ext.cnf", atomically: true, encoding: .utf8)
        let openssl = { (arguments: [String]) throws in
            let run = try FinishedRun.run("/usr/bin/openssl", arguments, environment: ["PATH": "/usr/bin:/bin"], in: directory)
            if run.status != 0 { throw EtcdClusterFailure("openssl \(arguments): \(run.output)") }
        }
        try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=test-ca"])
        for name in ["server", "client"] {
            try openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=\(name)"])
            try openssl(["x509", "-req", "-in", "\(name).csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "\(name).pem",
                         "-days", "1", "-extfile", "ext.cnf", "-extensions", "ext"])
        }
        let member = try EtcdCluster(size: 1, tls: (certificate: directory + "/server.pem", key: directory + "/server.key", ca: directory + "/ca.pem"))

        func machine(_ host: String, clientCertificate: Bool) throws -> DaemonProcess {
            let certificate = clientCertificate
                ? #", certificateFile: "\#(directory)/client.pem", privateKeyFile: "\#(directory)/client.key""# : ""
            let path = "\(directory)/\(host).json"
            try """
                { roaming: { endpoints: ["\(member.endpoints[0])"], domains: ["com.example.tls"], hostName: "\(host)",
                  trustedCAFile: "\(directory)/ca.pem"\(certificate) } }
                """.write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            return try DaemonProcess(arguments: ["--config", path])
        }
        #expect(member.endpoints[0].hasPrefix("https://"))
        let a = try machine("A", clientCertificate: true)
        let b = try machine("B", clientCertificate: true)
        #expect(a.waitForLog("roaming through etcd") && b.waitForLog("roaming through etcd"))
        let onB = try b.connect()
        _ = try onB.request(#"{"op":"subscribe","domains":["com.example.tls"]}"#)
        _ = try a.connect().request(#"{"op":"set","domain":"com.example.tls","key":"secure","value":true}"#)
        let event = try JSONParser.parse(try onB.readEvent(timeout: 2))
        #expect(event["changes"] == ["secure": true] && event["origin"]?["host"] == "A")

        let anonymous = try machine("C", clientCertificate: false)
        #expect(anonymous.waitForLog("lost the etcd cluster"))
        #expect(anonymous.logText.contains("BAD_CERTIFICATE"))
        #expect(anonymous.logOccurrences(of: "lost the etcd cluster") == 1)
    }
}
