import DefaultsCore
import FoundationEssentials
import Glibc
import NIOCore
import SettingsBundles

/// A response that is ready now, or later (`synchronize` waits for the disk).
enum PendingReply {
    case now(Result<Reply, DefaultsError>)
    case later(EventLoopFuture<Reply>)
}

/// Dispatches one request to the operation it names: turns it into calls on the store, the
/// notifier and the Settings bundles, and a reply.
///
/// A value made per request by the connection handler, on the state-owning loop.
struct RequestDispatcher {
    let server: ServerContext

    var store: DefaultsStore { server.store }

    func perform(_ request: Request, session: Session, sink: EventSink) -> PendingReply {
        server.requestCount += 1
        do throws(DefaultsError) {
            guard let operation = request.operation else {
                throw DefaultsError(.unknownOp, "unknown op \"\(request.op)\"")
            }
            switch operation {
            case .synchronize:
                return .later(store.synchronize().map { Reply.empty })
            case .history:
                return .later(try history(request, session: session))
            case .revert:
                try refuseWritesWhenStopping()
                return .later(try revert(request, session: session))
            case .registerBundle:
                let domain = try session.anyHostDomain(of: request)
                let path = try request.string("path")
                return .later(server.bundles.register(domain, path: path).map { installed in
                    Reply([
                        ("path", .string(installed.path)),
                        ("diagnostics", .integer(Int64(installed.bundle.diagnostics.count))),
                        ("defaults", .values(installed.bundle.defaults.app)),
                    ])
                })
            case .describeBundle where request.has("language"):
                // Another language means reading the bundle again: off the loop, then described on it.
                let domain = try session.anyHostDomain(of: request)
                guard let reading = server.bundles.bundle(for: domain, languages: [try request.string("language")]) else {
                    throw DefaultsError(.invalidParameter, "no Settings bundle is installed for \(domain)")
                }
                let dispatcher = self
                return .later(reading.assumeIsolated().flatMapThrowing { bundle in
                    try dispatcher.describeBundle(request, of: domain, in: bundle)
                }.nonisolated())
            default:
                return .now(.success(try performNow(operation, request, session: session, sink: sink)))
            }
        } catch {
            return .now(.failure(error))
        }
    }

