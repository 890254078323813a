package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The order in which an executor prefers its peers when the bound on connections has no room for
 * all of them: the same for every task of one executor, different between executors, and spread
 * over the peers when every executor takes the first few.
 */
class PreferenceOrderTest {
  private static final List<String> EXECUTORS = IntStream.range(0, 32).mapToObj(String::valueOf).toList();

  @Test
  void anExecutorsOrderIsAStablePermutationOfItsPeers() {
    List<String> peers = EXECUTORS.subList(1, 32);
    List<String> order = RdmaShuffleReader.preferenceOrder("0", peers);
    assertEquals(new HashSet<>(peers), new HashSet<>(order));
    assertEquals(peers.size(), order.size());
    List<String> reversed = new ArrayList<>(peers);
    Collections.reverse(reversed);
    assertEquals(order, RdmaShuffleReader.preferenceOrder("0", reversed), "the order the peers are given in does not matter");
    assertNotEquals(order, RdmaShuffleReader.preferenceOrder("1", peers));
  }

  @Test
  void executorsThatTakeTheirFirstEightPeersSpreadOverThemAll() {
    Map<String, Integer> chosenBy = new HashMap<>();
    for (String self : EXECUTORS) {
      List<String> peers = EXECUTORS.stream().filter(e -> !e.equals(self)).toList();
      RdmaShuffleReader.preferenceOrder(self, peers).subList(0, 8).forEach(p -> chosenBy.merge(p, 1, Integer::sum));
    }
    // 256 choices over 32 peers, 8 each on average; taking the same eight would give 32 to each of 8.
    assertTrue(chosenBy.size() >= 28, "chosen peers: " + chosenBy);
    assertTrue(chosenBy.values().stream().allMatch(n -> n <= 20), "chosen peers: " + chosenBy);
  }
}
