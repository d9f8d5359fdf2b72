import DefaultsCore
import NIOCore
import NIOPosix

/// What `WriteBehind` snapshots: the state it hands to the writer.
protocol SnapshotSource: AnyObject {
    func snapshot(of dirty: Set<DomainName>) -> WriteBehind.Snapshot
}

/// What a flush did not write: the domains that failed, and those deferred because their file
/// holds an edit the daemon has not read yet (written at the next flush, after it is read).
struct FlushOutcome: Sendable, Equatable {
    var failures: [DomainName: DefaultsError] = [:]
    var deferred: Set<DomainName> = []
}

/// Makes a snapshot durable: the generation ledger first, then each domain's file. Answers, on
/// the state-owning loop, what was not written. The future never fails: a writer that cannot
/// run at all reports every domain of the snapshot as failed, so `WriteBehind` keeps them dirty
/// and retries.
protocol DurableWriter {
    func write(_ snapshot: WriteBehind.Snapshot) -> EventLoopFuture<FlushOutcome>
}

/// The daemon's writer: one thread of its own, so the event loop never waits for the disk.
struct ThreadedFileWriter: DurableWriter {
    let eventLoop: EventLoop
    let thread: NIOThreadPool
    let files: DomainFiles

    func write(_ snapshot: WriteBehind.Snapshot) -> EventLoopFuture<FlushOutcome> {
        let files = self.files
        return thread.runIfActive(eventLoop: eventLoop) { files.write(snapshot) }
            .flatMapErrorThrowing { error in
                FlushOutcome(failures: Dictionary(
                    uniqueKeysWithValues: snapshot.domains.map { ($0.0, DefaultsError(.ioError, "writer unavailable: \(error)")) }))
            }
    }
}

extension DomainFiles {
    /// Writes a snapshot: the ledger, then each domain (temporary file, fsync, rename, fsync of
    /// the directory). Without the ledger a generation could go backwards after a crash, so a
    /// failed ledger write writes nothing.
    func write(_ snapshot: WriteBehind.Snapshot) -> FlushOutcome {
        var outcome = FlushOutcome()
        do throws(DefaultsError) {
            try GenerationLedger(files: self).write(snapshot.generations)
        } catch {
            for (domain, _) in snapshot.domains { outcome.failures[domain] = error }
            return outcome
        }
        for (domain, values) in snapshot.domains {
            do throws(DefaultsError) {
                if try write(domain, values: values) == .deferred { outcome.deferred.insert(domain) }
            } catch {
                outcome.failures[domain] = error
            }
        }
        return outcome
    }
}
