package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.metrics.Metric;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The first transport a JVM opens rehearses a whole connection on a throwaway transport of its
 * own, which the opened transport never sees. Each case is a fresh JVM ({@link Child}), since
 * only a JVM's first open rehearses.
 */
class ConnectionRehearsalTest {
  @Test
  @Timeout(120)
  void theFirstOpenRehearsesAConnectionTheTransportNeverSees() throws Exception {
    assumeTrue(Transports.provider("tcp").isAvailable(), "tcp provider unavailable");
    for (String provider : new String[] {"tcp", "auto"}) {
      List<String> out = child("true", provider);
      assertTrue(out.contains("outcome rehearsed over tcp") || out.contains("outcome rehearsed over shm"),
          provider + ": " + out);
      assertTrue(out.contains("metrics connections.opened=0 connections.accepted=0 served.reads.count=0"),
          provider + ": " + out);
      assertTrue(out.contains("connected true"), provider + ": " + out);
    }
  }

  @Test
  @Timeout(120)
  void noConnectionIsRehearsedWhenTheRehearsalIsOffOrInMemoryOnly() throws Exception {
    assumeTrue(Transports.provider("tcp").isAvailable(), "tcp provider unavailable");
    for (String rehearse : new String[] {"memory", "false"}) {
      List<String> out = child(rehearse, "tcp");
      assertTrue(out.contains("outcome off"), rehearse + ": " + out);
      assertTrue(out.contains("connected true"), rehearse + ": " + out);
    }
  }

  @Test
  @Timeout(120)
  void anOpenLeavingTheRehearsalHandsItOverToRunOnce() throws Exception {
    assumeTrue(Transports.provider("tcp").isAvailable(), "tcp provider unavailable");
    List<String> out = FreshJvm.run(List.of(), Leaving.class, "tcp");
    // Returned before it ran; a second open has none to run; run twice, it ran once.
    assertTrue(out.contains("before done=false"), out.toString());
    assertTrue(out.contains("after second open done=false"), out.toString());
    assertTrue(out.contains("outcome rehearsed over tcp"), out.toString());
    assertTrue(out.contains("metrics connections.opened=0 connections.accepted=0 served.reads.count=0"),
        out.toString());
    assertTrue(out.contains("connected true"), out.toString());
  }

  private static List<String> child(String rehearse, String provider) throws Exception {
    return FreshJvm.run(List.of("-Dsluice.transport.rehearseAtOpen=" + rehearse), Child.class, provider);
  }

  /** Opens a transport, reports the rehearsal and the transport's own counts, then connects for real. */
  public static final class Child {
    public static void main(String[] args) throws Exception {
      TransportConfig config = TransportConfig.of(Map.of(TransportOption.PROVIDER.key(), args[0],
          TransportOption.SECRET.key(), "0123456789abcdef0123456789abcdef",
          TransportOption.ENCRYPTION.key(), "true"));
      try (Transport first = Transports.open(config, MessageHandler.REJECT_ALL)) {
        System.out.println("outcome " + Transports.CONNECTION_REHEARSAL.get(60, TimeUnit.SECONDS));
        reportAndConnect(config, first);
      }
    }

    /** Prints the transport's own counts, then connects a second transport to it. */
    static void reportAndConnect(TransportConfig config, Transport first) throws Exception {
      List<String> counts = new ArrayList<>();
      for (String name : List.of("connections.opened", "connections.accepted", "served.reads.count")) {
        for (Metric m : first.metrics().snapshot()) {
          if (m.name().equals(name)) {
            counts.add(name + "=" + m.value());
          }
        }
      }
      System.out.println("metrics " + String.join(" ", counts));
      try (Transport second = Transports.open(config, MessageHandler.REJECT_ALL);
          Connection c = second.connect(first.localAddress()).get(60, TimeUnit.SECONDS)) {
        System.out.println("connected " + (c.peerNode() == first.nodeId()));
      }
    }
  }

  /** Opens leaving the rehearsal, opens again, then runs the first open's rehearsal twice. */
  public static final class Leaving {
    public static void main(String[] args) throws Exception {
      TransportConfig config = TransportConfig.of(Map.of(TransportOption.PROVIDER.key(), args[0],
          TransportOption.SECRET.key(), "0123456789abcdef0123456789abcdef",
          TransportOption.ENCRYPTION.key(), "true"));
      Transports.Opened opened = Transports.openLeavingRehearsal(config, MessageHandler.REJECT_ALL);
      try (Transport first = opened.transport()) {
        System.out.println("before done=" + Transports.CONNECTION_REHEARSAL.isDone());
        Transports.Opened again = Transports.openLeavingRehearsal(config, MessageHandler.REJECT_ALL);
        again.rehearsal().run();
        again.transport().close();
        System.out.println("after second open done=" + Transports.CONNECTION_REHEARSAL.isDone());
        opened.rehearsal().run();
        opened.rehearsal().run();
        System.out.println("outcome " + Transports.CONNECTION_REHEARSAL.get(60, TimeUnit.SECONDS));
        Child.reportAndConnect(config, first);
      }
    }
  }
}