    /// Every operation's answer that is ready at once. The switch names every operation, so a
    /// new one is a compile error until it is dispatched here or answered later in `perform`.
    private func performNow(
        _ operation: OperationName, _ request: Request, session: Session, sink: EventSink
    ) throws(DefaultsError) -> Reply {
        switch operation {
        case .synchronize, .registerBundle, .history, .revert:
            // Answered later, by `perform`, which never passes them here.
            throw DefaultsError(.unknownOp, "op \"\(operation.rawValue)\" is not answered at once")

        case .ping:
            return .empty

        case .hello:
            if let client = try request.optionalString("client") { session.origin.client = client }
            if request.has("appDomain") { session.appDomain = try request.domain("appDomain") }
            return Reply([
                ("protocol", .integer(ProtocolVersion.current)),
                ("server", .string("defaultsd \(ProtocolVersion.serverVersion)")),
                ("connection", .integer(Int64(session.id))),
                ("pid", .integer(Int64(getpid()))),
            ])

        case .get:
            let domain = try session.domain(of: request)
            let state = try store.state(of: domain)
            if request.has("key") {
                return .value(state.values[try request.key()], generation: state.generation)
            }
            // Forced keys are told with the domain every host sees, which a managed change re-reads.
            guard !domain.isCurrentHost, let forced = store.managed.forced[domain] else {
                return Reply([("value", .values(state.values)), ("generation", .integer(state.generation))])
            }
            return Reply([("value", .values(state.values)), ("generation", .integer(state.generation)), ("forced", .values(forced))])

        case .set:
            try refuseWritesWhenStopping()
            let domain = try session.domain(of: request)
            let key = try request.key()
            let value = try request.value()
            var changeset = Changeset(domain: domain)
            changeset.set(key, to: value)
            return .generation(try store.apply(changeset, origin: session.origin))

        case .remove:
            try refuseWritesWhenStopping()
            var changeset = Changeset(domain: try session.domain(of: request))
            changeset.remove(try request.key())
            return .generation(try store.apply(changeset, origin: session.origin))

        case .apply:
            try refuseWritesWhenStopping()
            let domain = try session.domain(of: request)
            guard request.has("set") || request.has("remove") else {
                throw DefaultsError(.missingParameter, "apply needs \"set\" and/or \"remove\"")
            }
            var changeset = Changeset(domain: domain)
            if request.has("set") {
                for (key, value) in try request.keyedValues("set") { changeset.set(key, to: value) }
            }
            for key in try request.stringArray("remove") ?? [] {
                try DefaultsKey.validate(key)
                if changeset[key] != nil {
                    throw DefaultsError(.invalidParameter, "key \"\(key)\" is both set and removed")
                }
                changeset.remove(key)
            }
            let expected = request.has("expect") ? try request.expectedValues("expect") : [:]
            return .generation(try store.apply(changeset, origin: session.origin, expecting: expected))

        case .replaceDomain:
            try refuseWritesWhenStopping()
            let domain = try session.domain(of: request)
            let values = try request.keyedValues("values")
            return .generation(try store.replace(domain, with: values, origin: session.origin))

        case .deleteDomain:
            try refuseWritesWhenStopping()
            let domain = try session.domain(of: request)
            let existed = !(try store.values(of: domain)).isEmpty
            let generation = try store.replace(domain, with: [:], origin: session.origin)
            return Reply([("existed", .bool(existed)), ("generation", .integer(generation))])

        case .domains:
            let host = try request.host()
            return Reply([("domains", .strings(store.domainNames().filter { $0.host == host }.map(\.rawValue)))])

        case .register:
            let defaults = try request.keyedValues("defaults")
            let domain = request.has("domain") ? try session.anyHostDomain(of: request) : nil
            let merged = session.registration.merging(defaults) { _, new in new }
            let size = DomainState.size(of: merged)
            guard merged.count <= Session.maximumRegisteredKeys, size <= Session.maximumRegisteredBytes else {
                throw DefaultsError(
                    .tooLarge,
                    "a connection may register \(Session.maximumRegisteredKeys) keys and \(Session.maximumRegisteredBytes) bytes; this would be \(merged.count) keys and \(size) bytes")
            }
            if let domain, !session.publishedDomains.contains(domain), session.publishedDomains.count >= Session.maximumPublishedDomains {
                throw DefaultsError(.tooLarge, "a connection may register defaults for \(Session.maximumPublishedDomains) domains")
            }
            session.registration = merged
            if let domain {
                session.publishedDomains.insert(domain)
                server.registeredDefaults[domain, default: [:]][session.id, default: [:]].merge(defaults) { _, new in new }
            }
            return Reply([("count", .integer(Int64(session.registration.count)))])

        case .registeredDefaults:
            let domain = try session.anyHostDomain(of: request)
            return Reply([("values", .values(server.registeredDefaults(of: domain)))])

        case .lookup:
            let key = try request.key()
            // Every domain's current-host variant is in the search list already.
            let appDomain = request.has("domain") ? try session.anyHostDomain(of: request) : session.appDomain
            let list = SearchList(appDomain: appDomain, suites: try request.domains("suites") ?? [])
            let found = try store.lookup(
                key, in: list, bundleDefaults: server.bundles.defaultsByDomain, registration: session.registration)
            var fields: [(String, Reply.Field)] = [("value", .value(found?.value)), ("domain", .string(found?.layer.name))]
            if case .persistent(let domain)? = found?.layer, domain.isCurrentHost {
                fields.append(("host", .string(DomainName.Host.currentWireValue)))
            }
            fields.append(("layer", .string(found?.layer.kind)))
            return Reply(fields)

        case .bundleDefaults:
            let domain = try session.anyHostDomain(of: request)
            return Reply([
                ("values", .values(server.bundles.defaultsByDomain[domain] ?? [:])),
                ("path", .string(server.bundles.bundle(for: domain)?.path)),
            ])

        case .listBundles:
            var list = JSONWriter()
            list.beginArray()
            for (domain, installed) in server.bundles.installed.sorted(by: { $0.key < $1.key }) {
                list.beginObject()
                list.key("domain"); list.string(domain.rawValue)
                list.key("title"); if let title = installed.bundle.title { list.string(title) } else { list.null() }
                list.key("path"); list.string(installed.path)
                list.key("language"); if let language = installed.bundle.language { list.string(language) } else { list.null() }
                list.key("diagnostics"); list.integer(Int64(installed.bundle.diagnostics.count))
                list.endObject()
            }
            list.endArray()
            return Reply([("bundles", .raw(list.bytes))])

        case .describeBundle:
            let domain = try session.anyHostDomain(of: request)
            guard let installed = server.bundles.bundle(for: domain) else {
                throw DefaultsError(.invalidParameter, "no Settings bundle is installed for \(domain)")
            }
            return try describeBundle(request, of: domain, in: installed.bundle)

        case .subscribe:
            if try request.bool("all") == true {
                server.notifier.subscribeToEverything(sink)
                return .empty
            }
            guard let domains = try request.domains("domains", host: try request.host()) else {
                throw DefaultsError(.missingParameter, "subscribe needs \"domains\" or \"all\":true")
            }
            var generations: [DomainName: Int64] = [:]
            for domain in domains { generations[domain] = try store.stateKeptInMemory(of: domain).generation }
            server.notifier.subscribe(sink, to: domains)
            return Reply([("generations", .generations(generations))])

        case .unsubscribe:
            if let domains = try request.domains("domains", host: try request.host()) {
                server.notifier.unsubscribe(sink, from: domains)
            } else {
                server.notifier.unsubscribeFromEverything(sink)
            }
            return .empty

        case .export:
            let domain = try session.domain(of: request)
            let data = try PropertyListFile.encode(try store.values(of: domain), format: .xml)
            return Reply([("plist", .string(String(decoding: data, as: UTF8.self)))])

        case .`import`:
            try refuseWritesWhenStopping()
            let domain = try session.domain(of: request)
            let values = try PropertyListFile.decode(Data(try request.string("plist").utf8))
            for key in values.keys { try DefaultsKey.validate(key) }
            return .generation(try store.replace(domain, with: values, origin: session.origin))

        case .stats:
            return try statistics(request, session: session)
        }
    }

    func refuseWritesWhenStopping() throws(DefaultsError) {
        if server.isStopping { throw DefaultsError(.shuttingDown, "defaultsd is shutting down") }
    }
}
