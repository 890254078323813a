package io.sluice.perf.tpcds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class TpcdsQueriesTest {
  @Test
  void findsAllOfSparksQueriesInOrder() {
    List<String> all = TpcdsQueries.all();
    assertEquals(103, all.size());
    assertEquals("q1", all.get(0));
    assertEquals("q99", all.get(all.size() - 1));
    int i = all.indexOf("q14a");
    assertEquals(List.of("q13", "q14a", "q14b", "q15"), all.subList(i - 1, i + 3));
    assertTrue(all.containsAll(List.of("q23a", "q23b", "q24a", "q24b", "q39a", "q39b")));
  }

  @Test
  void readsAQueryText() {
    String q1 = TpcdsQueries.text("q1");
    assertTrue(q1.contains("customer_total_return"), q1);
  }

  @Test
  void selectsByNameOrAll() {
    List<String> all = TpcdsQueries.all();
    assertEquals(all, TpcdsQueries.select("all", all));
    assertEquals(List.of("q72", "q1"), TpcdsQueries.select("q72, q1,q72", all));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TpcdsQueries.select("q1,q14", all));
    assertTrue(e.getMessage().contains("q14"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> TpcdsQueries.select(",", all));
  }
}
