import Foundation
import IAPReconCLI

exit(IAPReconCLI.main(CommandLine.arguments))
