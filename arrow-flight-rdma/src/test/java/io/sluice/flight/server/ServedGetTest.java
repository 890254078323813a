package io.sluice.flight.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.flight.protocol.DataPlaneProtocol.Announcement;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyFrame;
import io.sluice.flight.protocol.DataPlaneProtocol.BodyRef;
import io.sluice.transport.RemoteDescriptor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** The announcement window of a served get, its acknowledgements, its end and its deadline. */
class ServedGetTest {
  private static List<BodyFrame> bodies(int n, long length) {
    RemoteDescriptor d = new RemoteDescriptor(1, 2, n * length, 4);
    List<BodyFrame> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(new BodyFrame(false, i, new byte[] {(byte) i}, new BodyRef(d, i * length, length), i));
    }
    return out;
  }

  @Test
  void announcesWithinTheByteWindowAndEndsWhenAllAreAcknowledged() throws Exception {
    ServedGet get = new ServedGet(9, bodies(5, 100), 250, TimeUnit.SECONDS.toNanos(10));
    Announcement first = get.pull(0, 64, false);
    assertEquals(2, first.bodies().size()); // 200 bytes; a third would pass 250
    assertFalse(first.last());
    assertEquals(0, get.pull(0, 64, false).bodies().size()); // nothing acknowledged, no room
    Announcement second = get.pull(2, 1, false);
    assertEquals(1, second.bodies().size()); // limited by what was asked for
    assertEquals(2, second.bodies().get(0).sequence());
    Announcement third = get.pull(3, 64, false);
    assertEquals(List.of(3L, 4L), third.bodies().stream().map(BodyFrame::sequence).toList());
    assertTrue(third.last());
    assertThrows(IllegalArgumentException.class, () -> get.pull(6, 0, false));
    get.pull(5, 0, false);
    get.awaitDone(); // returns: every body acknowledged
  }

  @Test
  void aBodyLargerThanTheWindowIsStillAnnouncedAlone() {
    ServedGet get = new ServedGet(9, bodies(2, 1000), 10, TimeUnit.SECONDS.toNanos(10));
    assertEquals(1, get.pull(0, 64, false).bodies().size());
    assertEquals(0, get.pull(0, 64, false).bodies().size());
    assertEquals(1, get.pull(1, 64, false).bodies().size());
  }

  @Test
  void aReaderThatStopsEndsTheWaitWithoutTheRest() throws Exception {
    ServedGet get = new ServedGet(9, bodies(4, 10), 100, TimeUnit.SECONDS.toNanos(10));
    get.pull(0, 2, false);
    Announcement after = get.pull(1, 64, true);
    assertTrue(after.last());
    assertEquals(0, after.bodies().size());
    get.awaitDone(); // returns: the reader stopped
  }

  @Test
  void cancellingFailsTheWaitAndLaterPulls() {
    ServedGet get = new ServedGet(9, bodies(2, 10), 100, TimeUnit.SECONDS.toNanos(10));
    get.pull(0, 64, false);
    get.cancel(new CancellationException("gone"));
    assertThrows(CancellationException.class, get::awaitDone);
    assertThrows(IllegalStateException.class, () -> get.pull(1, 1, false));
  }

  @Test
  void aSilentReaderTimesOut() {
    ServedGet get = new ServedGet(9, bodies(2, 10), 100, TimeUnit.MILLISECONDS.toNanos(50));
    get.pull(0, 64, false);
    assertThrows(TimeoutException.class, get::awaitDone);
    assertThrows(IllegalStateException.class, () -> get.pull(2, 0, false));
  }
}
