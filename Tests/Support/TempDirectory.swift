import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private temporary directory (0700) removed when released.
package final class TempDirectory: @unchecked Sendable {
    package let url: URL

    package init() {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("cv-test-XXXXXX").path
        var bytes = Array(template.utf8CString)
        let path = bytes.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        url = URL(fileURLWithPath: path)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    package func path(_ name: String) -> URL { url.appendingPathComponent(name) }
}

