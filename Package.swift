// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "iaprecon",
    products: [
        .executable(name: "iaprecon", targets: ["iaprecon"]),
    ],
    dependencies: [],
    targets: [
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "IAPRecon", dependencies: ["CSQLite", "CZlib"]),
        .target(name: "IAPReconGenerator", dependencies: ["CZlib"]),
        .target(name: "IAPReconCLI", dependencies: ["IAPRecon", "IAPReconGenerator"]),
        .executableTarget(name: "iaprecon", dependencies: ["IAPReconCLI"]),
        .testTarget(name: "IAPReconTests", dependencies: ["IAPRecon", "IAPReconGenerator"]),
        .testTarget(name: "IAPReconGeneratorTests", dependencies: ["IAPReconGenerator"]),
        .testTarget(name: "IAPReconCLITests", dependencies: ["IAPReconCLI", "IAPRecon"], exclude: ["Expected"]),
    ],
    swiftLanguageModes: [.v6]
)
