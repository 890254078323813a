package io.sluice.hadoop.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/** What the engine reads from a Configuration, through the transport's declarations. */
class EngineSettingsTest {
  @Test
  void theEngineGivesTheTransportItsOwnDeadlineUnlessTheTransportKeyIsSet() {
    Configuration conf = new Configuration(false);
    assertEquals(120_000L, EngineSettings.from(conf).ioTimeoutMs());
    conf.set("sluice.rpc.ioTimeoutMs", "5min");
    assertEquals(300_000L, EngineSettings.from(conf).ioTimeoutMs());
    conf.set("sluice.transport.ioTimeoutMs", "45s");
    assertEquals(45_000L, EngineSettings.from(conf).ioTimeoutMs());
  }

  @Test
  void sizesTakeSuffixes() {
    Configuration conf = new Configuration(false);
    assertEquals(65_536, EngineSettings.from(conf).readThreshold());
    conf.set("sluice.rpc.readThresholdBytes", "1m");
    assertEquals(1 << 20, EngineSettings.from(conf).readThreshold());
  }

  @Test
  void invalidValuesFailNamingTheKeyAndTheValue() {
    Configuration transport = new Configuration(false);
    transport.set("sluice.transport.maxMessageBytes", "16q");
    assertEquals("invalid value '16q' for sluice.transport.maxMessageBytes: unknown size suffix 'q'; expected a whole"
            + " number of bytes with an optional suffix b, k, kb, m, mb, g, gb, t, tb, p, pb",
        assertThrows(IllegalArgumentException.class, () -> EngineSettings.from(transport)).getMessage());
    Configuration engine = new Configuration(false);
    engine.set("sluice.rpc.readThresholdBytes", "-1");
    assertEquals(true, assertThrows(IllegalArgumentException.class, () -> EngineSettings.from(engine)).getMessage()
        .startsWith("invalid value '-1' for sluice.rpc.readThresholdBytes: "));
    Configuration timeout = new Configuration(false);
    timeout.set("sluice.rpc.ioTimeoutMs", "0");
    assertEquals("invalid value '0' for sluice.rpc.ioTimeoutMs: must be positive",
        assertThrows(IllegalArgumentException.class, () -> EngineSettings.from(timeout)).getMessage());
  }

  @Test
  void theSecretNeverAppearsInTheSettingsText() {
    Configuration conf = new Configuration(false);
    conf.set("sluice.transport.secret", "a-secret-that-must-not-be-logged");
    String text = EngineSettings.from(conf).toString();
    assertEquals(false, text.contains("a-secret-that-must-not-be-logged"), text);
    assertEquals(true, text.contains("sluice.transport.secret=<hidden>"), text);
  }

  @Test
  void verbsKeysAreCheckedOnEveryHostAndUnknownKeysNamed() {
    Configuration conf = new Configuration(false);
    conf.set("sluice.transport.verbs.busyPoll", "maybe");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EngineSettings.from(conf));
    assertEquals(true, e.getMessage().contains("sluice.transport.verbs.busyPoll"), e.getMessage());
    // Bodies are READ by the one caller or server told their key, which a shared READ domain would not keep.
    Configuration shared = new Configuration(false);
    shared.set("sluice.transport.verbs.readDomains", "shared");
    IllegalArgumentException s = assertThrows(IllegalArgumentException.class, () -> EngineSettings.from(shared));
    assertEquals(true, s.getMessage().startsWith("sluice.transport.verbs.readDomains=shared: "), s.getMessage());
    Configuration typo = new Configuration(false);
    typo.set("sluice.rpc.readThresholdByte", "1m");
    assertEquals(java.util.List.of("unknown key sluice.rpc.readThresholdByte; did you mean sluice.rpc.readThresholdBytes?"),
        EngineSettings.unknownKeys(typo));
  }

  @Test
  void aClientListensOnlyWhereItsTrafficToTheServerLeavesFromUnlessToldOtherwise() throws Exception {
    Configuration conf = new Configuration(false);
    conf.set("sluice.transport.secret", "0123456789abcdef0123");
    java.net.InetSocketAddress server = new java.net.InetSocketAddress("127.0.0.1", 8020);
    EngineSettings client = EngineSettings.from(conf).listeningToward(server);
    assertEquals("127.0.0.1", client.transportConfig().value(io.sluice.transport.config.TransportKeys.BIND_HOST));
    ClientContext context = ClientContexts.acquire(client);
    try {
      assertEquals("127.0.0.1", context.transport().localAddress().host());
    } finally {
      ClientContexts.release(context);
    }
    conf.set("sluice.transport.bindHost", "0.0.0.0");
    assertEquals("0.0.0.0", EngineSettings.from(conf).listeningToward(server).transportConfig()
        .value(io.sluice.transport.config.TransportKeys.BIND_HOST));
  }
}
