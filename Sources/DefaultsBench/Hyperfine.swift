import Foundation

/// Whole-command timings by hyperfine: each command's mean and median, seconds.
enum Hyperfine {
    struct Timing { var mean: Double; var median: Double }

    static func measure(_ commands: [String], environment: [String: String], runs: Int, directory: String) throws -> [Timing] {
        let export = directory + "/hyperfine.json"
        _ = try Server.run(
            try Server.required("hyperfine"),
            ["--shell=none", "--warmup", "20", "--runs", "\(runs)", "--style", "none", "--export-json", export] + commands,
            environment: environment)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: export))) as? [String: Any]
        let results = json?["results"] as? [[String: Any]] ?? []
        return results.map { Timing(mean: $0["mean"] as? Double ?? .nan, median: $0["median"] as? Double ?? .nan) }
    }
}
