import DefaultsTool
import FoundationEssentials
import Glibc

let arguments = Array(CommandLine.arguments.dropFirst())
if Completions.handles(arguments) { Completions.complete(arguments) }
if let index = arguments.firstIndex(of: "--generate-completion-script") {
    exit(Completions.script(for: index + 1 < arguments.count ? arguments[index + 1] : "bash"))
}
exit(DefaultsTool.run(arguments, environment: ProcessInfo.processInfo.environment))
