import DefaultsCore
import NIOCore
import NIOPosix

/// What `WriteBehind` snapshots: the state it hands to the writer.
protocol SnapshotSource: AnyObject {
    func snapshot(of dirty: Set<DomainName>) -> WriteBehind.Snapshot
}

/// Makes a snapshot durable: the generation ledger first, then each domain's file. Answers, on
/// the state-owning loop, the domains that could not be written. The future never fails: a
/// writer that cannot run at all reports every domain of the snapshot as not written, so
/// `WriteBehind` keeps them dirty and retries.
protocol DurableWriter {
    func write(_ snapshot: WriteBehind.Snapshot) -> EventLoopFuture<[DomainName: DefaultsError]>
}

/// The daemon's writer: one thread of its own, so the event loop never waits for the disk.
struct ThreadedFileWriter: DurableWriter {
    let eventLoop: EventLoop
    let thread: NIOThreadPool
    let files: DomainFiles

    func write(_ snapshot: WriteBehind.Snapshot) -> EventLoopFuture<[DomainName: DefaultsError]> {
        let files = self.files
        return thread.runIfActive(eventLoop: eventLoop) { files.write(snapshot) }
            .flatMapErrorThrowing { error in
                Dictionary(uniqueKeysWithValues: snapshot.domains.map { ($0.0, DefaultsError(.ioError, "writer unavailable: \(error)")) })
            }
    }
}

extension DomainFiles {
    /// Writes a snapshot: the ledger, then each domain (temporary file, fsync, rename, fsync of
    /// the directory). Without the ledger a generation could go backwards after a crash, so a
    /// failed ledger write writes nothing.
    func write(_ snapshot: WriteBehind.Snapshot) -> [DomainName: DefaultsError] {
        var failures: [DomainName: DefaultsError] = [:]
        do throws(DefaultsError) {
            try GenerationLedger(files: self).write(snapshot.generations)
        } catch {
            for (domain, _) in snapshot.domains { failures[domain] = error }
            return failures
        }
        for (domain, values) in snapshot.domains {
            do throws(DefaultsError) { try write(domain, values: values) } catch { failures[domain] = error }
        }
        return failures
    }
}
