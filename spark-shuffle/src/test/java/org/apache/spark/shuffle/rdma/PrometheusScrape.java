package org.apache.spark.shuffle.rdma;

import io.sluice.transport.Eventually;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Spark's Prometheus servlet on the driver's UI, scraped over HTTP: the settings that turn it on,
 * and the Sluice gauges of a scrape by their Sluice name ({@code reads.shm.bytes}). Thread safe;
 * its one state is the HTTP client every scrape shares.
 */
final class PrometheusScrape {
  /** A gauge line of Spark's servlet: metrics_[app_][executor_]sluice_NAME_Value{type="gauges"} VALUE. */
  private static final Pattern GAUGE = Pattern.compile(
      "^metrics_(?:.*_)?sluice_([A-Za-z0-9_]+)_Value\\{type=\"gauges\"\\} (-?\\d+)$", Pattern.MULTILINE);

  /** One client for every scrape: each client of its own would keep a selector thread until collected. */
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** Where the last scrape's whole text is kept. */
  static final java.nio.file.Path LAST_SCRAPE = java.nio.file.Path.of("target", "sluice-prometheus-scrape.txt");

  private PrometheusScrape() {}

  /** Turns on the UI (on a free port) with the Prometheus servlet, and fast metrics reports. */
  static SparkConf enable(SparkConf conf) {
    return conf.set("spark.ui.enabled", "true")
        .set("spark.ui.port", "0")
        .set("spark.ui.prometheus.enabled", "true")
        .set("spark.metrics.conf.*.sink.prometheusServlet.class", "org.apache.spark.metrics.sink.PrometheusServlet")
        .set("spark.metrics.conf.*.sink.prometheusServlet.path", "/metrics/prometheus")
        .set(RdmaShuffleOption.METRICS_REPORT_INTERVAL.key(), "200ms");
  }

  /** One scrape's Sluice gauges, by name with '_' for '.' (reads_shm_bytes). */
  static Map<String, Long> scrape(JavaSparkContext sc) throws IOException, InterruptedException {
    String ui = sc.sc().uiWebUrl().getOrElse(() -> {
      throw new IllegalStateException("the Spark UI is off; PrometheusScrape.enable the conf");
    });
    HttpResponse<String> r = HTTP.send(
        HttpRequest.newBuilder(URI.create(ui + "/metrics/prometheus/")).timeout(Duration.ofSeconds(20)).build(),
        HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IOException("GET " + ui + "/metrics/prometheus answered " + r.statusCode() + ": " + r.body());
    }
    // The last scrape stays beside the test reports, for reading when an assertion fails.
    java.nio.file.Files.writeString(LAST_SCRAPE, r.body());
    Map<String, Long> values = new TreeMap<>();
    Matcher m = GAUGE.matcher(r.body());
    while (m.find()) {
      values.put(m.group(1), Long.parseLong(m.group(2)));
    }
    return values;
  }

  /**
   * Scrapes until {@code done} holds, and returns that scrape: executors report every 200 ms, so
   * what the driver shows reaches a job's totals some time after the job, each executor's at its
   * own moment. Fails naming {@code what} with the last scrape if it does not within {@link
   * Eventually#DEADLINE}.
   */
  static Map<String, Long> scrapeUntil(JavaSparkContext sc, String what, Predicate<Map<String, Long>> done) {
    return Eventually.matches(what, Eventually.DEADLINE, () -> {
      try {
        return scrape(sc);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while scraping the driver's metrics", e);
      }
    }, done);
  }
}
