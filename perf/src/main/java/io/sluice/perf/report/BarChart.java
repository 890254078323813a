package io.sluice.perf.report;

import java.util.List;

/**
 * One grouped bar chart: a bar per category for the measured path and one for its baseline.
 * Immutable.
 *
 * @param file the PNG's file name inside the results folder
 * @param title chart title
 * @param yTitle y axis title, with the unit
 * @param valueSeries legend of the measured bars
 * @param baselineSeries legend of the baseline bars
 * @param categories one label per pair of bars
 * @param values measured figures, one per category
 * @param baselines baseline figures, one per category
 */
public record BarChart(String file, String title, String yTitle, String valueSeries, String baselineSeries,
    List<String> categories, List<Double> values, List<Double> baselines) {
  public BarChart {
    categories = List.copyOf(categories);
    values = List.copyOf(values);
    baselines = List.copyOf(baselines);
    if (categories.size() != values.size() || categories.size() != baselines.size()) {
      throw new IllegalArgumentException("a value and a baseline per category");
    }
  }

  public boolean isEmpty() {
    return categories.isEmpty();
  }
}
