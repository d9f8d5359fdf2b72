import Logging
import NIOCore
import NIOPosix

/// What roaming writes to disk (the journal, after the domain files it describes) and logs of
/// the cluster's reachability.
extension RoamingState {
    // MARK: - Reachability

    /// Records whether the cluster answered (``RoamingReachability/reached(_:problem:queued:domains:revision:)``),
    /// with what this machine has queued and applied for the log.
    func reached(_ answered: Bool, problem: String? = nil) {
        reachability.reached(answered, problem: problem, queued: queue.count, domains: domains, revision: revision)
    }

    // MARK: - The journal

    /// Writes the journal soon, after the domain files it describes are durable: never a
    /// revision ahead of the values applied from it, nor a queue behind what it must send.
    func markJournal() {
        journalDirty = true
        guard !journalScheduled else { return }
        journalScheduled = true
        eventLoop.assumeIsolated().scheduleTask(in: RoamingState.journalDelay) { [self] in writeJournal() }
    }

    private func writeJournal() {
        journalDirty = false
        let contents = journalContents
        let journal = self.journal
        writeBehind.synchronize().flatMap { [journalWriter, eventLoop] in
            journalWriter.runIfActive(eventLoop: eventLoop) { try journal.write(contents) }
        }.assumeIsolated().whenComplete { [self] result in
            if case .failure(let error) = result {
                logger.error("could not write the roaming journal", metadata: ["error": "\(error)"])
                journalDirty = true
            }
            journalScheduled = false
            if journalDirty { markJournal() }
        }
    }

    private var journalContents: RoamingJournal.Contents {
        RoamingJournal.Contents(prefix: keys.prefix, revision: revision, seen: seen, synced: synced, queue: Array(queue.keys))
    }

    /// The last write of the journal, at stop, after the last flush of the domain files.
    func writeJournalNow() {
        eventLoop.preconditionInEventLoop()
        do { try journal.write(journalContents) } catch {
            logger.error("could not write the roaming journal", metadata: ["error": "\(error.message)"])
        }
    }
}
