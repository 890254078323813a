package io.sluice.lab.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.TransportReport;
import java.util.List;
import org.apache.spark.shuffle.rdma.ShuffleReadTotals;
import java.util.Map;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/** The lab's Spark check passes only when the answers match and every shuffle byte (local reads off) went by verbs READs. */
class VerbsLabJobTest {
  private static final List<Tuple2<Integer, Long>> ANSWER = List.of(new Tuple2<>(0, 10L), new Tuple2<>(1, 12L));
  private static final ShuffleReadTotals.Totals REMOTE_300 = new ShuffleReadTotals.Totals(300, 4, 200, 4, 0, 8, 4);

  private static TransportReport verbs(String id, long bytes) {
    return new TransportReport(id, "verbs", "10.77.0.1:1", Map.of("verbs", bytes), 4);
  }

  @Test
  void passesWhenEveryRemoteByteWasReadOverVerbs() {
    assertEquals(List.of(), VerbsLabJob.check(ANSWER, ANSWER, List.of(verbs("0", 100), verbs("1", 400)), REMOTE_300));
  }

  @Test
  void failsOnADifferentAnswer() {
    List<String> failures = VerbsLabJob.check(ANSWER, List.of(new Tuple2<>(0, 10L), new Tuple2<>(1, 13L)),
        List.of(verbs("0", 100), verbs("1", 400)), REMOTE_300);
    assertEquals(1, failures.size(), failures.toString());
    assertTrue(failures.get(0).startsWith("the answers differ"), failures.toString());
  }

  @Test
  void failsWhenTheManagerFellBackOrBytesWentAnotherWay() {
    assertEquals(2, VerbsLabJob.check(ANSWER, ANSWER, List.of(), REMOTE_300).size()); // no reports, 0 B over verbs
    List<String> tcp = VerbsLabJob.check(ANSWER, ANSWER, List.of(verbs("0", 100),
        new TransportReport("1", "verbs", "10.77.0.1:2", Map.of("verbs", 350L, "tcp", 50L), 4)), REMOTE_300);
    assertEquals(2, tcp.size(), tcp.toString()); // 50 B over tcp, and verbs bytes short of Spark's count
    List<String> provider = VerbsLabJob.check(ANSWER, ANSWER, List.of(verbs("0", 100),
        new TransportReport("1", "tcp", "10.77.0.1:2", Map.of("verbs", 400L), 4)), REMOTE_300);
    assertEquals(List.of("executor 1 uses provider tcp"), provider);
  }

  @Test
  void failsWhenNothingCrossedExecutors() {
    List<String> failures = VerbsLabJob.check(ANSWER, ANSWER, List.of(verbs("0", 250), verbs("1", 250)),
        new ShuffleReadTotals.Totals(0, 0, 500, 8, 0, 8, 4));
    assertEquals(List.of("no remote shuffle bytes: nothing crossed executors"), failures);
  }
}
