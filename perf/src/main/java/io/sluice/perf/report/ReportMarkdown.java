package io.sluice.perf.report;

import io.sluice.perf.bench.Measurement;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.List;
import java.util.Set;

/** The text of {@code perf/results/REPORT.md}. Stateless. */
public final class ReportMarkdown {
  private ReportMarkdown() {}

  /**
   * The report: one part per section, each with the charts that were drawn ({@code drawn} holds
   * their file names) and the section's table.
   */
  public static String of(List<Section> sections, Set<String> drawn, List<String> problems) {
    StringBuilder md = new StringBuilder("# Sluice benchmark report\n\n");
    md.append("Made by `perf/bin/report` from the results files in this folder; every figure stands beside the"
        + " baseline measured in the same run. Ratios are value / baseline.\n");
    for (String p : problems) {
      md.append("\n> ").append(p).append('\n');
    }
    for (Section s : sections) {
      md.append("\n## ").append(s.title()).append(" (`").append(s.sourceFile()).append("`)\n\n");
      for (BarChart c : s.charts()) {
        if (drawn.contains(c.file())) {
          md.append("![").append(c.title()).append("](").append(c.file()).append(")\n\n");
        }
      }
      if (!s.note().isEmpty()) {
        md.append(s.note()).append("\n\n");
      }
      md.append("| measurement | unit | value | baseline | baseline value | ratio |\n");
      md.append("|---|---|---:|---|---:|---:|\n");
      for (Measurement m : s.table()) {
        md.append("| ").append(m.name()).append(" | ").append(m.unit()).append(" | ").append(figure(m.value()))
            .append(" | ").append(m.baselineName()).append(" | ").append(figure(m.baselineValue())).append(" | ")
            .append(Double.isFinite(m.ratio()) ? figure(m.ratio()) : "-").append(" |\n");
      }
    }
    return md.toString();
  }

  /** Four significant digits, plain notation. */
  static String figure(double v) {
    if (v == 0) {
      return "0";
    }
    return new BigDecimal(v).round(new MathContext(4)).stripTrailingZeros().toPlainString();
  }
}
