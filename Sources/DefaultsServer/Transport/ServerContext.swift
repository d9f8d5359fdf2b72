import DefaultsCore
import FoundationEssentials
import Glibc
import Logging
import NIOCore

/// What watches for changes made outside the socket. Owned by the state-owning loop.
struct OutsideChanges {
    let watcher: DirectoryWatcher
    let domainFiles: DomainFileWatcher
    let managed: ManagedPreferencesWatcher
}

/// State shared by all connections: the store and the daemon's counters.
///
/// Owned by the store's event loop; connection handlers run on the same loop. The daemon holds
/// it in a `NIOLoopBoundBox`, so reaching it from anywhere else traps.
final class ServerContext {
    let store: DefaultsStore
    let notifier: Notifier
    let bundles: InstalledBundles
    /// Nil where the daemon's parts are assembled without watching files (unit tests).
    let outside: OutsideChanges?
    /// Replaced on reload; read by new connections (line limit) and by the refusal checks.
    var configuration: DaemonConfiguration
    let logger: Logger
    let daemonUID: UInt32
    /// The descriptors the process may hold, which bound the connections it serves.
    let descriptors: DescriptorBudget
    let startedAt = Date()
    var connectionCount = 0
    var requestCount = 0
    var isStopping = false
    private var nextConnectionID: UInt64 = 1
    /// Open client channels, so shutdown can close them after the final flush.
    var channels: [UInt64: Channel] = [:]
    /// The defaults each connection registered for a domain it named (`register` with
    /// `domain`): an app's registration domain, shown to the other clients (`defaults
    /// read-effective`, the Settings app) while the app is connected.
    var registeredDefaults: [DomainName: [UInt64: [String: PlistValue]]] = [:]

    /// The defaults registered for `domain` by the connections open now; where two register a
    /// key, the newer connection's value.
    func registeredDefaults(of domain: DomainName) -> [String: PlistValue] {
        var values: [String: PlistValue] = [:]
        for (_, registered) in (registeredDefaults[domain] ?? [:]).sorted(by: { $0.key < $1.key }) {
            values.merge(registered) { _, newer in newer }
        }
        return values
    }

    /// Forgets what a closed connection registered for `domains`.
    func forgetRegistrations(of connection: UInt64, for domains: Set<DomainName>) {
        for domain in domains {
            registeredDefaults[domain]?[connection] = nil
            if registeredDefaults[domain]?.isEmpty == true { registeredDefaults[domain] = nil }
        }
    }

    init(
        store: DefaultsStore, notifier: Notifier, bundles: InstalledBundles, outside: OutsideChanges? = nil,
        configuration: DaemonConfiguration, logger: Logger, daemonUID: UInt32, descriptors: DescriptorBudget = .unbounded
    ) {
        self.store = store
        self.notifier = notifier
        self.bundles = bundles
        self.outside = outside
        self.configuration = configuration
        self.logger = logger
        self.daemonUID = daemonUID
        self.descriptors = descriptors
    }

    /// The connections served at most: `maximumConnections`, within the descriptors' budget.
    var connectionLimit: Int { descriptors.connectionLimit(configured: configuration.maximumConnections) }

    private var lastStatus = ""
    private var reporting: RepeatedTask?
    private var watchdogTask: RepeatedTask?

    /// "3 clients, 12 domains loaded, 0 dirty", for `systemctl status`.
    var statusLine: String {
        let counts = store.statistics()
        return "\(connectionCount) client\(connectionCount == 1 ? "" : "s"), \(counts.domainsLoaded) domain\(counts.domainsLoaded == 1 ? "" : "s") loaded, "
            + "\(counts.dirtyDomains) dirty"
    }

    /// Sends the status line when it changed, at most once a second, and the watchdog pings,
    /// both from the loop that owns the state: a wedged loop stops them.
    func startReporting(to manager: ServiceManagerLink) {
        lastStatus = statusLine
        let loop = store.eventLoop
        // The repeated task runs on this same loop; `stopReporting()` cancels it and so ends the reference.
        let bound = NIOLoopBound(self, eventLoop: loop)
        if manager.readsStatus {
            reporting = loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
                let server = bound.value
                let line = server.statusLine
                if line != server.lastStatus {
                    server.lastStatus = line
                    manager.status(line)
                }
            }
        }
        if let interval = manager.watchdogInterval {
            let half = TimeAmount.nanoseconds(max(interval.nanoseconds / 2, 1_000_000))
            manager.watchdog()
            watchdogTask = loop.scheduleRepeatedTask(initialDelay: half, delay: half) { _ in manager.watchdog() }
        }
    }

    func stopReporting() {
        reporting?.cancel()
        watchdogTask?.cancel()
    }

    func makeConnectionID() -> UInt64 {
        defer { nextConnectionID += 1 }
        return nextConnectionID
    }
}
