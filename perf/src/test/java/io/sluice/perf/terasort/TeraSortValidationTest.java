package io.sluice.perf.terasort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** TeraSort's records, partitioner and validation, without Spark: a wrong output must not pass. */
class TeraSortValidationTest {
  private static final int ROWS = 5000;
  private static final int PARTS = 4;

  @TempDir
  Path dir;

  @Test
  void recordsDependOnTheRowAlone() {
    byte[] k1 = new byte[TeraRecords.KEY_BYTES];
    byte[] v1 = new byte[TeraRecords.VALUE_BYTES];
    byte[] k2 = new byte[TeraRecords.KEY_BYTES];
    byte[] v2 = new byte[TeraRecords.VALUE_BYTES];
    TeraRecords.fill(42, k1, v1);
    TeraRecords.fill(42, k2, v2);
    assertArrayEquals(k1, k2);
    assertArrayEquals(v1, v2);
    TeraRecords.fill(43, k2, v2);
    assertFalse(java.util.Arrays.equals(k1, k2));
    assertEquals("00000000000000000042", new String(v1, 0, 20, java.nio.charset.StandardCharsets.US_ASCII));
  }

  @Test
  void partitionsFollowKeyOrder() {
    List<byte[]> keys = keys(ROWS);
    keys.sort(new KeyOrder());
    KeyRangePartitioner partitioner = new KeyRangePartitioner(PARTS);
    int previous = 0;
    int[] counts = new int[PARTS];
    for (byte[] k : keys) {
      int p = partitioner.getPartition(k);
      assertTrue(p >= previous && p < PARTS, "partition " + p + " after " + previous);
      previous = p;
      counts[p]++;
    }
    for (int c : counts) {
      assertTrue(c > ROWS / PARTS / 2, "uniform keys spread over the partitions: " + java.util.Arrays.toString(counts));
    }
  }

  @Test
  void aCorrectSortValidates() throws IOException {
    TeraRecords.Checksum input = TeraRecords.writeRange(dir.resolve("input"), 0, ROWS);
    assertTrue(TeraSort.validate(sortInto(dir.resolve("out"), input(), false, false), input).isEmpty());
  }

  @Test
  void disorderWithinAFileFails() throws IOException {
    TeraRecords.Checksum input = TeraRecords.writeRange(dir.resolve("input"), 0, ROWS);
    List<String> problems = TeraSort.validate(sortInto(dir.resolve("out"), input(), true, false), input);
    assertEquals(1, problems.size(), problems.toString());
    assertTrue(problems.get(0).contains("out of order"), problems.toString());
  }

  @Test
  void filesInTheWrongOrderFail() throws IOException {
    TeraRecords.Checksum input = TeraRecords.writeRange(dir.resolve("input"), 0, ROWS);
    List<TeraSort.PartSummary> parts = sortInto(dir.resolve("out"), input(), false, false);
    List<TeraSort.PartSummary> swapped = new ArrayList<>();
    for (TeraSort.PartSummary s : parts) {
      int p = s.partition == 0 ? 1 : s.partition == 1 ? 0 : s.partition;
      swapped.add(new TeraSort.PartSummary(p, s.firstKey, s.lastKey, s.checksum, s.outOfOrder));
    }
    List<String> problems = TeraSort.validate(swapped, input);
    assertTrue(problems.stream().anyMatch(p -> p.contains("ends above the start")), problems.toString());
  }

  @Test
  void aLostOrChangedRecordFails() throws IOException {
    TeraRecords.Checksum input = TeraRecords.writeRange(dir.resolve("input"), 0, ROWS);
    List<String> lost = TeraSort.validate(sortInto(dir.resolve("lost"), input().subList(1, ROWS), false, false), input);
    assertTrue(lost.stream().anyMatch(p -> p.contains("checksum")), lost.toString());
    List<String> changed = TeraSort.validate(sortInto(dir.resolve("changed"), input(), false, true), input);
    assertTrue(changed.stream().anyMatch(p -> p.contains("checksum")), changed.toString());
    assertNotEquals(input, TeraRecords.Checksum.EMPTY);
  }

  private List<byte[][]> input() throws IOException {
    List<byte[][]> records = new ArrayList<>();
    TeraRecords.read(dir.resolve("input")).forEachRemaining(records::add);
    assertEquals(ROWS, records.size());
    return records;
  }

  /** Partitions and sorts like the job (optionally breaking it), writes the files, summarizes them. */
  private static List<TeraSort.PartSummary> sortInto(Path out, List<byte[][]> records, boolean swapTwo,
      boolean alterOne) throws IOException {
    KeyRangePartitioner partitioner = new KeyRangePartitioner(PARTS);
    List<List<byte[][]>> parts = new ArrayList<>();
    for (int p = 0; p < PARTS; p++) {
      parts.add(new ArrayList<>());
    }
    for (byte[][] r : records) {
      parts.get(partitioner.getPartition(r[0])).add(new byte[][] {r[0].clone(), r[1].clone()});
    }
    List<TeraSort.PartSummary> summaries = new ArrayList<>();
    for (int p = 0; p < PARTS; p++) {
      List<byte[][]> part = parts.get(p);
      part.sort((a, b) -> TeraRecords.compareKeys(a[0], b[0]));
      if (swapTwo && p == 2) {
        byte[][] first = part.get(0);
        part.set(0, part.get(1));
        part.set(1, first);
      }
      if (alterOne && p == 1) {
        part.get(3)[1][50] ^= 1;
      }
      Path file = out.resolve(TeraSort.part(p));
      try (TeraRecords.Writer w = new TeraRecords.Writer(file)) {
        for (byte[][] r : part) {
          w.write(r[0], r[1]);
        }
      }
      summaries.add(TeraSort.summarize(p, file));
    }
    return summaries;
  }

  private static List<byte[]> keys(int n) {
    List<byte[]> keys = new ArrayList<>();
    byte[] value = new byte[TeraRecords.VALUE_BYTES];
    for (int i = 0; i < n; i++) {
      byte[] k = new byte[TeraRecords.KEY_BYTES];
      TeraRecords.fill(i, k, value);
      keys.add(k);
    }
    return keys;
  }
}
