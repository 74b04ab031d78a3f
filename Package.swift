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
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        .target(name: "IAPRecon", dependencies: ["CSQLite", "CZlib", "COpenSSL"]),
        .target(name: "IAPReconGenerator", dependencies: ["CZlib", "COpenSSL"]),
        .target(name: "IAPReconCLI", dependencies: ["IAPRecon", "IAPReconGenerator"]),
        .executableTarget(name: "iaprecon", dependencies: ["IAPReconCLI"]),
        .testTarget(name: "IAPReconTests", dependencies: ["IAPRecon", "IAPReconGenerator"], exclude: ["Fixtures"]),
        .testTarget(name: "IAPReconGeneratorTests", dependencies: ["IAPReconGenerator"]),
        .testTarget(name: "IAPReconCLITests", dependencies: ["IAPReconCLI", "IAPRecon"], exclude: ["Expected"]),
    ],
    swiftLanguageModes: [.v6]
)
