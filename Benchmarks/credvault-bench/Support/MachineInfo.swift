import Foundation

/// What a reader needs to judge the figures: the machine, its load, the file system.
enum MachineInfo {
    static var loadAverage: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    static func header(options: Options, directory: URL) -> String {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let kernel = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
        let cpu = ((try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? "")
            .split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespaces) } ?? "?"
        return """
            # credvault-bench\(options.quick ? " --quick" : "")

            \(cpu), \(cores) cores, Linux \(kernel); vaults in \(directory.path); load average at the start: \(loadAverage)
            Times are per operation: median of the runs (min, max); each run of a fast operation is a
            batch of iterations; ratios are medians over the raw counterpart or floor measured in turn with it.
            """
    }
}
