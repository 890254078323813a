package io.sluice.flight.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.ResourceExhaustedException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Unredeemed grants are bounded per peer, per host and in all; a peer or host past its quota is
 * refused for load ({@link ResourceExhaustedException}, the class a client asks again on), and
 * nobody else's grants go to make room.
 */
class GrantsTest {
  private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);
  private static final byte[] KEY = new byte[32];

  @Test
  void aPeerThatHoardsGrantsIsRefusedAndAnotherPeerIsNot() throws Exception {
    Grants grants = new Grants(MINUTE, 8, 1024);
    List<byte[]> hoarded = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      hoarded.add(grants.issue(1, KEY, "10.0.0.1"));
    }
    ResourceExhaustedException e = assertThrows(ResourceExhaustedException.class, () -> grants.issue(1, KEY, "10.0.0.1"));
    assertTrue(e.getMessage().contains("sluice.flight.grantsPerClient"), e.getMessage());
    byte[] other = grants.issue(2, KEY, "10.0.0.1");
    assertEquals(new Grants.Holder(2, KEY, "10.0.0.1"), grants.redeem(other).orElseThrow());
    assertEquals(1, grants.redeem(hoarded.get(0)).orElseThrow().node());
    grants.issue(1, KEY, "10.0.0.1"); // a redeemed grant frees its place
    assertTrue(grants.redeem(hoarded.get(1)).isPresent(), "the quota evicted a grant");
  }

  @Test
  void peersMadeUpOnOneHostHoldAtMostItsShareAndAnotherHostIsServed() throws Exception {
    Grants grants = new Grants(MINUTE, 4, 16);
    byte[] honest = grants.issue(1000, KEY, "10.0.0.2");
    int issued = 0;
    for (long node = 1; node <= 8; node++) {
      for (int i = 0; i < 4; i++) {
        try {
          grants.issue(node, KEY, "10.0.0.1");
          issued++;
        } catch (ResourceExhaustedException e) {
          assertTrue(e.getMessage().contains("sluice.flight.grantsPerHost"), e.getMessage());
        }
      }
    }
    assertEquals(16, issued, "grants of eight peers of one host");
    assertTrue(grants.redeem(honest).isPresent(), "a grant of another host went");
    assertEquals(1000, grants.redeem(grants.issue(1000, KEY, "10.0.0.2")).orElseThrow().node());
  }

  @Test
  void grantsPastTheTotalAreRefusedAndEvictNobody() throws Exception {
    Grants grants = new Grants(MINUTE, Long.MAX_VALUE, Long.MAX_VALUE);
    byte[] first = grants.issue(1, KEY, "10.0.0.2");
    for (int i = 1; i < Grants.MAX_OUTSTANDING; i++) {
      grants.issue(2 + i % 64, KEY, "10.0.0.1");
    }
    ResourceExhaustedException e = assertThrows(ResourceExhaustedException.class, () -> grants.issue(99, KEY, "10.0.0.3"));
    assertTrue(e.getMessage().contains(Grants.MAX_OUTSTANDING + " unredeemed"), e.getMessage());
    assertEquals(1, grants.redeem(first).orElseThrow().node(), "the oldest grant was evicted");
    grants.issue(99, KEY, "10.0.0.3"); // a redeemed grant frees its place
  }

  @Test
  void anExpiredGrantFreesItsPlacesAndIsNotRedeemed() throws Exception {
    Grants grants = new Grants(TimeUnit.MILLISECONDS.toNanos(1), 1, 1);
    byte[] old = grants.issue(1, KEY, "10.0.0.1");
    long issued = System.nanoTime();
    while (System.nanoTime() - issued <= TimeUnit.MILLISECONDS.toNanos(1)) {
      Thread.onSpinWait();
    }
    byte[] fresh = grants.issue(2, KEY, "10.0.0.1"); // the host's one place, freed by the expiry
    assertTrue(grants.redeem(old).isEmpty(), "an expired grant was redeemed");
    assertTrue(grants.redeem(fresh).isPresent());
  }

  @Test
  void aGrantIsItsHoldersKeysNotMerelyItsNodeIds() throws Exception {
    Grants grants = new Grants(MINUTE, 8, 8);
    Grants.Holder holder = grants.redeem(grants.issue(1, KEY, "10.0.0.1")).orElseThrow();
    byte[] sameNode = KEY.clone(); // stands for another key with node 1's id: the node is not compared
    sameNode[0] ^= 1;
    assertTrue(holder.provedBy(KEY.clone()));
    assertFalse(holder.provedBy(sameNode));
  }
}
