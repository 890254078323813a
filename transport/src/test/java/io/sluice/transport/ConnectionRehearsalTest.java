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
  }
}
