import DefaultsServer
import NIOCore
import SystemdSupport

/// Tells systemd what the daemon does, through the `sd_notify` protocol (`Systemd.notify`).
struct SystemdLink: ServiceManagerLink {
    let watchdogInterval: TimeAmount?
    let readsStatus: Bool

    init() {
        watchdogInterval = Systemd.watchdogInterval().map(TimeAmount.init)
        readsStatus = Systemd.isNotifying
    }

    func ready(status: String) { Systemd.notify("READY=1", "STATUS=\(status)") }
    func status(_ text: String) { Systemd.notify("STATUS=\(text)") }
    func watchdog() { Systemd.notify("WATCHDOG=1") }
    func reloading() { Systemd.notifyReloading() }
    func stopping() { Systemd.notify("STOPPING=1", "STATUS=stopping: writing pending changes") }
}
