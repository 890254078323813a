package org.apache.spark.shuffle.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportOption;
import org.apache.spark.SecurityManager;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;
import scala.Option;

/** How SparkConf becomes the transport's configuration and secret. */
class SparkTransportConfigTest {
  private static SecurityManager security(SparkConf conf) {
    return new SecurityManager(conf, Option.empty(), org.apache.spark.SecurityManager$.MODULE$.$lessinit$greater$default$3());
  }

  @Test
  void sparkAuthenticationSecretIsTheTransportSecret() {
    SparkConf conf = new SparkConf(false).set("spark.app.id", "app-1")
        .set("spark.authenticate", "true").set("spark.authenticate.secret", "spark-secret");
    assertEquals("spark-secret", SparkTransportConfig.secret(conf, security(conf)));
  }

  @Test
  void withoutAuthenticationTheSecretComesFromTheAppId() {
    SparkConf a = new SparkConf(false).set("spark.app.id", "app-1");
    SparkConf b = new SparkConf(false).set("spark.app.id", "app-2");
    String secretA = SparkTransportConfig.secret(a, security(a));
    assertEquals(secretA, SparkTransportConfig.secret(a.clone(), security(a)));
    assertNotEquals(secretA, SparkTransportConfig.secret(b, security(b)));
    assertNotEquals("app-1", secretA);
    SparkConf noId = new SparkConf(false);
    assertThrows(IllegalStateException.class, () -> SparkTransportConfig.secret(noId, security(noId)));
  }

  @Test
  void transportKeysPassThrough() {
    SparkConf conf = new SparkConf(false).set("spark.app.id", "app-1")
        .set("spark.shuffle.rdma.transport.provider", "tcp")
        .set("spark.shuffle.rdma.transport.ioTimeoutMs", "1234")
        .set("spark.shuffle.rdma.transport.advertiseHost", "10.1.2.3");
    TransportConfig t = SparkTransportConfig.from(conf, security(conf));
    assertEquals("tcp", t.string(TransportOption.PROVIDER));
    assertEquals(1234, t.longValue(TransportOption.IO_TIMEOUT_MS));
    assertEquals("10.1.2.3", t.string(TransportOption.ADVERTISE_HOST));
    assertEquals(TransportOption.MAX_MESSAGE_BYTES.defaultValue(), t.string(TransportOption.MAX_MESSAGE_BYTES));
  }

  @Test
  void sparkWireEncryptionTurnsOnTransportEncryptionAndCannotBeOverridden() {
    SparkConf conf = new SparkConf(false).set("spark.app.id", "app-1")
        .set("spark.network.crypto.enabled", "true")
        .set("spark.shuffle.rdma.transport.encryption", "false");
    TransportConfig t = SparkTransportConfig.from(conf, security(conf));
    assertEquals(true, t.booleanValue(TransportOption.ENCRYPTION));
    assertEquals(false, t.booleanValue(TransportOption.DATA_ENCRYPTED_AT_REST));

    SparkConf both = conf.clone().set("spark.io.encryption.enabled", "true");
    assertEquals(true, SparkTransportConfig.from(both, security(both)).booleanValue(TransportOption.DATA_ENCRYPTED_AT_REST));

    SparkConf plain = new SparkConf(false).set("spark.app.id", "app-1");
    assertEquals(false, SparkTransportConfig.from(plain, security(plain)).booleanValue(TransportOption.ENCRYPTION));
    SparkConf asked = plain.clone().set("spark.shuffle.rdma.transport.encryption", "true");
    assertEquals(true, SparkTransportConfig.from(asked, security(asked)).booleanValue(TransportOption.ENCRYPTION));
  }

  @Test
  void badShuffleSettingsAreReportedByName() {
    SparkConf conf = new SparkConf(false).set(RdmaShuffleOption.LOCAL_READS.key(), "maybe");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> RdmaShuffleOption.LOCAL_READS.bool(conf));
    assertEquals(true, e.getMessage().contains(RdmaShuffleOption.LOCAL_READS.key()));
  }
}
