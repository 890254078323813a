package io.sluice.flight.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** One peer's unredeemed grants are bounded, and its hogging takes nothing from another peer. */
class GrantsTest {
  @Test
  void aPeerThatHoardsGrantsIsRefusedAndAnotherPeerIsNot() {
    Grants grants = new Grants(TimeUnit.MINUTES.toNanos(1), 8);
    List<byte[]> hoarded = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      hoarded.add(grants.issue(1));
    }
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> grants.issue(1));
    assertTrue(e.getMessage().contains("sluice.flight.grantsPerClient"), e.getMessage());
    byte[] other = grants.issue(2);
    assertEquals(2, grants.redeem(other).orElseThrow());
    assertEquals(1, grants.redeem(hoarded.get(0)).orElseThrow());
    grants.issue(1); // a redeemed grant frees its place
    assertTrue(grants.redeem(hoarded.get(1)).isPresent(), "the quota evicted a grant");
  }
}
