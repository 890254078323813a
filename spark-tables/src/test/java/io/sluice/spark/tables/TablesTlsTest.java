package io.sluice.spark.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.transport.SelfSignedCertificate;
import io.sluice.transport.TransportConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/** With TLS configured, the catalog and every executor serve grpc+tls, and a table reads whole over it. */
class TablesTlsTest {

  @Test
  void theCatalogAndTheExecutorsServeOverTls() throws Exception {
    assumeTrue(Files.isExecutable(SelfSignedCertificate.keytool()), "no keytool in " + System.getProperty("java.home"));
    Path dir = Files.createTempDirectory("tables-tls");
    SelfSignedCertificate cert = SelfSignedCertificate.create(dir);
    SparkSession spark = TableClusters.start(TableClusters.conf("tables-tls-test")
        .set(TablesConf.TLS, "true")
        .set(TablesConf.TLS_CERT_CHAIN, cert.certificate().toString())
        .set(TablesConf.TLS_PRIVATE_KEY, cert.privateKey().toString()), 2);
    try {
      PublishedTable t = SluiceTables.publish(spark.range(0, 3_000, 1, 3).toDF(), "private",
          Map.of("batchRows", "1000"));
      assertTrue(t.uri().startsWith("grpc+tls://"), t.uri());
      assertTrue(t.endpoints().stream().allMatch(l -> l.startsWith("grpc+tls://")), t.endpoints().toString());
      String secret = SluiceTables.secret(spark);
      for (boolean dataPlane : new boolean[] {true, false}) {
        Map<String, String> keys = new HashMap<>(TableClusters.readerKeys(secret, dataPlane));
        keys.put("sluice.flight.tlsTrustedCertificates", cert.certificate().toString());
        TableClusters.Read r = TableClusters.read(t.uri(), "private", TransportConfig.of(keys), TableClusters::tsv);
        assertEquals(3_000, r.rows().size(), "data plane " + dataPlane + ": " + r.paths());
      }
      // A client that does not trust the certificate gets no answer.
      assertThrows(RuntimeException.class, () -> TableClusters.read(t.uri(), "private",
          TableClusters.readerConfig(secret, false), TableClusters::tsv));
      SluiceTables.unpublish(spark, "private");
    } finally {
      spark.stop();
    }
  }
}
