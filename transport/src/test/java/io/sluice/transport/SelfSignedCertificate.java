package io.sluice.transport;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.concurrent.TimeUnit;

/**
 * A fresh self-signed certificate for {@code localhost} (and 127.0.0.1), made for one test by the
 * JDK's {@code keytool} and written as the PEM files Flight's {@code useTls} takes: the certificate,
 * and its private key in PKCS#8. Nothing is kept in the repository, so nothing expires there.
 */
public record SelfSignedCertificate(Path certificate, Path privateKey) {
  private static final String PASSWORD = "test-only";

  /** The JDK's keytool, where this JVM has one. */
  public static Path keytool() {
    return Path.of(System.getProperty("java.home"), "bin", "keytool");
  }

  public static SelfSignedCertificate create(Path dir) throws IOException, InterruptedException, GeneralSecurityException {
    Path store = dir.resolve("server.p12");
    Process p = new ProcessBuilder(keytool().toString(), "-genkeypair", "-alias", "flight", "-keyalg", "RSA",
        "-keysize", "2048", "-validity", "2", "-dname", "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1",
        "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD)
        .redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("keytool did not finish within 60 s");
    }
    if (p.exitValue() != 0) {
      throw new IOException("keytool failed (" + p.exitValue() + "): " + output);
    }
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      ks.load(in, PASSWORD.toCharArray());
    }
    Certificate cert = ks.getCertificate("flight");
    PrivateKey key = (PrivateKey) ks.getKey("flight", PASSWORD.toCharArray());
    Path certificate = dir.resolve("server.crt");
    Path privateKey = dir.resolve("server.key");
    Files.writeString(certificate, pem("CERTIFICATE", cert.getEncoded()));
    Files.writeString(privateKey, pem("PRIVATE KEY", key.getEncoded())); // PKCS#8
    return new SelfSignedCertificate(certificate, privateKey);
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n"
        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }
}
