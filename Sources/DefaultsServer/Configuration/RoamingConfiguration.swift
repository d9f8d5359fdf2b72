import DefaultsCore
import EtcdWire
import EtcdGateway
import FoundationEssentials
import Glibc

/// Which domains follow the user to their other machines, through which etcd cluster
/// (docs/ROAMING.md). Off while `endpoints` is empty, the default.
///
/// ```json5
/// // defaultsd.json
/// { roaming: { endpoints: ["http://10.0.0.2:2379", "http://10.0.0.3:2379"], domains: ["com.example.editor"] } }
/// ```
public struct RoamingConfiguration: Sendable, Hashable {
    /// Client URLs of the etcd members; empty: roaming is off.
    public var endpoints: [String] = []
    /// The domains that roam; every other domain, and every by-host domain, stays on the machine.
    public var domains: [DomainName] = []
    /// Where this user's keys live in etcd: `/defaultsd/<user name>/` unless set.
    public var prefix: String
    /// The name other machines see as the writer of this machine's changes; unique per machine.
    public var hostName: String
    /// etcd's user and password, if the cluster has authentication on. Never logged or printed.
    public var user: String?
    public var password: String?
    /// PEM files: a client certificate and its key, and the CA of the members' certificates.
    public var certificateFile: String?
    public var privateKeyFile: String?
    public var trustedCAFile: String?
    /// Whether the password may travel over `http://`, where anyone on the path reads it: only
    /// when the configuration says so (a cluster on loopback, or a trusted network).
    public var sendPasswordOverHTTP = false

    public var isEnabled: Bool { !endpoints.isEmpty }

    /// True when the configuration holds a secret (a password, or a private key's path) and so
    /// must come from a file only its owner can read.
    var holdsCredentials: Bool { password != nil || privateKeyFile != nil }

    public init(userName: String, hostName: String) {
        self.prefix = "/defaultsd/\(userName)/"
        self.hostName = hostName
    }

    /// The defaults for the user running the daemon on this machine.
    public static func standard() -> RoamingConfiguration {
        RoamingConfiguration(userName: DefaultsDaemon.userName, hostName: machineHostName())
    }

    static func machineHostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The etcd client's view of it.
    var etcd: EtcdClient.Configuration {
        var etcd = EtcdClient.Configuration(endpoints: endpoints)
        etcd.user = user
        etcd.password = password
        etcd.certificateFile = certificateFile
        etcd.privateKeyFile = privateKeyFile
        etcd.trustedCAFile = trustedCAFile
        return etcd
    }

    /// What makes the section unusable as a whole, after every key was read: `file` is where it
    /// came from, checked to be readable by its owner only when it holds a secret.
    func problems(file: String?) -> ConfigurationError? {
        guard isEnabled || !domains.isEmpty || user != nil || holdsCredentials else { return nil }
        if !isEnabled {
            return ConfigurationError(file: file, key: "roaming.endpoints", message: "roaming needs at least one etcd endpoint")
        }
        if (user == nil) != (password == nil) {
            return ConfigurationError(file: file, key: "roaming.user", message: "roaming.user and roaming.password go together")
        }
        if password != nil, !sendPasswordOverHTTP, let plain = endpoints.first(where: { $0.hasPrefix("http://") }) {
            return ConfigurationError(
                file: file, key: "roaming.endpoints",
                message: "\(plain) would carry the etcd password unencrypted; use https://, or set roaming.sendPasswordOverHTTP to true")
        }
        if (certificateFile == nil) != (privateKeyFile == nil) {
            return ConfigurationError(
                file: file, key: "roaming.certificateFile", message: "roaming.certificateFile and roaming.privateKeyFile go together")
        }
        for path in [certificateFile, privateKeyFile, trustedCAFile].compactMap({ $0 }) where access(path, R_OK) != 0 {
            return ConfigurationError(file: file, key: "roaming", message: "\(path) cannot be read")
        }
        if holdsCredentials, let file {
            var info = stat()
            if stat(file, &info) == 0, info.st_mode & 0o044 != 0 {
                return ConfigurationError(
                    file: file, key: "roaming",
                    message: "holds credentials but others can read it (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
            }
        }
        return nil
    }
}
