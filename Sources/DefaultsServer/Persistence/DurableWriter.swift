import DefaultsCore
import NIOCore
import NIOPosix

/// What `WriteBehind` snapshots: the state it hands to the writer, and where what the writer
/// did is recorded, on the loop, when it answers.
protocol SnapshotSource: AnyObject {
    func snapshot(of dirty: Set<DomainName>) -> WriteBehind.Snapshot
    func record(_ outcome: FlushOutcome, of snapshot: WriteBehind.Snapshot)
}

/// What a flush did, as the writer answers it to the loop: the files it wrote or removed, the
/// refused versions it kept aside, the ledger it made durable; and what it did not write: the
/// domains that failed, and those deferred because their file holds an edit the daemon has not
/// read yet (written at the next flush, after it is read).
struct FlushOutcome: Sendable, Equatable {
    /// A domain's file as the flush left it.
    enum WrittenFile: Sendable, Equatable {
        case version(FileVersion)
        case removed
    }

    var failures: [DomainName: DefaultsError] = [:]
    var deferred: Set<DomainName> = []
    var written: [DomainName: WrittenFile] = [:]
    var keptAside: [DomainName: FileVersion] = [:]
    /// The ledger now durable, when the flush wrote one.
    var ledger: [DomainName: Int64]?
}

/// Makes a snapshot durable: the generation ledger first when it must change, then each domain's file. Answers, on
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
    /// Writes a snapshot as one group: every file's new contents go to a temporary file in its
    /// own folder and are fsynced; then the ledger, when a ceiling must rise, is renamed into
    /// place and its folder fsynced; then every domain's file is renamed (or removed) and each
    /// folder touched is fsynced once.
    ///
    /// The ledger is durable before any domain file is replaced, so after a crash a generation
    /// can be ahead of its file but never behind it; a failed ledger writes nothing. A domain
    /// that fails is reported and the others are written. A snapshot with `exactGenerations`
    /// (the last one, at a clean stop) writes the generations themselves as the ledger.
    func write(_ snapshot: WriteBehind.Snapshot) -> FlushOutcome {
        var outcome = FlushOutcome()
        let ledgerValues = GenerationLedger.values(before: snapshot, durable: snapshot.durableLedger)
        var ledgerChange: StagedChange?
        if let ledgerValues {
            do throws(DefaultsError) {
                let file = GenerationLedger(files: self)
                ledgerChange = try stage(file.contents(ledgerValues), at: file.path)
            } catch {
                for (domain, _) in snapshot.domains { outcome.failures[domain] = error }
                return outcome
            }
        }
        // Staged side by side: the fsyncs of several files overlap; the renames below then put them in place together.
        let results = snapshot.domains.concurrentMap { (domain, values) in
            Result { () throws(DefaultsError) in try stage(domain, values: values) }
        }
        var staged: [(domain: DomainName, change: StagedChange)] = []
        for ((domain, _), result) in zip(snapshot.domains, results) {
            switch result {
            case .success(let change): staged.append((domain, change))
            case .failure(let error): outcome.failures[domain] = error
            }
        }
        do throws(DefaultsError) {
            if let ledgerChange {
                try commit([ledgerChange])
                outcome.ledger = ledgerValues
            }
        } catch {
            for (_, change) in staged { change.discard() }
            for (domain, _) in snapshot.domains { outcome.failures[domain] = error }
            return outcome
        }
        let committed = commit(staged.map(\.change), reportingAs: staged.map(\.domain)) { domain, current in
            admit(current, of: domain, knowing: snapshot.versions, keepingUnseenAside: snapshot.keepUnseenAside.contains(domain))
        }
        for (domain, version) in committed.keptAside { outcome.keptAside[domain] = version }
        for (domain, error) in committed.failures { outcome.failures[domain] = error }
        outcome.deferred = Set(committed.skipped)
        for (domain, change) in staged where outcome.failures[domain] == nil && !outcome.deferred.contains(domain) {
            switch change.action {
            case .replace: if let version = change.version { outcome.written[domain] = .version(version) }
            case .remove: outcome.written[domain] = .removed
            case .none: break
            }
        }
        return outcome
    }
}
