package io.sluice.perf.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sluice.perf.spark.CompilationLog.Compile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CompilationLogTest {
  private static final String COMPARATOR =
      "org.apache.spark.util.collection.WritablePartitionedPairCollection$::$anonfun$partitionKeyComparator$1";

  @Test
  void readsTimeTierAndMethodOfEachCompilationAndSkipsTheRest() {
    List<Compile> log = CompilationLog.parse(List.of(
        "26/11/30 05:02:55 WARN NativeCodeLoader: Unable to load native-hadoop library",
        "   9998 4970 %     3       org.apache.spark.util.collection.ExternalSorter::insertAll @ 213 (334 bytes)",
        "  10105 5018       2       " + COMPARATOR + " (32 bytes)",
        "  10110 5017       2       java.util.TimSort::sort (229 bytes)   made not entrant",
        "    120   12     n 0       java.lang.Object::hashCode (native)   ",
        "  10613 5102   !   4       org.apache.spark.util.collection.TimSort::binarySort (308 bytes)"));
    assertEquals(List.of(
        new Compile(9998, 3, "org.apache.spark.util.collection.ExternalSorter::insertAll"),
        new Compile(10105, 2, COMPARATOR),
        new Compile(120, 0, "java.lang.Object::hashCode"),
        new Compile(10613, 4, "org.apache.spark.util.collection.TimSort::binarySort")), log);
  }

  @Test
  void lagRunsFromTheComparatorGettingHotToTheFirstC2SortLoopAfterIt() {
    List<Compile> log = List.of(
        new Compile(8761, 4, "org.apache.spark.util.collection.TimSort::binarySort"), // a map task's sort, before
        new Compile(10105, 2, COMPARATOR),
        new Compile(10110, 3, COMPARATOR),
        new Compile(10300, 3, "org.apache.spark.util.collection.TimSort::binarySort"),
        new Compile(10400, 4, "java.util.TimSort::binarySort"), // the JDK's, not Spark's
        new Compile(10613, 4, "org.apache.spark.util.collection.TimSort$SortState::mergeLo"),
        new Compile(12000, 4, "org.apache.spark.util.collection.TimSort::binarySort"));
    assertEquals(OptionalLong.of(508), CompilationLog.sortLoopC2LagMs(log));
  }

  @Test
  void noLagWithoutAReducerSortOrBeforeC2GotThere() {
    assertEquals(OptionalLong.empty(), CompilationLog.sortLoopC2LagMs(List.of(
        new Compile(9000, 4, "org.apache.spark.util.collection.TimSort::binarySort"))));
    assertEquals(OptionalLong.empty(), CompilationLog.sortLoopC2LagMs(List.of(
        new Compile(10105, 2, COMPARATOR),
        new Compile(10300, 3, "org.apache.spark.util.collection.TimSort::binarySort"))));
  }

  @Test
  void oneLagPerExecutorThatHasOne(@TempDir Path app) throws IOException {
    Files.createDirectories(app.resolve("0"));
    Files.createDirectories(app.resolve("1"));
    Files.createDirectories(app.resolve("2"));
    Files.writeString(app.resolve("0/stdout"), "  10105 5018       2       " + COMPARATOR + " (32 bytes)\n"
        + "  12295 5400       4       org.apache.spark.util.collection.TimSort::binarySort (308 bytes)\n");
    Files.writeString(app.resolve("1/stdout"), "  10031 5404       2       " + COMPARATOR + " (32 bytes)\n"
        + "  10656 5480       4       org.apache.spark.util.collection.TimSort::countRunAndMakeAscending"
        + " (198 bytes)\n");
    Files.writeString(app.resolve("2/stdout"), "no compilation logged\n");
    Files.writeString(app.resolve("1/stderr"), "  1 2       4       " + COMPARATOR + " (32 bytes)\n");
    assertEquals(List.of(2190L, 625L), CompilationLog.sortLoopC2LagsMs(app));
  }
}
