package io.sluice.spark.shuffle.fallback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The reduce task's choice between READs and Spark's reader. */
class ReadRouteTest {
  private final List<Collection<String>> goneQuestions = new ArrayList<>();
  private final List<String> lookups = new ArrayList<>();

  private Function<Collection<String>, Set<String>> gone(Set<String> goneIds) {
    return ids -> {
      goneQuestions.add(List.copyOf(ids));
      return ids.stream().filter(goneIds::contains).collect(java.util.stream.Collectors.toSet());
    };
  }

  private Optional<String> choose(List<String> holders, boolean service, Set<String> goneIds, Set<String> noTransport) {
    return ReadRoute.sparkReaderReason(holders, service, gone(goneIds), id -> {
      lookups.add(id);
      return !noTransport.contains(id);
    });
  }

  @Test
  void readsWhenEveryHolderIsLiveAndServesATransport() {
    assertEquals(Optional.empty(), choose(List.of("1", "2", "1"), true, Set.of(), Set.of()));
    assertEquals(List.of(List.of("1", "2")), goneQuestions);
    assertEquals(List.of("1", "2"), lookups);
  }

  @Test
  void aRemovedExecutorWithTheShuffleServiceSendsTheTaskToSparksReader() {
    Optional<String> reason = choose(List.of("1", "2", "3"), true, Set.of("2"), Set.of());
    assertTrue(reason.orElseThrow().contains("executor(s) 2 removed"), reason.get());
    assertTrue(lookups.isEmpty(), "a gone executor's (possibly cached) address must not decide: " + lookups);
  }

  @Test
  void withoutTheShuffleServiceTheDriverIsNotAsked() {
    // Spark unregisters a lost executor's output then; a holder that vanishes mid-read is a fetch failure.
    assertEquals(Optional.empty(), choose(List.of("1", "2"), false, Set.of("2"), Set.of()));
    assertTrue(goneQuestions.isEmpty());
  }

  @Test
  void aHolderWithoutTransportSendsTheTaskToSparksReader() {
    Optional<String> reason = choose(List.of("1", "2", "3"), false, Set.of(), Set.of("2"));
    assertEquals(Optional.of("executor 2 has no shuffle transport"), reason);
    assertEquals(List.of("1", "2"), lookups);
  }

  @Test
  void noRemoteBlocksNeedNoQuestion() {
    assertEquals(Optional.empty(), choose(List.of(), true, Set.of("1"), Set.of("1")));
    assertTrue(goneQuestions.isEmpty());
    assertTrue(lookups.isEmpty());
  }
}
