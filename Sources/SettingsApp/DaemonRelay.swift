import DefaultsClient
import DefaultsCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// The Settings app's one connection to defaultsd: requests from every page go through it, and
/// the daemon's events become the ``LiveHub``'s notices. When the daemon is not running or goes
/// away, it says so once (the pages show one line) and connects again every half second until the
/// daemon is back, then tells the pages to ask again.
///
/// A `Service`: runs for the life of the ``SettingsServer``; the connection is its own.
final class DaemonRelay: Service, Sendable {
    struct Unreachable: Error, CustomStringConvertible {
        var description: String { "defaultsd is not running" }
    }

    let socketPath: String
    private let hub: LiveHub
    private let logger: Logger
    private let current = NIOLockedValueBox<DaemonChannel?>(nil)
    static let retryDelay = Duration.milliseconds(500)
    /// The longest a page's request waits for the daemon, which answers in microseconds: past it
    /// the page is told, and the connection is made again.
    static let requestTimeout = TimeAmount.seconds(10)
    /// Ends after the first attempt to connect, made or failed: the server reports ready only
    /// then, so a page opened at once finds the daemon if it runs.
    let firstAttempt: AsyncStream<Void>
    private let firstAttemptDone: AsyncStream<Void>.Continuation

    init(socketPath: String, hub: LiveHub, logger: Logger) {
        self.socketPath = socketPath
        self.hub = hub
        self.logger = logger
        (firstAttempt, firstAttemptDone) = AsyncStream.makeStream(of: Void.self)
    }

    /// One request to the daemon; throws ``Unreachable`` while it is not connected, and
    /// `DaemonChannel.TimedOut` when it does not answer within ``requestTimeout``.
    func request(_ request: JSON) async throws -> JSON {
        guard let channel = current.withLockedValue({ $0 }) else { throw Unreachable() }
        do {
            return try await channel.request(request, timeout: Self.requestTimeout)
        } catch let timedOut as DaemonChannel.TimedOut {
            logger.warning("defaultsd did not answer in time; connecting again", metadata: ["error": "\(timedOut)"])
            throw timedOut
        } catch {
            throw Unreachable()
        }
    }

    func run() async throws {
        var reportedDown = false
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let channel = try await DaemonChannel.connect(socketPath: socketPath)
                _ = try await channel.request(.request(.hello, ["client": "defaultsd-settings"]))
                _ = try await channel.request(.request(.subscribe, ["all": true]))
                current.withLockedValue { $0 = channel }
                logger.info("connected to defaultsd", metadata: ["socket": "\(socketPath)"])
                reportedDown = false
                hub.send(.daemon(reachable: true))
                firstAttemptDone.finish()
                await withGracefulShutdownHandler {
                    for await event in channel.events { forward(event) }
                } onGracefulShutdown: {
                    channel.close()
                }
                current.withLockedValue { $0 = nil }
                // At stop the relay closed the connection itself: nothing to report.
                if Task.isCancelled || Task.isShuttingDownGracefully { return }
                hub.send(.daemon(reachable: false))
                logger.notice("the connection to defaultsd closed; reconnecting")
                reportedDown = true
            } catch {
                if !reportedDown {
                    logger.notice("defaultsd is not reachable; retrying", metadata: ["socket": "\(socketPath)", "error": "\(error)"])
                    reportedDown = true
                }
                hub.send(.daemon(reachable: false))
                firstAttemptDone.finish()
            }
            try? await Task.sleep(for: Self.retryDelay)
        }
    }

    private func forward(_ event: JSON) {
        guard let name = EventName(of: event), case .string(let domain)? = event["domain"] else { return }
        switch name {
        case .didChange: hub.send(.changed(domain: domain))
        // A bundle installed, changed or removed: the list of apps and its panes may differ.
        case .bundleDefaultsChanged: hub.send(.bundlesChanged)
        }
    }
}
