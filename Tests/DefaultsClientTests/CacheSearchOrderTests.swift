import DaemonTestSupport
@testable import DefaultsClient
import DefaultsCore
import TestThreads
import Testing

/// The shared search list as the client's cache uses it: the same cases as the daemon's lookup,
/// with the argument domain first.
@Suite(.ownThreads) struct CacheSearchOrderTests {
    @Test func theCacheResolvesEveryLayerAsTheDaemonDoes() {
        var state = CacheState()
        for (domain, values) in SearchOrderCases.stored { _ = state.load(domain, values: values, generation: 1) }
        for (domain, values) in SearchOrderCases.bundleDefaults {
            _ = state.setBundleDefaults(values, of: domain, origin: .local)
        }
        state.registration = SearchOrderCases.registration
        let record = ViewRecord(view: DefaultsView(), searchList: SearchOrderCases.list, volatile: [:])
        for (key, value, _) in SearchOrderCases.expected {
            #expect(state.resolve(record, key)?.value == value, "\(key)")
        }
        // A client's command line comes before everything.
        var withArguments = SearchOrderCases.list
        withArguments.searchesArguments = true
        let arguments = ViewRecord(view: DefaultsView(), searchList: withArguments, volatile: [ArgumentDomain.name: ["a": 99]])
        #expect(state.resolve(arguments, "a")?.value == 99)
        #expect(state.resolve(arguments, "b")?.value == 7)
    }
}
