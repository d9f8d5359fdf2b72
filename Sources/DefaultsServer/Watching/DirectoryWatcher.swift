import Glibc
import Logging
import NIOCore
import NIOPosix

/// Watches directories with inotify and hands each event to the part that asked for it.
///
/// Owned by the store's event loop: the inotify descriptor is read there as a SwiftNIO pipe
/// channel, and every watch is added, removed and served there. One path has one watch (the
/// kernel's rule), so each directory belongs to one part. A lost-events signal (the kernel's
/// queue overflowed) goes to every part.
///
/// ```swift
/// let watcher = DirectoryWatcher(eventLoop: loop, logger: logger)
/// try watcher.watch("/srv/prefs", mask: DirectoryWatcher.fileChanges) { event in print(event.name) }
/// _ = watcher.start()
/// ```
final class DirectoryWatcher {
    typealias Handler = (InotifyEvent) -> Void

    /// A file in the directory was written and closed, renamed in or out, or deleted. A file
    /// just created is not yet written: its `IN_CLOSE_WRITE` follows.
    /// `IN_CREATE` for a symbolic link made again (stow, home-manager), which raises no other event.
    static let fileChanges = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE)

    private let eventLoop: EventLoop
    private let logger: Logger
    /// The inotify descriptor until the channel takes it over; -1 when inotify is unavailable.
    private var descriptor: Int32
    private var channel: Channel?
    private var handlers: [Int32: Handler] = [:]

    /// Why a watch could not be added.
    struct WatchError: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "cannot watch \(path): \(reason)" }
    }

    init(eventLoop: EventLoop, logger: Logger) {
        self.eventLoop = eventLoop
        self.logger = logger
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if descriptor < 0 {
            logger.warning("inotify is unavailable; changes made outside the daemon are found by polling or at restart",
                           metadata: ["error": "\(String(cString: strerror(errno)))"])
        }
    }

    var isAvailable: Bool { descriptor >= 0 }

    /// Starts reading events. Watches added before this see every event from their addition on.
    func start() -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        guard descriptor >= 0, channel == nil else { return eventLoop.makeSucceededVoidFuture() }
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        return NIOPipeBootstrap(group: eventLoop)
            // inotify refuses a read into a buffer smaller than one event (16 bytes and a name of
            // up to 255): a fixed buffer keeps NIO's adaptive one from shrinking below that.
            .channelOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 64 * 1024))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        ByteToMessageHandler(InotifyEventDecoder()), EventDispatcher(watcher: bound))
                }
            }
            .takingOwnershipOfDescriptor(input: descriptor)
            .assumeIsolated()
            .map { [self] channel in self.channel = channel }
            .nonisolated()
    }

    /// Watches `path` for the events in `mask`; `handler` runs on the loop for each.
    @discardableResult
    func watch(_ path: String, mask: UInt32, _ handler: @escaping Handler) throws(WatchError) -> Int32 {
        eventLoop.preconditionInEventLoop()
        guard descriptor >= 0 else { throw WatchError(path: path, reason: "inotify is unavailable") }
        let watch = inotify_add_watch(descriptor, path, mask)
        guard watch >= 0 else { throw WatchError(path: path, reason: String(cString: strerror(errno))) }
        handlers[watch] = handler
        return watch
    }

    func unwatch(_ watch: Int32) {
        eventLoop.preconditionInEventLoop()
        guard handlers.removeValue(forKey: watch) != nil, descriptor >= 0 else { return }
        inotify_rm_watch(descriptor, watch)
    }

    func stop() -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        handlers = [:]
        defer { descriptor = -1 }
        if let channel { return channel.close() }
        if descriptor >= 0 { close(descriptor) }
        return eventLoop.makeSucceededVoidFuture()
    }

    fileprivate func dispatch(_ event: InotifyEvent) {
        if event.isOverflow {
            logger.warning("the kernel dropped file events; looking at every watched directory again")
            for handler in handlers.values { handler(event) }
            return
        }
        guard let handler = handlers[event.watch] else { return }
        if event.endsWatch { handlers[event.watch] = nil }
        handler(event)
    }

    /// Hands decoded events to the watcher; the last handler of the inotify channel.
    private final class EventDispatcher: ChannelInboundHandler {
        typealias InboundIn = InotifyEvent
        let watcher: NIOLoopBound<DirectoryWatcher>

        init(watcher: NIOLoopBound<DirectoryWatcher>) { self.watcher = watcher }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            watcher.value.dispatch(unwrapInboundIn(data))
        }
    }
}
