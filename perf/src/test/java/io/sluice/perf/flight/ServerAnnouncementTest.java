package io.sluice.perf.flight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.NodeAddress;
import io.sluice.transport.RemoteDescriptor;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.arrow.flight.Location;
import org.junit.jupiter.api.Test;

class ServerAnnouncementTest {
  @Test
  void announcementsRoundTrip() throws IOException {
    Map<String, Location> servers = new LinkedHashMap<>();
    servers.put("grpc", Location.forGrpcInsecure("127.0.0.1", 4000));
    servers.put("tcp", Location.forGrpcInsecure("127.0.0.1", 4001));
    servers.put("shm", Location.forGrpcInsecure("127.0.0.1", 4002));
    Map<String, ServerAnnouncement.ServedTable> tables = new LinkedHashMap<>();
    tables.put("bench", new ServerAnnouncement.ServedTable(123_456, new Fingerprint.Value(10, 2, -7L, 99)));
    tables.put("warmup", new ServerAnnouncement.ServedTable(1_024, new Fingerprint.Value(1, 1, 5L, 9)));
    Map<String, ServerAnnouncement.Ceiling> ceilings = new LinkedHashMap<>();
    ceilings.put("tcp", new ServerAnnouncement.Ceiling(new NodeAddress("127.0.0.1", 4100), List.of(
        new ServerAnnouncement.Segment(new RemoteDescriptor(1, 2, 1 << 20, -3), List.of(100L, 200L)),
        new ServerAnnouncement.Segment(new RemoteDescriptor(1, 9, 1 << 20, 4), List.of(300L))), -42L));
    ServerAnnouncement a = new ServerAnnouncement(servers, tables, ceilings);
    ServerAnnouncement.Parser p = new ServerAnnouncement.Parser();
    assertEquals(Optional.empty(), p.accept("OpenJDK 64-Bit Server VM warning: something"));
    Optional<ServerAnnouncement> parsed = Optional.empty();
    for (String line : a.lines()) {
      parsed = p.accept(line);
    }
    assertEquals(a, parsed.orElseThrow());
    assertEquals(Location.forGrpcInsecure("127.0.0.1", 4002), parsed.get().server("shm"));
    assertEquals(tables.get("warmup"), parsed.get().table("warmup"));
    assertEquals(600L, parsed.get().ceiling("tcp").bodyBytes());
    assertTrue(assertThrows(IOException.class, () -> a.ceiling("shm")).getMessage().contains("shm"));
    assertTrue(assertThrows(IOException.class, () -> a.server("verbs")).getMessage().contains("verbs"));
    assertTrue(assertThrows(IOException.class, () -> a.table("other")).getMessage().contains("other"));
  }

  @Test
  void commandsAndAnswers() {
    assertEquals(Optional.of("put-tcp"), ServerAnnouncement.tableToDrop(ServerAnnouncement.dropCommand("put-tcp")));
    assertEquals(Optional.of("put-tcp"), ServerAnnouncement.droppedTable(ServerAnnouncement.droppedLine("put-tcp")));
    assertEquals(Optional.empty(), ServerAnnouncement.droppedTable("put-tcp"));
  }

  @Test
  void malformedAnnouncementsFailClearly() {
    assertThrows(IOException.class, () -> new ServerAnnouncement.Parser().accept("table bench 1 2"));
    assertThrows(IOException.class, () -> new ServerAnnouncement.Parser().accept("table bench x 1 1 ff 1"));
    assertThrows(IOException.class, () -> new ServerAnnouncement.Parser().accept("flight tcp"));
    assertThrows(IOException.class, () -> new ServerAnnouncement.Parser().accept("segment tcp 00 1,2"));
    assertThrows(IOException.class, () -> new ServerAnnouncement.Parser().accept("ceiling tcp nohost ff"));
    IOException e = assertThrows(IOException.class, () -> new ServerAnnouncement.Parser().accept("ready"));
    assertTrue(e.getMessage().contains("table"));
  }
}
