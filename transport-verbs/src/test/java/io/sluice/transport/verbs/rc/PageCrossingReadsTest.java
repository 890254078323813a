package io.sluice.transport.verbs.rc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class PageCrossingReadsTest {
  private static final long PAGE = 0x7f12_3456_7000L;

  private static RdmaRead read(long remote, int length) {
    return new RdmaRead(remote, 0x11, 0x5500_0100L, 0x22, length);
  }

  @Test
  void aShortReadAcrossABoundaryIsSplitThereAndLandsWhereItWould() {
    List<RdmaRead> parts = PageCrossingReads.split(read(PAGE - 13, 19));
    assertEquals(List.of(new RdmaRead(PAGE - 13, 0x11, 0x5500_0100L, 0x22, 13),
        new RdmaRead(PAGE, 0x11, 0x5500_0100L + 13, 0x22, 6)), parts);
  }

  @Test
  void everyShortReadAcrossABoundaryBecomesTwoThatCrossNone() {
    for (int n = 2; n <= PageCrossingReads.SHORT_READ_BYTES; n++) {
      for (int before = 1; before < n; before++) {
        RdmaRead r = read(PAGE - before, n);
        assertTrue(PageCrossingReads.crossesPage(r));
        List<RdmaRead> parts = PageCrossingReads.split(r);
        assertEquals(2, parts.size());
        assertEquals(before, parts.get(0).length());
        assertEquals(n, parts.get(0).length() + parts.get(1).length());
        assertEquals(r.localAddress() + before, parts.get(1).localAddress());
        parts.forEach(p -> assertFalse(PageCrossingReads.crossesPage(p)));
      }
    }
  }

  @Test
  void readsWithinAPageOrLongerThanTheFaultyCopyStayWhole() {
    assertEquals(List.of(read(PAGE - 32, 32)), PageCrossingReads.split(read(PAGE - 32, 32)));
    assertEquals(List.of(read(PAGE, 32)), PageCrossingReads.split(read(PAGE, 32)));
    assertEquals(List.of(read(PAGE - 1, 1)), PageCrossingReads.split(read(PAGE - 1, 1)));
    assertEquals(List.of(read(PAGE - 16, 33)), PageCrossingReads.split(read(PAGE - 16, 33)));
    assertEquals(List.of(read(PAGE - 100, 4096)), PageCrossingReads.split(read(PAGE - 100, 4096)));
  }
}
