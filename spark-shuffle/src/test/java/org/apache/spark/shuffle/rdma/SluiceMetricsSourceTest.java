package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.TransportReport;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * After a shuffle on a local cluster, Spark's Prometheus servlet on the driver shows the
 * {@code sluice} source: the bytes the job READ by data path, as the executors' own reports count
 * them, the transports' connections and READ latency, and the fallback decisions that chose the
 * transport.
 */
class SluiceMetricsSourceTest {
  @Test
  void prometheusScrapeShowsTheBytesOfTheJobByDataPath() throws Exception {
    try (JavaSparkContext sc = LocalCluster.start(PrometheusScrape.enable(LocalCluster.conf("metrics", true)))) {
      Map<Integer, Long> got = new TreeMap<>(sc.parallelize(SharedJobs.range(40_000), 4)
          .mapToPair(i -> new Tuple2<>(i % 101, (long) i)).reduceByKey(Long::sum, 4).collectAsMap());
      Map<Integer, Long> expected = new TreeMap<>();
      SharedJobs.range(40_000).forEach(i -> expected.merge(i % 101, (long) i, Long::sum));
      assertEquals(expected, got);

      List<TransportReport> reports = TransportReports.collect(sc);
      assertEquals(LocalCluster.EXECUTORS, reports.size(), reports.toString());
      Map<String, Long> byPath = new TreeMap<>();
      reports.forEach(r -> r.bytesReadByPath().forEach((path, n) -> byPath.merge(path, n, Long::sum)));
      long total = byPath.values().stream().mapToLong(Long::longValue).sum();
      assertTrue(total > 0, "the executors READ nothing: " + reports);

      // Each executor reports its own counters at its own moment: wait until every figure compared
      // below comes from reports made after the job.
      Map<String, Long> scraped = PrometheusScrape.scrapeUntil(sc, "the job's totals in every executor's report",
          v -> settled(v, byPath));
      // Same-host blocks are viewed where they lie, not READ: the reports count them under shm.
      long viewed = reports.stream().mapToLong(TransportReport::bytesViewed).sum();
      assertEquals(viewed, scraped.get("views_bytes"), "views.bytes in " + scraped);
      assertTrue(scraped.get("views_count") > 0 == viewed > 0, scraped.toString());
      for (String path : List.of("tcp", "shm", "verbs")) {
        assertEquals(byPath.getOrDefault(path, 0L) - (path.equals("shm") ? viewed : 0),
            scraped.get("reads_" + path + "_bytes"), "reads." + path + ".bytes in " + scraped);
      }
      assertEquals(LocalCluster.EXECUTORS, scraped.get("executors_registered"));
      assertEquals(LocalCluster.EXECUTORS, scraped.get("decisions_executor_transport"));
      assertTrue(scraped.get("decisions_reduceTask_transport") > 0, scraped.toString());
      assertEquals(0, scraped.get("fallback_executor_transportStartFailed"));
      assertTrue(scraped.get("connections_opened") > 0, scraped.toString());
      assertEquals(scraped.get("connections_opened"), scraped.get("connections_accepted"), scraped.toString());
      long reads = scraped.get("reads_tcp_count") + scraped.get("reads_shm_count") + scraped.get("reads_verbs_count");
      assertEquals(reads, scraped.get("reads_latency_count"));
      assertEquals(0, scraped.get("reads_failed"));
      // The driver's source carries the application's id in its names, as Spark's own sources do.
      String app = sc.sc().applicationId().replaceAll("[^a-zA-Z0-9]", "_");
      String body = Files.readString(PrometheusScrape.LAST_SCRAPE);
      assertTrue(body.contains("metrics_" + app + "_driver_sluice_executors_registered_Value"),
          "no driver gauge named with the application id " + app + " in " + PrometheusScrape.LAST_SCRAPE);
    }
  }

  /**
   * Whether a scrape holds the job's final figures: the bytes the executors' reports count, both
   * executors registered and reporting, every connection opened counted as accepted by its peer,
   * and every READ counted with its latency.
   */
  private static boolean settled(Map<String, Long> scraped, Map<String, Long> byPath) {
    long sum = scraped.getOrDefault("views_bytes", 0L);
    long reads = 0;
    for (String path : List.of("tcp", "shm", "verbs")) {
      sum += scraped.getOrDefault("reads_" + path + "_bytes", 0L);
      reads += scraped.getOrDefault("reads_" + path + "_count", 0L);
    }
    return sum == byPath.values().stream().mapToLong(Long::longValue).sum()
        && scraped.getOrDefault("executors_reporting", 0L) == LocalCluster.EXECUTORS
        && scraped.getOrDefault("executors_registered", 0L) == LocalCluster.EXECUTORS
        && scraped.getOrDefault("connections_opened", 0L).equals(scraped.getOrDefault("connections_accepted", -1L))
        && scraped.getOrDefault("reads_latency_count", -1L) == reads;
  }
}
