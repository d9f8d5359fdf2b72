import DefaultsCore
import NIOConcurrencyHelpers

/// The open pages' live connections, and what they are told: which domain changed, that the
/// installed bundles changed, whether the daemon is reachable. Messages name domains only, never
/// values: a page asks again for what it shows, through the same masking as every other answer,
/// so a secure value cannot travel on a WebSocket.
///
/// Owned by the ``SettingsServer``; every WebSocket handler registers itself for its lifetime.
final class LiveHub: Sendable {
    enum Notice: Equatable, Sendable {
        case changed(domain: String)
        case bundlesChanged
        case daemon(reachable: Bool)

        var text: String {
            var writer = JSONWriter()
            switch self {
            case .changed(let domain): writer.json(["type": "changed", "domain": .string(domain)])
            case .bundlesChanged: writer.json(["type": "bundles"])
            case .daemon(let reachable): writer.json(["type": "daemon", "reachable": .bool(reachable)])
            }
            return String(decoding: writer.bytes, as: UTF8.self)
        }
    }

    private struct State {
        var pages: [Int: AsyncStream<Notice>.Continuation] = [:]
        var nextPage = 0
        var daemonReachable = false
    }
    private let state = NIOLockedValueBox(State())

    /// A stream of notices for one page, starting with whether the daemon is reachable. It ends
    /// when the returned `leave` is called.
    func join() -> (notices: AsyncStream<Notice>, leave: @Sendable () -> Void) {
        let (stream, continuation) = AsyncStream.makeStream(of: Notice.self, bufferingPolicy: .bufferingNewest(256))
        let page = state.withLockedValue { state in
            defer { state.nextPage += 1 }
            state.pages[state.nextPage] = continuation
            continuation.yield(.daemon(reachable: state.daemonReachable))
            return state.nextPage
        }
        return (stream, { [state] in
            state.withLockedValue { $0.pages.removeValue(forKey: page) }?.finish()
        })
    }

    func send(_ notice: Notice) {
        state.withLockedValue { state in
            if case .daemon(let reachable) = notice {
                guard state.daemonReachable != reachable else { return }
                state.daemonReachable = reachable
            }
            for page in state.pages.values { page.yield(notice) }
        }
    }

    var pageCount: Int { state.withLockedValue { $0.pages.count } }
}
