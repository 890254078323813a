package io.sluice.spark.shuffle.fallback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.fallback.Decision.Scope;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The shuffle manager's fallback decisions, their reasons and their log lines; no Spark. */
class FallbackPolicyTest {
  private final List<Decision> logged = new CopyOnWriteArrayList<>();
  private final FallbackPolicy policy = new FallbackPolicy(logged::add);

  @Test
  void anExecutorWhoseTransportDidNotStartUsesSparksShuffle() {
    Decision d = policy.decideExecutor("3", Optional.of("TransportException: verbs: no active device"));
    assertTrue(d.usesSparkShuffle());
    assertEquals(Scope.EXECUTOR, d.scope());
    assertEquals("Executor 3: the shuffle transport could not start: TransportException: verbs: no active device;"
        + " this executor uses Spark's sort shuffle", d.logLine());
    assertEquals(List.of(d), logged);
  }

  @Test
  void anExecutorWhoseTransportStartedUsesIt() {
    Decision d = policy.decideExecutor("1", Optional.empty());
    assertFalse(d.usesSparkShuffle());
    assertEquals("Executor 1: this executor serves and reads shuffle output through its shuffle transport",
        d.logLine());
    assertEquals(List.of(d), logged);
  }

  @Test
  void theExecutorIsDecidedOncePerProcess() {
    policy.decideExecutor("1", Optional.empty());
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> policy.decideExecutor("1", Optional.of("late failure")));
    assertTrue(e.getMessage().contains("Executor 1: this executor serves"), e.getMessage());
    assertEquals(1, logged.size(), "a refused second decision is not logged: " + logged);
  }

  @Test
  void shuffleRuleNamesItsReason() {
    assertEquals(Optional.of("this executor has no shuffle transport"),
        FallbackPolicy.shuffleRule(4, "2", false, false).sparkShuffleReason());
    // No transport is the reason even when push-based merge is on too.
    assertEquals(Optional.of("this executor has no shuffle transport"),
        FallbackPolicy.shuffleRule(4, "2", false, true).sparkShuffleReason());
    assertEquals(Optional.of("push-based shuffle merges its blocks"),
        FallbackPolicy.shuffleRule(4, "2", true, true).sparkShuffleReason());
    Decision read = FallbackPolicy.shuffleRule(4, "2", true, false);
    assertFalse(read.usesSparkShuffle());
    assertEquals("Shuffle 4 on executor 2: its map outputs are registered and read through the shuffle transport",
        read.logLine());
    assertEquals("Shuffle 4 on executor 2: push-based shuffle merges its blocks; Spark's sort shuffle writes and"
        + " reads it here", FallbackPolicy.shuffleRule(4, "2", true, true).logLine());
    assertTrue(logged.isEmpty(), "rules log nothing");
  }

  @Test
  void aShuffleIsDecidedAndLoggedOncePerExecutor() {
    Decision first = policy.decideShuffle(7, "1", true, false);
    // Later tasks of the shuffle get the first decision, whatever they see.
    assertSame(first, policy.decideShuffle(7, "1", true, true));
    assertSame(first, policy.decideShuffle(7, "1", false, false));
    Decision other = policy.decideShuffle(8, "1", true, true);
    assertTrue(other.usesSparkShuffle());
    assertEquals(List.of(first, other), logged);
  }

  @Test
  void anUnregisteredShuffleIsForgotten() {
    policy.decideShuffle(7, "1", true, false);
    policy.forgetShuffle(7);
    Decision again = policy.decideShuffle(7, "1", true, true);
    assertTrue(again.usesSparkShuffle());
    assertEquals(2, logged.size(), "each decision is logged: " + logged);
    policy.forgetShuffle(99); // never decided: nothing to drop
  }

  @Test
  void concurrentTasksOfAShuffleShareOneDecision() throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(8);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Decision>> got = new ArrayList<>();
      for (int i = 0; i < 64; i++) {
        boolean merge = i % 2 == 0;
        got.add(threads.submit(() -> {
          start.await(10, TimeUnit.SECONDS);
          return policy.decideShuffle(5, "1", true, merge);
        }));
      }
      start.countDown();
      Decision first = got.get(0).get(10, TimeUnit.SECONDS);
      for (Future<Decision> f : got) {
        assertSame(first, f.get(10, TimeUnit.SECONDS));
      }
      assertEquals(List.of(first), logged);
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void aTaskWithBlocksThatCannotBeReadFallsBackWithoutAskingAnyone() {
    List<String> asked = new ArrayList<>();
    Function<Collection<String>, Set<String>> gone = ids -> {
      asked.add("gone " + ids);
      return Set.of();
    };
    Decision d = policy.decideReduceTask(2, 9, Optional.of("unsupported shuffle block shufflePush_2_0_1_9"),
        List.of("1"), true, gone, id -> asked.add("transport " + id));
    assertEquals("Shuffle 2 reduce 9: unsupported shuffle block shufflePush_2_0_1_9; reading through Spark's"
        + " sort shuffle", d.logLine());
    assertTrue(asked.isEmpty(), "asked: " + asked);
    assertEquals(List.of(d), logged);
  }

  @Test
  void aTaskFollowsTheReadRoute() {
    Decision noTransport = policy.decideReduceTask(2, 0, Optional.empty(), List.of("1", "2"), false,
        ids -> Set.of(), id -> !id.equals("2"));
    assertEquals(Optional.of("executor 2 has no shuffle transport"), noTransport.sparkShuffleReason());
    Decision gone = policy.decideReduceTask(2, 1, Optional.empty(), List.of("1", "2"), true,
        ids -> Set.of("1"), id -> true);
    assertTrue(gone.sparkShuffleReason().orElseThrow().contains("executor(s) 1 removed"), gone.logLine());
    Decision read = policy.decideReduceTask(2, 2, Optional.empty(), List.of("1", "2"), true,
        ids -> Set.of(), id -> true);
    assertEquals("Shuffle 2 reduce 2: reading through the shuffle transport", read.logLine());
    // Every task is decided afresh and logged once.
    assertEquals(List.of(noTransport, gone, read), logged);
  }

  @Test
  void aDecisionNeedsASubject() {
    assertThrows(IllegalArgumentException.class, () -> Decision.transport(Scope.SHUFFLE, " "));
    assertThrows(NullPointerException.class, () -> new Decision(Scope.SHUFFLE, "shuffle 1", null));
  }

  @Test
  void decisionsAreCountedByScopeAndReason() {
    policy.decideExecutor("1", Optional.empty());
    policy.decideShuffle(1, "1", false, false);
    policy.decideShuffle(1, "1", true, false); // decided already: not counted again
    policy.decideShuffle(2, "1", true, true);
    policy.decideReduceTask(3, 0, Optional.of("unsupported shuffle block x"), List.of(), false, ids -> Set.of(),
        id -> true);
    policy.decideReduceTask(3, 1, Optional.empty(), List.of("2"), true, ids -> Set.copyOf(ids), id -> true);
    policy.decideReduceTask(3, 2, Optional.empty(), List.of("2"), false, ids -> Set.of(), id -> false);
    policy.decideReduceTask(3, 3, Optional.empty(), List.of("2"), false, ids -> Set.of(), id -> true);
    var counts = policy.counts().snapshot();
    assertEquals(1L, counts.get("decisions.executor.transport"));
    assertEquals(0L, counts.get("fallback.executor.transportStartFailed"));
    assertEquals(1L, counts.get("fallback.shuffle.noTransport"));
    assertEquals(1L, counts.get("fallback.shuffle.pushMerge"));
    assertEquals(1L, counts.get("fallback.reduceTask.unsupportedBlock"));
    assertEquals(1L, counts.get("fallback.reduceTask.executorRemoved"));
    assertEquals(1L, counts.get("fallback.reduceTask.peerWithoutTransport"));
    assertEquals(1L, counts.get("decisions.reduceTask.transport"));
  }

  @Test
  void aFallbackReasonMustFitItsDecision() {
    assertThrows(IllegalArgumentException.class, () -> Decision.sparkShuffle(Scope.SHUFFLE, "shuffle 1",
        FallbackReason.UNSUPPORTED_BLOCK, "a reduce-task reason on a shuffle"));
    assertThrows(IllegalArgumentException.class, () -> new Decision(Scope.SHUFFLE, "shuffle 1", Optional.empty(),
        Optional.of(FallbackReason.NO_TRANSPORT)));
  }
}
