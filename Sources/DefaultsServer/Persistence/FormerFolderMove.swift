import DefaultsCore
import FoundationEssentials
import Glibc
import Logging

/// Moves what the folder defaultsd used before it shared Foundation's (`~/.config/defaultsd`)
/// holds to where it lives now, once, at start: domain files (and its `ByHost` folder's) into
/// the shared folder, the daemon's own files (generation ledger, roaming journal, rejected and
/// corrupt copies) into the state directory. The configuration file stays where it is.
///
/// Every step is one `rename` within a file system, so a crash in the middle leaves each file
/// in one place or the other, and the next start finishes the move. A domain that already has a
/// file in the shared folder (a Foundation program wrote it meanwhile) keeps it; the former file
/// is kept in the state directory as `<name>.before-sharing`: moved, never lost.
///
/// ```swift
/// let moved = FormerFolderMove(former: "/home/ada/.config/defaultsd", shared: "/home/ada/.config",
///                              state: "/home/ada/.local/state/defaultsd").run()
/// ```
struct FormerFolderMove {
    let former: String
    let shared: String
    let state: String

    /// One file moved: from where, to where, and why it did not go where its kind goes.
    struct Move: Equatable {
        var from: String
        var to: String
        var keptAside: Bool
    }

    /// What a move did: the files moved, and those that could not be.
    struct Outcome {
        var moved: [Move] = []
        var failed: [(path: String, reason: String)] = []

        /// Renames `from` to `destination`, or to `aside` when `destination` is taken.
        mutating func move(_ from: String, to destination: String, asideAs aside: String) {
            var status = stat()
            let keptAside = lstat(destination, &status) == 0
            let to = keptAside ? aside : destination
            if keptAside && lstat(aside, &status) == 0 { return failed.append((from, "both \(destination) and \(aside) exist")) }
            if rename(from, to) == 0 {
                moved.append(Move(from: from, to: to, keptAside: keptAside))
            } else {
                failed.append((from, String(cString: strerror(errno))))
            }
        }
    }

    /// Moves everything there is to move; answers what moved, and what could not.
    func run() -> Outcome {
        var outcome = Outcome()
        guard former != shared, SystemText.isDirectory(former) else { return outcome }
        func move(_ from: String, to destination: String, asideAs aside: String) {
            outcome.move(from, to: destination, asideAs: aside)
        }
        let byHost = DomainName.byHostFolder
        if SystemText.isDirectory(former + "/" + byHost) {
            let target = shared + "/" + byHost
            if !SystemText.isDirectory(target) { mkdir(target, 0o700) }
            for name in Self.names(in: former + "/" + byHost) where name.hasSuffix(".plist") {
                move(former + "/" + byHost + "/" + name, to: target + "/" + name, asideAs: state + "/" + byHost + "-" + name + ".before-sharing")
            }
            rmdir(former + "/" + byHost)  // only when emptied
        }
        for name in Self.names(in: former) {
            let path = former + "/" + name
            // The former folder was the daemon's alone: its temporary files, by either name, are its own.
            if name.hasPrefix(DomainFiles.temporaryPrefix) || name.hasPrefix(".tmp-") {
                unlink(path)
            } else if name == GenerationLedger.fileName || name == RoamingJournal.fileName || name == InstalledBundles.registryFileName
                || name.contains(".rejected-") || name.contains(".corrupt-")
            {
                move(path, to: state + "/" + name, asideAs: state + "/" + name + ".before-sharing")
            } else if DomainName.fromFileName(name) != nil {
                move(path, to: shared + "/" + name, asideAs: state + "/" + name + ".before-sharing")
            }
        }
        rmdir(former)  // only when emptied: the configuration file usually stays
        return outcome
    }

    /// Renames this machine's by-host files in the shared folder's `ByHost` from the machine id's
    /// names (`<domain>.<machine id>.plist`, as the daemon named them in its own folder) to
    /// Foundation's (`<domain>..plist`), so that Foundation's `UserDefaults` reads them. A domain
    /// Foundation already has a by-host file for keeps it; the daemon's is kept in the state
    /// directory as `ByHost-<file>.before-sharing`.
    static func renameByHostFiles(in shared: String, machineID: String, state: String) -> Outcome {
        var outcome = Outcome()
        let folder = shared + "/" + DomainName.byHostFolder
        for name in names(in: folder) {
            guard let domain = DomainName.fromByHostFileName(name, hostID: machineID) else { continue }
            let foundations = domain.byHostFileName(hostID: DomainFiles.foundationHostID)
            outcome.move(folder + "/" + name, to: folder + "/" + foundations, asideAs: state + "/" + DomainName.byHostFolder + "-" + name + ".before-sharing")
        }
        return outcome
    }

    private static func names(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    /// Runs the move and logs it: one line for what moved, one per file kept aside or left.
    /// Nothing moves into, out of or within a folder someone else could change
    /// (``PathTrust/yoursOrRoot(uid:)``): the files stay where they are, and the daemon's start
    /// refuses such a shared or state folder with the reason.
    static func run(former: String, shared: String, state: String, machineID: String?, logger: Logger) {
        if !SystemText.isDirectory(state) {
            try? FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        for folder in [former, shared, state] where SystemText.isDirectory(folder) {
            guard let problem = PathTrust.yoursOrRoot(uid: getuid()).problem(with: folder) else { continue }
            return logger.error("files not moved to where they live now: a folder is not safe to keep preferences in", metadata: [
                "folder": "\(folder)", "problem": "\(problem)"])
        }
        let result = FormerFolderMove(former: former, shared: shared, state: state).run()
        if !result.moved.isEmpty {
            logger.notice("moved the former folder's files to where they live now: domains into the folder Foundation's UserDefaults shares, the daemon's own into its state directory", metadata: [
                "from": "\(former)", "files": "\(result.moved.map { String($0.from.dropFirst(former.utf8.count + 1)) }.joined(separator: ", "))",
                "domains": "\(shared)", "state": "\(state)"])
        }
        log(result, logger: logger)
        guard let machineID else { return }
        let renamed = renameByHostFiles(in: shared, machineID: machineID, state: state)
        if !renamed.moved.isEmpty {
            logger.notice("renamed this machine's by-host files to the names Foundation's UserDefaults reads", metadata: [
                "folder": "\(shared)/\(DomainName.byHostFolder)",
                "files": "\(renamed.moved.map { String($0.from.split(separator: "/").last ?? "") }.joined(separator: ", "))"])
        }
        log(renamed, logger: logger)
    }

    private static func log(_ outcome: Outcome, logger: Logger) {
        for move in outcome.moved where move.keptAside {
            logger.warning("a domain already had a file in the shared folder, which is kept; the former one is kept beside the daemon's state", metadata: [
                "file": "\(move.from)", "keptAs": "\(move.to)"])
        }
        for failure in outcome.failed {
            logger.error("a file could not be moved to where it lives now; it stays where it is", metadata: [
                "file": "\(failure.path)", "error": "\(failure.reason)"])
        }
    }
}
