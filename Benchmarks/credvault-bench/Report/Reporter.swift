import Foundation

/// Collects figures and writes them: a Markdown table per group on stdout, or JSON Lines (one
/// object per figure) on stdout with notes and progress on stderr.
final class Reporter {
    enum Mode {
        case table
        case jsonLines
    }

    let mode: Mode
    /// Where JSON Lines also go in table mode (`--json-out`).
    private let jsonCopy: FileHandle?
    private(set) var figures: [Figure] = []
    private var group: (title: String, figures: [Figure], notes: [String])?

    init(mode: Mode, jsonCopy: FileHandle? = nil) {
        self.mode = mode
        self.jsonCopy = jsonCopy
    }

    /// Starts a group (a section of the table).
    func begin(_ title: String) {
        precondition(group == nil, "groups do not nest")
        group = (title, [], [])
        progress("== \(title)")
    }

    /// Adds a figure to the current group; JSON lines are written at once.
    func add(_ figure: Figure) {
        figures.append(figure)
        group?.figures.append(figure)
        if mode == .jsonLines { emit(JSONLines.line(for: figure) + "\n") }
        jsonCopy?.write(Data((JSONLines.line(for: figure) + "\n").utf8))
    }

    /// A remark printed under the group's table (on stderr in JSON mode).
    func note(_ text: String) {
        if mode == .jsonLines {
            progress("note: \(text)")
        } else {
            group?.notes.append(text)
        }
    }

    /// Progress on stderr, so that stdout stays clean.
    func progress(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Ends the group; in table mode, prints its table and notes.
    func end() {
        guard let current = group else { return }
        group = nil
        guard mode == .table else { return }
        var out = "\n### \(current.title)\n\n"
        if !current.figures.isEmpty { out += Table.markdown(current.figures) }
        for text in current.notes { out += "\n- \(text)" }
        if !current.notes.isEmpty { out += "\n" }
        emit(out)
    }

    /// In table mode, a summary of every target: met, or missed and by how much.
    func finish() {
        guard mode == .table else { return }
        let checked = figures.filter { !$0.checks.isEmpty }
        guard !checked.isEmpty else { return }
        var out = "\n### Targets\n\n"
        for figure in checked {
            for check in figure.checks {
                out += "- \(Table.label(figure)): \(Format.checkLong(check))\n"
            }
        }
        emit(out)
    }

    /// Text on stdout in table mode (a header or footer); nothing in JSON mode.
    func text(_ text: String) {
        if mode == .table { emit(text + "\n") }
    }

    private func emit(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
