import DaemonTestSupport
import LocalServices
import DefaultsCore
import Foundation
import LineSocket
import TestThreads
import Testing

/// A GSettings program's setting roams like any domain: a theme set with `gsettings` on A is what
/// `gsettings` reads on B, through a real 3-member etcd cluster.
@Suite(.serialized, .enabled(if: EtcdCluster.isInstalled && GIOModule.isAvailable, "needs etcd and `make gsettings-backend`"), .ownThreads)
struct GSettingsRoamingTests {
    static let domain = "org.gnome.desktop.interface"

    @Test func aThemeSetWithGsettingsOnAIsReadOnB() throws {
        let m = try RoamingMachines(domains: [Self.domain])
        try m.waitAllOnline()
        let set = try GIOModule.gsettings(["set", Self.domain, "gtk-theme", "'Roamed'"], environment: m["A"].clientEnvironment)
        #expect(set.status == 0 && !set.err.contains("GSettings backend"), "\(set.err)")
        try m.waitForValues("B", ["gtk-theme": "Roamed"], domain: Self.domain)
        let read = try GIOModule.gsettings(["get", Self.domain, "gtk-theme"], environment: m["B"].clientEnvironment)
        #expect(read.out == "'Roamed'\n")
    }
}
