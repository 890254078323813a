package io.sluice.perf.scale;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ProcTablesTest {
  @Test
  void statusFields() {
    ProcTables.Status s = ProcTables.status("Name:\tjava\nVmLck:\t      12 kB\nVmPin:\t       4 kB\n"
        + "VmRSS:\t  230144 kB\nThreads:\t48\n");
    assertEquals(new ProcTables.Status(48, 230144, 12, 4), s);
    assertEquals(new ProcTables.Status(0, 0, 0, 0), ProcTables.status("Name:\tzombie\n"));
  }

  @Test
  void ipv4TableByInode() {
    String text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        + "   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 651 1 0 100 0 0 10 0\n"
        + "   1: 0B4D0A0A:9C40 0C4D0A0A:B3A2 01 00000000:00000000 00:00000000 00000000     0        0 7001 1 0 20 4 30 10 -1\n"
        + "   2: 0B4D0A0A:9C41 0C4D0A0A:B3A3 06 00000000:00000000 03:00000064 00000000     0        0 0 3 0\n";
    Map<Long, ProcTables.TcpSocket> t = ProcTables.tcpTable(text);
    assertEquals(2, t.size(), "the TIME_WAIT row has no inode");
    assertEquals(new ProcTables.TcpSocket("0.0.0.0:2024", "0.0.0.0:0", ProcTables.LISTEN, 651), t.get(651L));
    ProcTables.TcpSocket c = t.get(7001L);
    assertEquals("10.10.77.11:40000", c.local());
    assertEquals("10.10.77.12:45986", c.remote());
    assertEquals(ProcTables.ESTABLISHED, c.state());
    assertEquals(40000, c.localPort());
    assertEquals(45986, c.remotePort());
  }

  @Test
  void ipv6TableShowsMappedAddressesAsIpv4() {
    String text = "  sl  local_address                         remote_address                        st tx_queue\n"
        + "   0: 0000000000000000FFFF00000B004D0A:94DD 0000000000000000FFFF000001004D0A:1BA5 01 00000000:00000000"
        + " 00:00000000 00000000     0        0 7555687 1 0 100 0 0 10 0\n"
        + "   1: 00000000000000000000000001000000:0016 00000000000000000000000000000000:0000 0A 00000000:00000000"
        + " 00:00000000 00000000     0        0 42 1 0 100 0 0 10 0\n";
    Map<Long, ProcTables.TcpSocket> t = ProcTables.tcpTable(text);
    assertEquals("10.77.0.11:38109", t.get(7555687L).local());
    assertEquals("10.77.0.1:7077", t.get(7555687L).remote());
    assertEquals("[0:0:0:0:0:0:0:1]:22", t.get(42L).local());
  }

  @Test
  void softLimits() {
    String text = "Limit                     Soft Limit           Hard Limit           Units     \n"
        + "Max open files            20000                1048576              files     \n"
        + "Max locked memory         unlimited            unlimited            bytes     \n";
    assertEquals(new ProcTables.Limits(20000, -1), ProcTables.limits(text));
    assertEquals(new ProcTables.Limits(-1, -1), ProcTables.limits("Limit Soft Limit\n"));
  }

  @Test
  void socketLinksAndBadRows() {
    assertEquals(7001, ProcTables.socketInode("socket:[7001]"));
    assertEquals(-1, ProcTables.socketInode("/tmp/x.log"));
    assertEquals(-1, ProcTables.socketInode("anon_inode:[eventpoll]"));
    assertThrows(IllegalArgumentException.class, () -> ProcTables.tcpTable("header\n 0: 00000000:07E8\n"));
    assertThrows(IllegalArgumentException.class, () -> ProcTables.endpoint("0B4D0A:9C40"));
  }
}
