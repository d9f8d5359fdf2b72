import Foundation
import Logging
import NIOCore

/// State shared by all connections: the store and the daemon's counters.
///
/// Owned by the store's event loop; connection handlers run on the same loop.
final class ServerContext: @unchecked Sendable {
    let store: DefaultsStore
    let configuration: DaemonConfiguration
    let logger: Logger
    let daemonUID: UInt32
    let startedAt = Date()
    var connectionCount = 0
    var requestCount = 0
    var isStopping = false
    private var nextConnectionID: UInt64 = 1
    /// Open client channels, so shutdown can close them after the final flush.
    var channels: [UInt64: Channel] = [:]

    init(store: DefaultsStore, configuration: DaemonConfiguration, logger: Logger, daemonUID: UInt32) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        self.daemonUID = daemonUID
    }

    func makeConnectionID() -> UInt64 {
        defer { nextConnectionID += 1 }
        return nextConnectionID
    }
}
