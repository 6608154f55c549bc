import Foundation

/// A hand-written SVG chart of a scroll run: one panel per metric (frames over budget %, render-thread p99 ms,
/// visible → shown p99 ms, peak RSS MiB), one bar per strategy, linear scales.
public enum ScrollChart {
    /// One strategy's bars.
    public struct Row: Sendable {
        /// Strategy name.
        public var name: String
        /// Metric values in panel order.
        public var values: [Double]
        /// Creates a row.
        public init(name: String, values: [Double]) {
            self.name = name
            self.values = values
        }
    }

    /// Builds the SVG. `panels` names the metrics (same order as each row's values); `budgetMs` draws the frame
    /// budget as a line on the panel titled with "frame".
    public static func svg(title: String, panels: [String], rows: [Row], budgetMs: Double? = nil) -> String {
        let panelWidth = 300.0
        let barHeight = 22.0
        let labelWidth = 100.0
        let top = 56.0
        let panelHeight = Double(rows.count) * (barHeight + 8) + 40
        let width = labelWidth + Double(panels.count) * (panelWidth + 20) + 20
        let height = top + panelHeight + 20
        let colors = ["#d62728", "#ff7f0e", "#bcbd22", "#2ca02c", "#1f77b4", "#9467bd", "#8c564b"]
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="24" font-size="16" font-weight="bold">\(escape(title))</text>

            """
        for (p, panel) in panels.enumerated() {
            let x0 = labelWidth + Double(p) * (panelWidth + 20)
            let values = rows.map { p < $0.values.count ? max(0, $0.values[p]) : 0 }
            let maxValue = max(values.max() ?? 0, panel.contains("frame") ? (budgetMs ?? 0) : 0, 1e-9)
            out += "<text x=\"\(f(x0))\" y=\"\(f(top - 10))\" font-weight=\"bold\">\(escape(panel))</text>\n"
            out +=
                "<line x1=\"\(f(x0))\" y1=\"\(f(top))\" x2=\"\(f(x0))\" y2=\"\(f(top + panelHeight - 40))\" stroke=\"#444\"/>\n"
            for (r, row) in rows.enumerated() {
                let y = top + Double(r) * (barHeight + 8)
                let v = values[r]
                let w = v / maxValue * (panelWidth - 60)
                if p == 0 {
                    out += "<text x=\"8\" y=\"\(f(y + barHeight * 0.7))\">\(escape(row.name))</text>\n"
                }
                out +=
                    "<rect x=\"\(f(x0))\" y=\"\(f(y))\" width=\"\(f(max(w, 0.5)))\" height=\"\(f(barHeight))\" "
                    + "fill=\"\(colors[r % colors.count])\"/>\n"
                out += "<text x=\"\(f(x0 + max(w, 0.5) + 4))\" y=\"\(f(y + barHeight * 0.7))\">\(label(v))</text>\n"
            }
            if let budgetMs, panel.contains("frame") {
                let bx = x0 + budgetMs / maxValue * (panelWidth - 60)
                out +=
                    "<line x1=\"\(f(bx))\" y1=\"\(f(top - 4))\" x2=\"\(f(bx))\" y2=\"\(f(top + panelHeight - 40))\" "
                    + "stroke=\"black\" stroke-dasharray=\"4 3\"/>\n"
                out +=
                    "<text x=\"\(f(bx + 3))\" y=\"\(f(top + panelHeight - 26))\" font-size=\"10\">budget \(label(budgetMs)) ms</text>\n"
            }
        }
        out += "</svg>\n"
        return out
    }

    static func f(_ v: Double) -> String { String(Double((v * 10).rounded()) / 10) }

    static func label(_ v: Double) -> String {
        if v >= 100 { return String(Int(v.rounded())) }
        if v >= 10 { return String(Double((v * 10).rounded()) / 10) }
        return String(Double((v * 100).rounded()) / 100)
    }

    /// Escapes text for XML.
    public static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
