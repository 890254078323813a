package io.sluice.perf.report;

import io.sluice.perf.bench.Measurement;
import io.sluice.perf.bench.ResultsFile;
import java.awt.Color;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * Regenerates the charts (PNG, drawn with XChart) and {@code REPORT.md} in a results folder from
 * the results files there. A file that cannot be read or a chart that cannot be drawn is named in
 * the report and on standard error; the rest is still written. Run it through {@code
 * perf/bin/report [folder]}.
 */
public final class Report {
  private static final Color SLUICE = new Color(0x1f, 0x77, 0xb4);
  private static final Color BASELINE = new Color(0xb0, 0xb0, 0xb0);

  private Report() {}

  public static void main(String[] args) throws IOException {
    System.setProperty("java.awt.headless", "true");
    Path dir = Path.of(args.length > 0 ? args[0] : "perf/results");
    List<Path> files;
    try (Stream<Path> list = Files.list(dir)) {
      files = list.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
    }
    List<Path> ordered = new ArrayList<>();
    for (String known : Sections.KNOWN) {
      files.stream().filter(p -> p.getFileName().toString().equals(known)).forEach(ordered::add);
    }
    files.stream().filter(p -> !ordered.contains(p)).forEach(ordered::add);

    List<Section> sections = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    Set<String> drawn = new HashSet<>();
    for (Path f : ordered) {
      List<Measurement> m;
      try {
        m = ResultsFile.read(f);
      } catch (IOException | IllegalArgumentException e) {
        problems.add(f.getFileName() + " could not be read: " + e.getMessage());
        continue;
      }
      Section s = Sections.of(f.getFileName().toString(), m);
      sections.add(s);
      for (BarChart c : s.charts()) {
        if (c.isEmpty()) {
          continue;
        }
        try {
          draw(c, dir.resolve(c.file()));
          drawn.add(c.file());
          System.out.println("chart: " + dir.resolve(c.file()));
        } catch (IOException | RuntimeException | Error e) {
          problems.add(c.file() + " could not be drawn: " + e);
        }
      }
    }
    Path report = dir.resolve("REPORT.md");
    Files.writeString(report, ReportMarkdown.of(sections, drawn, problems), StandardCharsets.UTF_8);
    problems.forEach(p -> System.err.println("report: " + p));
    System.out.println("report: " + report);
  }

  static void draw(BarChart c, Path file) throws IOException {
    int width = Math.max(900, 60 + 22 * c.categories().size());
    CategoryChart chart = new CategoryChartBuilder().width(width).height(520).title(c.title())
        .yAxisTitle(c.yTitle()).build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
    chart.getStyler().setSeriesColors(new Color[] {SLUICE, BASELINE});
    chart.getStyler().setXAxisLabelRotation(c.categories().size() > 8 || crowded(c, width) ? 90 : 0);
    chart.getStyler().setChartBackgroundColor(Color.WHITE);
    chart.getStyler().setAvailableSpaceFill(0.8);
    chart.getStyler().setYAxisMin(0.0);
    chart.addSeries(c.valueSeries(), c.categories(), c.values());
    chart.addSeries(c.baselineSeries(), c.categories(), c.baselines());
    BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
  }

  /** Whether the labels, side by side at about 8 pixels a character, would not fit the plot. */
  static boolean crowded(BarChart c, int width) {
    return c.categories().stream().mapToInt(String::length).sum() * 8 > width - 100;
  }
}
