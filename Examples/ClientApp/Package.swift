// swift-tools-version:6.0
// A minimal client app of defaultsd, built the way an app outside this repository builds: with
// defaultsd as a path dependency, from a checkout named `defaultsd` beside this folder. `make
// test` builds it so (`make example`), in a temporary folder with the checkout linked beside it.
import PackageDescription

let package = Package(
    name: "ClientApp",
    dependencies: [
        .package(path: "../defaultsd"),  // the package's identity is the folder's name: "defaultsd"
    ],
    targets: [
        .executableTarget(name: "ClientApp", dependencies: [.product(name: "DefaultsClient", package: "defaultsd")]),
    ]
)
