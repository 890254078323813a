package io.sluice.perf.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.NodeAddress;
import io.sluice.transport.RemoteDescriptor;
import java.io.IOException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ServerEndpointsTest {
  @Test
  void announcementsRoundTrip() throws IOException {
    RemoteDescriptor d = new RemoteDescriptor(0x1234L, 0, 64 << 20, 0xfeedfacecafebeefL);
    ServerEndpoints.ServedRegion served = new ServerEndpoints.ServedRegion("shm", new NodeAddress("127.0.0.1", 4000), d);
    ServerEndpoints.Parser p = new ServerEndpoints.Parser();
    assertEquals(Optional.empty(), p.accept(ServerEndpoints.socketLine(new NodeAddress("127.0.0.1", 3999))));
    assertEquals(Optional.empty(), p.accept("OpenJDK 64-Bit Server VM warning: something"));
    assertEquals(Optional.empty(), p.accept(ServerEndpoints.regionLine(served)));
    ServerEndpoints e = p.accept(ServerEndpoints.READY).orElseThrow();
    assertEquals(new NodeAddress("127.0.0.1", 3999), e.socket());
    assertEquals(served, e.region("shm"));
    IOException missing = assertThrows(IOException.class, () -> e.region("tcp"));
    assertTrue(missing.getMessage().contains("tcp"));
  }

  @Test
  void malformedAnnouncementsFailClearly() {
    assertThrows(IOException.class, () -> new ServerEndpoints.Parser().accept("region tcp 127.0.0.1:1 zz"));
    assertThrows(IOException.class, () -> new ServerEndpoints.Parser().accept("region tcp 127.0.0.1:1 00"));
    assertThrows(IOException.class, () -> new ServerEndpoints.Parser().accept("socket nohostport"));
    IOException e = assertThrows(IOException.class, () -> new ServerEndpoints.Parser().accept(ServerEndpoints.READY));
    assertTrue(e.getMessage().contains("socket"));
  }
}
