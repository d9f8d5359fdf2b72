import DaemonTestSupport
import DefaultsCore
@testable import DefaultsServer
import TestThreads
import Testing

/// The shared search list as the daemon's `lookup` uses it: persistent domains from the store,
/// the bundle layer, the connection's registration domain.
@Suite(.ownThreads) struct ServerSearchOrderTests {
    @Test func lookupResolvesEveryLayerInApplesOrder() throws {
        let fixture = StoreFixture()
        for (domain, values) in SearchOrderCases.stored {
            _ = try fixture.onLoop { store in try store.apply(Changeset(domain: domain, changes: values), origin: .file) }
        }
        for (key, value, layer) in SearchOrderCases.expected {
            let found = try fixture.onLoop { store in
                try store.lookup(
                    key, in: SearchOrderCases.list, bundleDefaults: SearchOrderCases.bundleDefaults,
                    registration: SearchOrderCases.registration)
            }
            #expect(found?.value == value, "\(key)")
            #expect(found?.layer == layer, "\(key)")
        }
    }
}
