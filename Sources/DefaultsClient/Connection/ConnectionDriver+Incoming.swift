import DefaultsCore
import DequeModule
import Logging
import NIOCore

/// What the daemon sends: each answer matched, by position, to the request it answers, and the
/// events, applied to the cache.
extension ConnectionDriver {
    func received(_ message: DaemonMessage, on channel: Channel) {
        eventLoop.preconditionInEventLoop()
        eventLoop.preconditionInEventLoop()
        guard case .connected(let current) = phase, current === channel else { return }
        switch message {
        case .response(let json): handleResponse(json)
        case .event(let json) where EventName(of: json) == .bundleDefaultsChanged: bundleDefaultsChanged(json, on: channel)
        case .event(let json): handleEvent(json, on: channel)
        }
    }

    private func handleResponse(_ json: JSON) {
        guard let expectation = inFlight.popFirst() else {
            logger.warning("defaultsd sent an answer nobody asked for", metadata: ["line": "\(SystemText.excerpt("\(json)"))"])
            return
        }
        let error = DefaultsError(answer: json)
        switch expectation {
        case .hello:
            if case .integer(let number)? = json["connection"] { connectionNumber = number }
            if let error { logger.warning("hello refused", metadata: ["error": "\(error)"]) }

        case .subscribe:
            if let error { logger.warning("subscribe refused", metadata: ["error": "\(error)"]) }

        case .register:
            if let error { logger.warning("registering defaults refused", metadata: ["error": "\(error)"]) }

        case .get(let domain, let origin):
            awaitingGet.remove(domain)
            guard error == nil, case .object(let members)? = json["value"], case .integer(let generation)? = json["generation"] else {
                logger.warning("get refused", metadata: ["domain": "\(domain)", "error": "\(SystemText.excerpt(error.map { "\($0)" } ?? "\(json)"))"])
                return
            }
            let values = DaemonMessages.values(members)
            log(values.skipped, of: domain, "skipped a value the daemon sent")
            var forced: [String: PlistValue] = [:]
            if case .object(let members)? = json["forced"] {
                let decoded = DaemonMessages.values(members)
                log(decoded.skipped, of: domain, "skipped a forced value the daemon sent")
                forced = decoded.values
            }
            let tickets = cache.update { $0.load(domain, values: values.values, generation: generation, forced: forced, origin: origin) }
            for ticket in tickets { ticket.succeed() }

        case .bundleDefaults(let domain, let origin):
            guard error == nil, case .object(let members)? = json["values"] else {
                // A daemon without Settings bundle support answers `unknown_op`: no bundle layer.
                let level: Logger.Level = error?.code == .unknownOp ? .debug : .warning
                logger.log(level: level, "bundleDefaults refused", metadata: ["domain": "\(domain)", "error": "\(SystemText.excerpt(error.map { "\($0)" } ?? "\(json)"))"])
                return
            }
            let values = DaemonMessages.values(members)
            log(values.skipped, of: domain, "skipped a bundle default the daemon sent")
            cache.update { ((), $0.setBundleDefaults(values.values, of: domain, origin: origin)) }

        case .write(let sequence, let domain, let ticket):
            let item = queue.removeFirst()
            sent -= 1
            if error?.code == .shuttingDown {
                // Not carried out: the daemon is stopping. The write stays in the cache and goes
                // to the next daemon, in order, as if the connection had been lost before it.
                deferred.append(item)
            } else if let error {
                logger.warning("defaultsd refused a write", metadata: ["domain": "\(domain)", "error": "\(error)"])
                cache.update { ((), $0.refuse(sequence, in: domain, error: error)) }
                ticket?.fail(.writeRefused(domain: domain.rawValue, error))
            } else {
                if case .integer(let generation)? = json["generation"] {
                    cache.update { ((), $0.acknowledge(sequence, in: domain, generation: generation)) }
                }
                ticket?.succeed()
            }

        case .synchronize(let ticket):
            queue.removeFirst()
            sent -= 1
            let failures = cache.state.withLock { $0.takeFailures() }
            if let error {
                ticket.fail(.notDurable(error))
            } else if !deferred.isEmpty {
                ticket.fail(.unavailable("defaultsd is stopping; earlier writes wait for it to restart"))
            } else if let failure = failures.first {
                ticket.fail(failure)
            } else {
                ticket.succeed()
            }
        }
    }

    private func handleEvent(_ json: JSON, on channel: Channel) {
        guard let event = DaemonMessages.didChange(json), !awaitingGet.contains(event.domain) else { return }
        log(event.skipped, of: event.domain, "skipped a value the daemon sent")
        let origin = DaemonMessages.changeOrigin(event.origin, ownConnection: connectionNumber)
        if origin == .managed {
            // The event holds the keys' effective values; which keys are forced, and the user's
            // own values beneath them, come with the domain.
            awaitingGet.insert(event.domain)
            send(Requests.get(event.domain), expecting: .get(event.domain, origin: .managed), on: channel)
            channel.flush()
            return
        }
        cache.update { ((), $0.applyEvent(to: event.domain, generation: event.generation, changes: event.changes, origin: origin)) }
    }

    private func log(_ skipped: [DaemonMessages.Skipped], of domain: DomainName, _ message: Logger.Message) {
        for member in skipped {
            logger.warning(message, metadata: ["domain": "\(domain)", "key": "\(member.key)", "error": "\(member.error)"])
        }
    }

    /// A domain's bundle layer changed: ask for it again. The answer comes after the event, so it
    /// holds the new layer (or a later one, itself followed by another event).
    func bundleDefaultsChanged(_ json: JSON, on channel: Channel) {
        guard case .string(let name)? = json["domain"], let domain = try? DomainName(name),
            domain != .global, known.contains(domain)
        else { return }
        send(Requests.bundleDefaults(domain), expecting: .bundleDefaults(domain, origin: .settingsBundle), on: channel)
        channel.flush()
    }
}
