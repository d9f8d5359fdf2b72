import DefaultsCore
import Logging
import NIOCore
import NIOPosix

/// How the daemon's parts are put together: the one assembly the daemon runs and its tests use.
///
/// Every part it makes is owned by `loop`, the state-owning loop: the table of domains, the
/// write-behind that hands snapshots to `writer`, the notifier, the store, the Settings bundles,
/// the change journal (given its thread) and, given the managed files, the watchers of hand
/// edits and managed preferences.
enum DaemonAssembly {
    static func server(
        on loop: EventLoop, configuration: DaemonConfiguration, files: DomainFiles, writer: DurableWriter,
        scannerThread: NIOThreadPool, roamingJournalThread: NIOThreadPool? = nil, changeJournalThread: NIOThreadPool? = nil,
        managedFiles: ManagedPreferenceFiles? = nil, daemonUID: UInt32, descriptors: DescriptorBudget = .unbounded,
        logger: Logger
    ) -> ServerContext {
        let notifier = Notifier(eventLoop: loop)
        let watcher = DirectoryWatcher(eventLoop: loop, logger: logger)
        let bundles = InstalledBundles(
            eventLoop: loop, scannerThread: scannerThread, notifier: notifier, watcher: watcher,
            configuration: configuration, logger: logger)
        let table = DomainTable(eventLoop: loop, files: files)
        let writeBehind = WriteBehind(
            eventLoop: loop, source: table, writer: writer, coalesceDelay: configuration.coalesceDelay,
            maximumCoalesceDelay: configuration.maximumCoalesceDelay, logger: logger)
        let journal = changeJournalThread.map { thread in
            ChangeJournal(
                eventLoop: loop, stateDirectory: configuration.effectiveStateDirectory, thread: thread,
                configuration: configuration.journal, logger: logger)
        }
        if let journal {
            table.didWrite = { [journal] written in journal.domainsWritten(written) }
            bundles.didChangeSecureKeys = { [journal] keys in journal.secureKeysChanged(keys) }
        }
        let store = DefaultsStore(
            table: table, files: files, writeBehind: writeBehind, notifier: notifier, check: bundles, journal: journal,
            maximumDomainBytes: configuration.maximumDomainBytes, logger: logger)
        if configuration.roaming.isEnabled, let roamingJournalThread {
            store.roaming = RoamingState(
                eventLoop: loop, configuration: configuration.roaming, files: files, journalWriter: roamingJournalThread,
                writeBehind: writeBehind, logger: logger)
        }
        let outside = managedFiles.map { managedFiles in
            OutsideChanges(
                watcher: watcher, domainFiles: DomainFileWatcher(store: store, files: files, watcher: watcher, logger: logger),
                managed: ManagedPreferencesWatcher(store: store, files: managedFiles, watcher: watcher, logger: logger))
        }
        return ServerContext(
            store: store, notifier: notifier, bundles: bundles, outside: outside, configuration: configuration,
            logger: logger, daemonUID: daemonUID, descriptors: descriptors)
    }

    /// The handlers of one client connection, in pipeline order: admission, then the requests.
    static func connectionHandlers(
        for server: ServerContext, readPeer: @escaping PeerReader = PeerCredentials.of
    ) -> [ChannelHandler] {
        [AdmissionHandler(server: server, readPeer: readPeer), ConnectionHandler(server: server)]
    }
}
