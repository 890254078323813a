package io.sluice.perf.report;

import io.sluice.perf.bench.Measurement;
import java.util.List;

/**
 * What the report shows for one results file: its charts, the measurements listed in its table,
 * and a note (for example a link to a fuller table). Immutable.
 */
public record Section(String title, String sourceFile, List<BarChart> charts, List<Measurement> table, String note) {
  public Section {
    charts = List.copyOf(charts);
    table = List.copyOf(table);
  }
}
