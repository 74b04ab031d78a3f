import Foundation
import Testing
@testable import IAPRecon

@Suite struct ZZProbe {
    @Test func probe() throws {
        print(#filePath, URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().path)
    }
}
