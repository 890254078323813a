package io.sluice.transport.crypto;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.Connection;
import io.sluice.transport.FreshJvm;
import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.Transports;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How a JVM without OpenSSL's curves fares: with auto it connects on the JDK's; insisting on
 * OpenSSL's fails the open with a TransportException naming the setting. Each case is a fresh JVM
 * ({@link Child}), since the choice is made once per JVM.
 */
class CurvesChoiceTest {
  private static final String NO_LIBRARY = "-Dsluice.crypto.library=/nonexistent/libsluice-crypto.so";

  @Test
  @Timeout(120)
  void withoutTheLibraryAutoTakesTheJdksCurvesAndConnects() throws Exception {
    List<String> out = child(List.of(NO_LIBRARY));
    assertTrue(out.stream().anyMatch(l -> l.startsWith("curves jdk (openssl unusable: ")), out.toString());
    assertTrue(out.contains("connected true"), out.toString());
  }

  @Test
  @Timeout(120)
  void insistingOnOpenSslWithoutTheLibraryFailsTheOpenNamingTheSetting() throws Exception {
    List<String> out = child(List.of(NO_LIBRARY, "-D" + Curves.PROPERTY + "=openssl"));
    assertTrue(out.stream().anyMatch(l -> l.startsWith("refused io.sluice.transport.TransportUnavailableException")
        && l.contains(Curves.PROPERTY)), out.toString());
  }

  private static List<String> child(List<String> options) throws Exception {
    return FreshJvm.run(options, Child.class);
  }

  /** Opens two transports and connects them, or says why the open was refused. */
  public static final class Child {
    public static void main(String[] args) throws Exception {
      TransportConfig config = TransportConfig.of(Map.of("sluice.transport.provider", "tcp",
          "sluice.transport.secret", "0123456789abcdef0123456789abcdef", "sluice.transport.encryption", "true"));
      try (Transport first = Transports.open(config, MessageHandler.REJECT_ALL);
          Transport second = Transports.open(config, MessageHandler.REJECT_ALL);
          Connection c = second.connect(first.localAddress()).get(60, TimeUnit.SECONDS)) {
        System.out.println("curves " + Curves.description());
        System.out.println("connected " + (c.peerNode() == first.nodeId()));
      } catch (TransportException e) {
        System.out.println("refused " + e.getClass().getName() + ": " + e.getMessage());
      }
    }
  }
}
