import CredentialVault
import Foundation

/// Group 1: `SealingKey.seal`/`open` against the same libsodium calls made directly.
enum SealGroup {
    static let sizes = [32, 256, 4096, 65536, 1 << 20]
    static let title = "Seal and open: public API vs raw libsodium (XChaCha20-Poly1305, random nonce)"

    static func run(_ options: Options, _ reporter: Reporter) throws {
        reporter.begin(title)
        let plan = Plan.fast(options)
        let key = SealingKey.random()
        for size in sizes {
            let plaintext = Data((0..<size).map { _ in UInt8.random(in: 0...255) })
            let box = key.seal(plaintext)
            let raw = RawAEAD(size: size)
            let sealing = try Timer.measureInterleaved(plan, [{ blackHole(key.seal(plaintext)) }, { raw.seal() }])
            let opening = try Timer.measureInterleaved(plan, [
                { blackHole(try key.open(box)) },
                { guard raw.open() else { throw BenchError("raw open failed") } },
            ])
            for (name, samples) in [("seal", sealing), ("open", opening)] {
                var rawFigure = Figure(group: title, name: "raw_\(name)", sizeBytes: size, sample: samples[1])
                rawFigure.showsThroughput = true
                var ours = Figure(group: title, name: name, sizeBytes: size, sample: samples[0])
                ours.showsThroughput = true
                ours.relate(to: rawFigure)
                if let limit = limit(size: size) { ours.checks.append(.atMost("ratio to raw", ours.ratio!, limit)) }
                reporter.add(ours)
                reporter.add(rawFigure)
            }
        }
        reporter.note("ours: `SealingKey.seal(_:)` returns a new `Data`, `open(_:)` allocates the plaintext; raw: the same libsodium calls into buffers allocated once.")
        reporter.end()
    }

    /// The targets: at most 1.5x raw at 32 B, 1.15x at 4 KiB and above.
    static func limit(size: Int) -> Double? {
        if size >= 4096 { return 1.15 }
        if size == 32 { return 1.5 }
        return nil
    }
}
