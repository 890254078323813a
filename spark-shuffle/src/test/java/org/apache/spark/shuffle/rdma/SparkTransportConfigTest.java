package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportOption;
import io.sluice.transport.config.TransportKeys;
import io.sluice.transport.verbs.config.VerbsKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.spark.SecurityManager;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;

/** How SparkConf becomes the transport's configuration and secret. */
class SparkTransportConfigTest {
  private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY =
      PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
  private static final Supplier<String> FROM_DRIVER = () -> "a1b2c3d4e5f60718293a4b5c6d7e8f90";

  private static SecurityManager security(SparkConf conf) {
    return new SecurityManager(conf, Option.empty(), org.apache.spark.SecurityManager$.MODULE$.$lessinit$greater$default$3());
  }

  @Test
  void sparkAuthenticationSecretIsTheTransportSecret() throws Exception {
    SparkConf conf = new SparkConf(false).set("spark.app.id", "app-1")
        .set("spark.authenticate", "true").set("spark.authenticate.secret", "spark-authenticate-secret");
    assertEquals(Optional.of("spark-authenticate-secret"), SparkTransportConfig.secret(conf, security(conf)));
    assertEquals("spark-authenticate-secret", SparkTransportConfig.from(conf, security(conf), FROM_DRIVER, List.of())
        .string(TransportOption.SECRET));
  }

  @Test
  void withoutAuthenticationTheSecretIsTheOneTheDriverHandsOut() throws Exception {
    SparkConf conf = new SparkConf(false).set("spark.app.id", "app-1");
    assertEquals(Optional.empty(), SparkTransportConfig.secret(conf, security(conf)));
    assertEquals(FROM_DRIVER.get(), SparkTransportConfig.from(conf, security(conf), FROM_DRIVER, List.of())
        .string(TransportOption.SECRET));
    SparkConf explicit = conf.clone().set("spark.shuffle.rdma.transport.secret", "set-by-hand-secret-value");
    assertEquals(Optional.of("set-by-hand-secret-value"), SparkTransportConfig.secret(explicit, security(explicit)));
  }

  @Test
  void newSecretsAreRandomHex() {
    String a = SparkTransportConfig.newSecret();
    assertEquals(64, a.length());
    assertTrue(a.chars().allMatch(c -> Character.digit(c, 16) >= 0), a);
    assertNotEquals(a, SparkTransportConfig.newSecret());
  }

  @Test
  void transportKeysPassThrough() throws Exception {
    SparkConf conf = new SparkConf(false).set("spark.app.id", "app-1")
        .set("spark.shuffle.rdma.transport.provider", "tcp")
        .set("spark.shuffle.rdma.transport.ioTimeoutMs", "1234")
        .set("spark.shuffle.rdma.transport.advertiseHost", "10.1.2.3");
    TransportConfig t = SparkTransportConfig.from(conf, security(conf), FROM_DRIVER, List.of());
    assertEquals("tcp", t.string(TransportOption.PROVIDER));
    assertEquals(1234, t.longValue(TransportOption.IO_TIMEOUT_MS));
    assertEquals("10.1.2.3", t.string(TransportOption.ADVERTISE_HOST));
    assertEquals(TransportOption.MAX_MESSAGE_BYTES.defaultValue(), t.string(TransportOption.MAX_MESSAGE_BYTES));
  }

