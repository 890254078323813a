package io.sluice.perf.spark;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkContext;

/** What the Spark benchmarks' driver programs share. Stateless. */
public final class SparkApps {
  private SparkApps() {}

  /**
   * The jar (or class folder) perf's classes were loaded from: executors need it in {@code
   * spark.jars} to run the benchmarks' closures.
   */
  public static String ownJar() {
    try {
      return Path.of(SparkApps.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException("cannot tell where perf's classes come from", e);
    }
  }

  /** Waits until {@code count} executors are registered, at most {@code seconds}. */
  public static void awaitExecutors(SparkContext sc, int count, int seconds) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (sc.getExecutorIds().size() < count) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(count + " executors did not start within " + seconds + " s");
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for executors", e);
      }
    }
  }
}
