import Glibc

/// How many connections the daemon's descriptors allow. Each connection holds one descriptor,
/// and the daemon needs some of its own at any moment: a flush's temporary files and folder
/// fsyncs, the inotify descriptor, a Settings bundle's file being read, the roaming client's
/// sockets. So at start it raises its soft `RLIMIT_NOFILE` to the hard limit, and serves at most
/// that limit less ``reserve`` connections, whatever `maximumConnections` says: a full set of
/// connections can never make its own writes fail.
///
/// A value, made once at start by ``raised()``.
///
/// ```swift
/// let budget = DescriptorBudget.raised()       // soft limit 524288 on Debian's systemd
/// budget.connectionLimit(configured: 1024)     // 1024
/// DescriptorBudget(softLimit: 300).connectionLimit(configured: 1024)   // 172
/// ```
struct DescriptorBudget: Sendable, Equatable {
    /// Descriptors kept for the daemon's own files and sockets: a flush stages at most one file
    /// per thread at a time, so this is many times what it uses.
    static let reserve = 128

    /// The soft limit in force.
    let softLimit: Int

    /// No limit that matters: for the daemon's parts assembled in tests.
    static let unbounded = DescriptorBudget(softLimit: Int.max / 2)

    /// Raises the soft limit to the hard one, and answers the limit then in force.
    static func raised() -> DescriptorBudget {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return .unbounded }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        // RLIM_INFINITY is all ones, which Swift cannot import as a constant.
        return limit.rlim_cur == rlim_t.max ? .unbounded : DescriptorBudget(softLimit: Int(clamping: limit.rlim_cur))
    }

    /// The connections served: the configured number, or fewer when the descriptors are fewer.
    func connectionLimit(configured: Int) -> Int {
        max(1, min(configured, softLimit - DescriptorBudget.reserve))
    }
}
