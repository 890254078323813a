package io.sluice.spark.shuffle.fetch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.fetch.ReadPlanner.Block;
import io.sluice.spark.shuffle.fetch.ReadPlanner.Unit;
import io.sluice.spark.shuffle.protocol.RangeProtocol;
import io.sluice.transport.RemoteDescriptor;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How a reducer cuts range requests and READ units; no transport, no Spark. */
class ReadPlannerTest {
  private static RangeProtocol.Answer answer(long fileLength, long... offsets) {
    return new RangeProtocol.Answer(List.of(new RemoteDescriptor(1, 0, fileLength, 9)), offsets,
        new int[offsets.length - 1]);
  }

  @Test
  void requestsStayWithinTheResponseSize() {
    List<RangeProtocol.Query> queries = List.of(new RangeProtocol.Query(1, 0, 10),
        new RangeProtocol.Query(2, 0, 10), new RangeProtocol.Query(3, 0, 10));
    long two = RangeProtocol.responseBytes(queries.subList(0, 2));
    assertEquals(List.of(queries.subList(0, 2), queries.subList(2, 3)), ReadPlanner.requests(queries, two));
    assertEquals(List.of(queries), ReadPlanner.requests(queries, RangeProtocol.responseBytes(queries)));
    // A query too large for any message still gets a request of its own.
    assertEquals(List.of(List.of(queries.get(0)), List.of(queries.get(1)), List.of(queries.get(2))),
        ReadPlanner.requests(queries, 1));
    for (List<RangeProtocol.Query> r : ReadPlanner.requests(queries, two)) {
      assertTrue(RangeProtocol.responseBytes(r) <= two, "request of " + r.size() + " queries");
    }
  }

  @Test
  void contiguousBlocksAreOneUnitAndEmptyBlocksAreNotRead() {
    // Partitions 5..8 of a map output: 100 bytes, empty, 50 bytes, 30 bytes.
    List<Unit> units = ReadPlanner.units(answer(1000, 200, 300, 300, 350, 380), 5, 1 << 20);
    assertEquals(List.of(new Unit(200, 180,
        List.of(new Block(5, 0, 100), new Block(7, 100, 50), new Block(8, 150, 30)))), units);
  }

  @Test
  void unitsAreCutAtBlockBoundariesToTheRangeBound() {
    List<Unit> units = ReadPlanner.units(answer(1000, 0, 100, 150, 400, 420), 0, 150);
    assertEquals(List.of(
        new Unit(0, 150, List.of(new Block(0, 0, 100), new Block(1, 100, 50))),
        // A block larger than the bound is a unit of its own.
        new Unit(150, 250, List.of(new Block(2, 0, 250))),
        new Unit(400, 20, List.of(new Block(3, 0, 20)))), units);
  }

  @Test
  void anAnswerWithoutDataHasNoUnits() {
    assertEquals(List.of(), ReadPlanner.units(answer(0, 0, 0, 0), 3, 100));
  }

  @Test
  void aBlockOverTwoGibibytesNamesItsPartition() {
    long big = ReadPlanner.MAX_BLOCK_BYTES + 1;
    ReadPlanner.BlockTooLargeException e = assertThrows(ReadPlanner.BlockTooLargeException.class,
        () -> ReadPlanner.units(answer(big + 10, 0, 10, 10 + big), 4, Long.MAX_VALUE));
    assertEquals(5, e.partition());
    assertEquals(big, e.length());
    assertEquals("block of " + big + " bytes exceeds 2 GiB", e.getMessage());
  }
}
