import DaemonTestSupport
import DefaultsCore
import Testing

/// The search list itself: its layers, suites added as `addSuite(named:)` adds them, and
/// resolution over plain tables (the daemon's and the client's uses run the same cases in
/// their own targets).
@Suite struct SearchListTests {
    let app = SearchOrderCases.app
    let suite = SearchOrderCases.suite
    let other = SearchOrderCases.other

    @Test func theLayersAreInApplesOrder() {
        #expect(
            SearchOrderCases.list.layers == [
                .persistent(app), .persistent(suite), .persistent(other), .persistent(.global),
                .bundle(app), .bundle(suite), .bundle(other), .registration,
            ])
        #expect(SearchList(appDomain: app, searchesArguments: true).layers == [.argument, .persistent(app), .persistent(.global), .bundle(app), .registration])
        #expect(SearchList(appDomain: nil).layers == [.persistent(.global), .registration])
        // Each domain is consulted once, where it first appears.
        #expect(SearchList(appDomain: app, suites: [app, .global, suite]).persistentDomains == [app, .global, suite])
    }

    @Test func suitesAreAddedBeforeTheGlobalDomainAndNeverTwice() {
        var list = SearchList(appDomain: app)
        let added = [list.addSuite(suite), list.addSuite(other), list.addSuite(suite), list.addSuite(app), list.addSuite(.global)]
        #expect(added == [true, true, false, false, false])
        #expect(list.persistentDomains == [app, suite, other, .global])
        #expect(list.includes(other) && !list.includes(try! DomainName("com.elsewhere")))
        list.removeSuite(suite)
        #expect(list.persistentDomains == [app, other, .global])
        #expect(list == SearchList(appDomain: app, suites: [other]))
    }

    @Test func resolveTakesTheFirstLayerThatHasTheKey() {
        for (key, value, layer) in SearchOrderCases.expected {
            let found = SearchOrderCases.list.resolve { layer -> PlistValue? in
                switch layer {
                case .persistent(let domain): SearchOrderCases.stored[domain]?[key]
                case .bundle(let domain): SearchOrderCases.bundleDefaults[domain]?[key]
                case .registration: SearchOrderCases.registration[key]
                case .argument: nil
                }
            }
            #expect(found?.value == value && found?.layer == layer, "\(key)")
        }
        #expect(SearchList.Layer.bundle(app).name == "com.example.app" && SearchList.Layer.bundle(app).kind == "bundle")
        #expect(SearchList.Layer.registration.name == "NSRegistrationDomain" && SearchList.Layer.argument.kind == "argument")
    }
}
