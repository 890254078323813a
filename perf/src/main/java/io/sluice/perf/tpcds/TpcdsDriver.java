package io.sluice.perf.tpcds;

import io.sluice.perf.spark.SparkApps;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.shuffle.rdma.ShuffleReadTotals;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;

/**
 * The Spark driver program of the TPC-DS benchmark, started through {@code SparkSubmit} by {@link
 * TpcdsBench}; its shuffle manager is whatever the submission configured. Two modes:
 *
 * <ul>
 *   <li>{@code generate --sf S --data DIR}: writes the tables ({@link TpcdsData}) and exits.
 *   <li>{@code serve --data DIR --rows DIR --executors N}: registers the tables as views, then runs
 *       the queries named on standard input ({@code run q1}; {@code quit} or end of input stops),
 *       one at a time, and answers each on standard output with a line starting {@link #PREFIX}
 *       (see {@link DriverProcess}). A query's rows go to {@code <rows>/<query>.rows} in the form
 *       of {@link ResultRows}.
 * </ul>
 */
public final class TpcdsDriver {
  /** Marks the lines meant for the orchestrator; anything else on standard output is ignored. */
  public static final String PREFIX = "@@sluice-tpcds ";

  private TpcdsDriver() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
        StandardCharsets.UTF_8);
    Map<String, String> o = new HashMap<>();
    for (int i = 1; i + 1 < args.length; i += 2) {
      o.put(args[i], args[i + 1]);
    }
    SparkSession spark = SparkSession.builder().getOrCreate();
    try {
      int executors = Integer.parseInt(o.getOrDefault("--executors", "2"));
      SparkApps.awaitExecutors(spark.sparkContext(), executors, 300);
      if (args[0].equals("generate")) {
        double scale = Double.parseDouble(o.get("--sf"));
        Path folder = Path.of(o.get("--data"));
        double seconds = TpcdsData.generate(spark, scale, folder, 3);
        out.println(PREFIX + "generated seconds=" + seconds);
      } else {
        serve(spark, Path.of(o.get("--data")), Path.of(o.get("--rows")), out);
      }
    } catch (Throwable t) {
      out.println(PREFIX + "fatal " + oneLine(t));
      throw t;
    } finally {
      spark.stop();
    }
  }

  private static void serve(SparkSession spark, Path data, Path rowsDir, PrintStream out) throws Exception {
    if (!TpcdsCache.complete(data)) {
      throw new IllegalStateException("no complete TPC-DS data in " + data);
    }
    // With the schema given, Spark reads no Parquet footers for it: no job per table at start-up.
    for (Map.Entry<String, StructType> table : TpcdsData.schemas().entrySet()) {
      spark.read().schema(table.getValue()).parquet(data.resolve(table.getKey()).toString())
          .createOrReplaceTempView(table.getKey());
    }
    Files.createDirectories(rowsDir);
    QueryShuffleTotals totals = new QueryShuffleTotals();
    spark.sparkContext().addSparkListener(totals);
    // Compiles the common paths (scan, aggregate, exchange) before the first measured query.
    spark.sql("SELECT ss_store_sk, count(*) FROM store_sales GROUP BY ss_store_sk").collectAsList();
    out.println(PREFIX + "ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null && !line.equals("quit")) {
      if (!line.startsWith("run ")) {
        out.println(PREFIX + "failed ? unknown command: " + line);
        continue;
      }
      String query = line.substring(4).trim();
      try {
        String text = TpcdsQueries.text(query);
        ShuffleReadTotals.Totals before = totals.snapshot();
        long writeBefore = totals.writeBytes();
        spark.sparkContext().setJobDescription(query);
        long started = System.nanoTime();
        List<Row> rows = spark.sql(text).collectAsList();
        long wallNs = System.nanoTime() - started;
        spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
        ShuffleReadTotals.Totals t = totals.snapshot().minus(before);
        List<String> lines = new ArrayList<>(rows.size());
        for (Row r : rows) {
          List<Object> values = new ArrayList<>(r.size());
          for (int i = 0; i < r.size(); i++) {
            values.add(r.get(i));
          }
          lines.add(ResultRows.encodeRow(values));
        }
        Files.write(rowsDir.resolve(query + ".rows"), lines, StandardCharsets.UTF_8);
        out.println(PREFIX + "done " + query + " wall_ns=" + wallNs + " rows=" + rows.size() + " remote_bytes="
            + t.remoteBytes() + " local_bytes=" + t.localBytes() + " fetch_wait_ms=" + t.fetchWaitMs()
            + " write_bytes=" + (totals.writeBytes() - writeBefore) + " tasks=" + t.tasks());
      } catch (Exception e) {
        out.println(PREFIX + "failed " + query + " " + oneLine(e));
      } finally {
        // Spark frees a query's broadcasts and shuffles on the executors only once the driver's
        // garbage collector has found their handles unreachable (ContextCleaner). This driver's
        // heap is large and mostly idle, so without a collection between queries the executors
        // keep every earlier query's broadcast tables (16-40 MiB each) and run out of heap in a
        // later broadcast join. Outside the timed part; the same for both managers.
        System.gc();
      }
    }
  }

  private static String oneLine(Throwable t) {
    String m = t.getClass().getSimpleName() + ": " + t.getMessage();
    return m.replace('\n', ' ').replace('\r', ' ');
  }
}