  @Test
  void sparkWireEncryptionTurnsOnTransportEncryptionAndCannotBeOverridden() throws Exception {
    SparkConf conf = new SparkConf(false).set("spark.app.id", "app-1")
        .set("spark.network.crypto.enabled", "true")
        .set("spark.shuffle.rdma.transport.encryption", "false");
    TransportConfig t = SparkTransportConfig.from(conf, security(conf), FROM_DRIVER, List.of());
    assertEquals(true, t.booleanValue(TransportOption.ENCRYPTION));
    assertEquals(false, t.booleanValue(TransportOption.DATA_ENCRYPTED_AT_REST));

    SparkConf both = conf.clone().set("spark.io.encryption.enabled", "true");
    assertEquals(true, SparkTransportConfig.from(both, security(both), FROM_DRIVER, List.of()).booleanValue(TransportOption.DATA_ENCRYPTED_AT_REST));

    SparkConf plain = new SparkConf(false).set("spark.app.id", "app-1");
    assertEquals(false, SparkTransportConfig.from(plain, security(plain), FROM_DRIVER, List.of()).booleanValue(TransportOption.ENCRYPTION));
    SparkConf asked = plain.clone().set("spark.shuffle.rdma.transport.encryption", "true");
    assertEquals(true, SparkTransportConfig.from(asked, security(asked), FROM_DRIVER, List.of()).booleanValue(TransportOption.ENCRYPTION));
  }

  @Test
  void shmRootsComeFromTheBlockManagerFoldersUnlessSet(@TempDir Path local) throws Exception {
    // Laid out as a standalone worker lays out an executor's folders: 0700 up to the worker's.
    Path worker = Files.createDirectory(local.resolve("spark-1"), OWNER_ONLY);
    Path executor = Files.createDirectory(worker.resolve("executor-1"), OWNER_ONLY);
    Path blockManager = Files.createDirectory(executor.resolve("blockmgr-1"));
    Files.setPosixFilePermissions(local, PosixFilePermissions.fromString("rwxr-xr-x"));
    SparkConf conf = new SparkConf(false).set("spark.app.id", "app-1");
    TransportConfig derived = SparkTransportConfig.from(conf, security(conf), FROM_DRIVER, List.of(blockManager));
    assertEquals(List.of(worker.toRealPath()), derived.value(TransportKeys.SHM_TRUSTED_FILE_ROOTS));

    SparkConf explicit = conf.clone().set("spark.shuffle.rdma.transport.shm.trustedFileRoots", "/data/shuffle");
    assertEquals(List.of(Path.of("/data/shuffle")),
        SparkTransportConfig.from(explicit, security(explicit), FROM_DRIVER, List.of(blockManager)).value(TransportKeys.SHM_TRUSTED_FILE_ROOTS));
    SparkConf none = conf.clone().set("spark.shuffle.rdma.transport.shm.trustedFileRoots", "");
    assertEquals(List.of(),
        SparkTransportConfig.from(none, security(none), FROM_DRIVER, List.of(blockManager)).value(TransportKeys.SHM_TRUSTED_FILE_ROOTS));
  }

