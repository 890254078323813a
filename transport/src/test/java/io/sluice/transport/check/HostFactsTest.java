package io.sluice.transport.check;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@link HostFacts} reads from a device's sysfs entries, written here as the kernel writes them. */
class HostFactsTest {
  @TempDir
  Path sys;

  @Test
  void anIwarpGidIsMatchedToItsInterfaceByTheMacItStartsWith() throws Exception {
    // soft-iWARP: the GID is the interface's MAC followed by zeros, with no ndevs or types entries.
    Path siw = sys.resolve("siw0/ports/1");
    Files.createDirectories(siw.resolve("gids"));
    Files.writeString(siw.resolve("state"), "4: ACTIVE\n");
    Files.writeString(siw.resolve("link_layer"), "Ethernet\n");
    Files.writeString(siw.resolve("gids/0"), "5a03:da6c:73a6:0000:0000:0000:0000:0000\n");
    // SoftRoCE: the kernel names the interface; the MAC table is not asked.
    Path rxe = sys.resolve("rxe0/ports/1");
    Files.createDirectories(rxe.resolve("gids"));
    Files.createDirectories(rxe.resolve("gid_attrs/ndevs"));
    Files.writeString(rxe.resolve("state"), "4: ACTIVE\n");
    Files.writeString(rxe.resolve("link_layer"), "Ethernet\n");
    Files.writeString(rxe.resolve("gids/0"), "fe80:0000:0000:0000:5803:daff:fe6c:73a5\n");
    Files.writeString(rxe.resolve("gid_attrs/ndevs/0"), "veth0\n");

    List<HostFacts.Port> ports = HostFacts.ports(sys, Map.of("5a03da6c73a6", "veth2", "fe8000000000", "wrong"));
    assertEquals(2, ports.size());
    HostFacts.Port rxePort = ports.get(0);
    HostFacts.Port siwPort = ports.get(1);
    assertEquals(Optional.of("veth0"), rxePort.gids().get(0).netdev());
    assertEquals(Optional.of("veth2"), siwPort.gids().get(0).netdev());
    // A GID whose MAC no interface has names none.
    assertEquals(Optional.empty(), HostFacts.ports(sys, Map.of()).get(1).gids().get(0).netdev());
  }
}