  @Test
  void badShuffleSettingsAreReportedByName() {
    SparkConf conf = new SparkConf(false).set(RdmaShuffleOption.LOCAL_READS.key(), "maybe");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SparkTransportConfig.source(conf).value(RdmaShuffleOption.LOCAL_READS));
    assertEquals(true, e.getMessage().contains(RdmaShuffleOption.LOCAL_READS.key()));
    IllegalArgumentException atStart = assertThrows(IllegalArgumentException.class, () -> SparkTransportConfig.validate(conf));
    assertEquals(e.getMessage(), atStart.getMessage());
  }

  @Test
  void peersPastTheBoundGoThroughSparksReaderUnlessThatWouldSendInTheClearWhatTheTransportEncrypts() {
    String key = RdmaShuffleOption.PEERS_BEYOND_BOUND.key();
    String encrypt = SparkTransportConfig.SPARK_PREFIX + "encryption";
    assertEquals(false, RdmaShuffleManager.peersBeyondBoundThroughSpark(new SparkConf(false)), "the default, queue");
    assertEquals(true, RdmaShuffleManager.peersBeyondBoundThroughSpark(new SparkConf(false).set(key, "spark")));
    assertEquals(false, RdmaShuffleManager.peersBeyondBoundThroughSpark(new SparkConf(false).set(key, "spark")
        .set(encrypt, "true")), "the transport encrypts and Spark's network does not: READ in turns");
    assertEquals(true, RdmaShuffleManager.peersBeyondBoundThroughSpark(new SparkConf(false).set(key, "spark")
        .set(encrypt, "true").set(SparkTransportConfig.NETWORK_CRYPTO, "true")), "both encrypt");
    assertEquals(true, RdmaShuffleManager.peersBeyondBoundThroughSpark(new SparkConf(false).set(key, "spark")
        .set(SparkTransportConfig.NETWORK_CRYPTO, "true")), "Spark's encryption turns on the transport's too");
    String message = assertThrows(IllegalArgumentException.class,
        () -> new RdmaShuffleManager(new SparkConf(false).set(key, "sometimes"), false)).getMessage();
    assertEquals(true, message.contains(key) && message.contains("sometimes"), message);
  }

  @Test
  void theBoundOnConnectionsToPeersIsAPositiveWholeNumber() {
    assertEquals(256, SparkTransportConfig.source(new SparkConf(false)).value(RdmaShuffleOption.MAX_PEER_CONNECTIONS));
    SparkConf one = new SparkConf(false).set(RdmaShuffleOption.MAX_PEER_CONNECTIONS.key(), "1");
    assertEquals(1, SparkTransportConfig.source(one).value(RdmaShuffleOption.MAX_PEER_CONNECTIONS));
    for (String bad : List.of("0", "-3", "many", "2.5")) {
      SparkConf conf = new SparkConf(false).set(RdmaShuffleOption.MAX_PEER_CONNECTIONS.key(), bad);
      String message = assertThrows(IllegalArgumentException.class, () -> new RdmaShuffleManager(conf, false)).getMessage();
      assertEquals(true, message.contains(RdmaShuffleOption.MAX_PEER_CONNECTIONS.key()) && message.contains(bad), message);
    }
  }

  @Test
  void readsAreVerifiedUnlessTurnedOff() {
    assertEquals(true, SparkTransportConfig.source(new SparkConf(false)).value(RdmaShuffleOption.VERIFY_READS));
    SparkConf off = new SparkConf(false).set(RdmaShuffleOption.VERIFY_READS.key(), "false");
    assertEquals(false, SparkTransportConfig.source(off).value(RdmaShuffleOption.VERIFY_READS));
    SparkConf bad = new SparkConf(false).set(RdmaShuffleOption.VERIFY_READS.key(), "sometimes");
    assertEquals(true, assertThrows(IllegalArgumentException.class, () -> SparkTransportConfig.validate(bad))
        .getMessage().contains(RdmaShuffleOption.VERIFY_READS.key()));
  }

  @Test
  void sizesAndDurationsReadWithSparksSyntax() {
    SparkConf conf = new SparkConf(false)
        .set("spark.shuffle.rdma.transport.maxMessageBytes", "16m")
        .set("spark.shuffle.rdma.transport.ioTimeoutMs", "2min")
        .set(RdmaShuffleOption.LOOKUP_TIMEOUT.key(), "45s")
        .set(RdmaShuffleOption.MAX_BYTES_IN_FLIGHT.key(), "8k");
    SparkTransportConfig.validate(conf);
    TransportConfig t = SparkTransportConfig.passThrough(conf);
    assertEquals(16 << 20, t.intValue(TransportOption.MAX_MESSAGE_BYTES));
    assertEquals(16L << 20, t.value(TransportKeys.MAX_MESSAGE_BYTES));
    assertEquals(120_000L, t.value(TransportKeys.IO_TIMEOUT_MS));
    assertEquals(45_000L, SparkTransportConfig.source(conf).value(RdmaShuffleOption.LOOKUP_TIMEOUT));
    assertEquals(8_192L, SparkTransportConfig.source(conf).value(RdmaShuffleOption.MAX_BYTES_IN_FLIGHT));
    assertEquals(Optional.empty(), t.get("spark.shuffle.rdma.transport.maxMessageBytes"));
  }

  @Test
  void aTransportValueTheTransportWouldRefuseIsRefusedAtStartUpNamingTheSparkKey() {
    SparkConf conf = new SparkConf(false).set("spark.shuffle.rdma.transport.maxMessageBytes", "16q");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SparkTransportConfig.validate(conf));
    assertEquals("spark.shuffle.rdma.transport.maxMessageBytes: invalid value '16q' for"
        + " sluice.transport.maxMessageBytes: unknown size suffix 'q'; expected a whole number of bytes with an"
        + " optional suffix b, k, kb, m, mb, g, gb, t, tb, p, pb", e.getMessage());
    IllegalArgumentException manager =
        assertThrows(IllegalArgumentException.class, () -> new RdmaShuffleManager(conf, false));
    assertEquals(e.getMessage(), manager.getMessage());
    SparkConf tooLarge = new SparkConf(false).set("spark.shuffle.rdma.transport.maxMessageBytes", "2g");
    assertEquals(true, assertThrows(IllegalArgumentException.class, () -> SparkTransportConfig.validate(tooLarge))
        .getMessage().startsWith("spark.shuffle.rdma.transport.maxMessageBytes: invalid value '2g'"));
    SparkConf provider = new SparkConf(false).set("spark.shuffle.rdma.transport.provider", "carrier-pigeon");
    assertEquals(true, assertThrows(IllegalArgumentException.class, () -> new RdmaShuffleManager(provider, false))
        .getMessage().contains("carrier-pigeon"));
  }

  /**
   * Every map output is readable by every executor, so peers READ through one shared protection
   * domain on verbs unless the application asks for one domain per peer.
   */
  @Test
  void peersShareOneReadDomainOnVerbsUnlessSetOtherwise() throws Exception {
    assertEquals(VerbsKeys.READ_DOMAINS.key(), io.sluice.transport.Transports.VERBS_READ_DOMAINS);
    SparkConf conf = new SparkConf(false).set("spark.app.id", "app-1");
    assertEquals("shared", SparkTransportConfig.from(conf, security(conf), FROM_DRIVER, List.of())
        .value(VerbsKeys.READ_DOMAINS));
    SparkConf perPeer = conf.clone().set("spark.shuffle.rdma.transport.verbs.readDomains", "per-peer");
    assertEquals("per-peer", SparkTransportConfig.from(perPeer, security(perPeer), FROM_DRIVER, List.of())
        .value(VerbsKeys.READ_DOMAINS));
    SparkConf wrong = conf.clone().set("spark.shuffle.rdma.transport.verbs.readDomains", "none");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SparkTransportConfig.validate(wrong));
    assertTrue(e.getMessage().startsWith("spark.shuffle.rdma.transport.verbs.readDomains: "), e.getMessage());
  }

  /** Verbs keys are checked on every host, with or without RDMA: a typo never waits for an RDMA host to fail. */
  @Test
  void aVerbsValueIsRefusedAtStartUpOnEveryHostNamingTheSparkKey() {
    SparkConf conf = new SparkConf(false).set("spark.shuffle.rdma.transport.verbs.busyPoll", "maybe");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SparkTransportConfig.validate(conf));
    assertTrue(e.getMessage().startsWith("spark.shuffle.rdma.transport.verbs.busyPoll: "), e.getMessage());
    assertTrue(e.getMessage().contains("maybe"), e.getMessage());
  }

  @Test
  void anUnknownKeyIsNamedWithTheClosestKnownKey() {
    SparkConf conf = new SparkConf(false)
        .set("spark.shuffle.rdma.transport.verbs.busyPol", "10us")
        .set("spark.shuffle.rdma.transport.encryption", "true")
        .set("spark.shuffle.other", "x");
    assertEquals(List.of("unknown key spark.shuffle.rdma.transport.verbs.busyPol; did you mean"
        + " spark.shuffle.rdma.transport.verbs.busyPoll?"), SparkTransportConfig.unknownKeys(conf));
  }
}
