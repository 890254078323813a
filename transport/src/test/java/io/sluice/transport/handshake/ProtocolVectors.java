package io.sluice.transport.handshake;

import io.sluice.transport.SecretKeys;
import io.sluice.transport.crypto.AesGcmEngine;
import io.sluice.transport.crypto.KeySchedule;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.Frames;
import io.sluice.transport.wire.RecordLayer;
import io.sluice.transport.wire.SequenceNumbers;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The test vectors of protocol 7 (docs/protocol-vectors.json): from fixed inputs (secret, nonces,
 * X25519 private keys, Ed25519 seeds, flags) it runs both halves of the real handshake and the
 * record layer, into the first step of the key schedule, and writes down every value, hex. Regenerate the file with
 * {@code mvn -pl transport test -Dtest=ProtocolVectors -Dsluice.writeVectors=true}; {@link
 * HandshakeVectorsTest} checks the implementation against the file as it is.
 */
class ProtocolVectors {
  static final HexFormat HEX = HexFormat.of();
  static final String FILE = "docs/protocol-vectors.json";
  /** Names of the values that are inputs; every other value is computed from them. */
  static final String[] INPUTS = {"secret", "client_nonce", "server_nonce", "client_ephemeral_private",
      "server_ephemeral_private", "client_identity_seed", "server_identity_seed", "mac.client_flags",
      "mac.server_flags", "aead.client_flags", "aead.server_flags", "read_request", "read_response"};
  static final String ABOUT = "Sluice protocol 7 test vectors (docs/protocol.md). Every other value is lowercase"
      + " hex bytes. Inputs: " + String.join(", ", INPUTS) + "; secret is the UTF-8 of the secret text,"
      + " read_request the payload of the client's first protected frame (READ_REQUEST, correlation id 1),"
      + " read_response the payload of the server's answer (READ_RESPONSE, correlation id 1). 'mac.' values"
      + " are for an unencrypted connection, 'aead.' for an encrypted one. *_frame values are whole frames as"
      + " they travel: header | tag | payload (aead: header | tag | ciphertext). c2s_key, s2c_key and"
      + " s2c_body_key are epoch 0's; c2s_secret_1 and c2s_key_1 epoch 1's, and read_request_frame_1 is the"
      + " READ_REQUEST of read_request with correlation id 2 sealed at c2s sequence number 2^20, the first of"
      + " epoch 1.";

  /** The inputs the file was generated from: RFC 7748's and RFC 8032's example keys, counting nonces. */
  static Map<String, String> defaultInputs() {
    Map<String, String> in = new LinkedHashMap<>();
    in.put("secret", HEX.formatHex("sluice protocol 7 test vector secret".getBytes(StandardCharsets.UTF_8)));
    in.put("client_nonce", counting(0x00, 32));
    in.put("server_nonce", counting(0x20, 32));
    in.put("client_ephemeral_private", "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
    in.put("server_ephemeral_private", "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
    in.put("client_identity_seed", "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
    in.put("server_identity_seed", "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb");
    in.put("mac.client_flags", "00");
    in.put("mac.server_flags", "00");
    in.put("aead.client_flags", "01");
    in.put("aead.server_flags", "00");
    ByteBuffer read = ByteBuffer.allocate(Frames.ReadRequestFrame.LENGTH);
    new Frames.ReadRequestFrame(0x0102030405060708L, 0, 16).encode(read);
    in.put("read_request", HEX.formatHex(read.array()));
    in.put("read_response", counting(0x00, 16));
    return in;
  }

  private static String counting(int from, int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (from + i);
    }
    return HEX.formatHex(b);
  }

  /** Every value, inputs first, computed by the implementation from {@code inputs}. */
  static Map<String, String> compute(Map<String, String> inputs) throws Exception {
    return compute(inputs, AesGcmEngine.JDK);
  }

  /** As above, sealing the aead frames with {@code engine}. */
  static Map<String, String> compute(Map<String, String> inputs, AesGcmEngine engine) throws Exception {
    Map<String, String> out = new LinkedHashMap<>();
    out.put("about", ABOUT);
    for (String k : INPUTS) {
      out.put(k, inputs.get(k));
    }
    String secret = new String(bytes(inputs, "secret"), StandardCharsets.UTF_8);
    NodeIdentity client = NodeIdentity.fromSeed(bytes(inputs, "client_identity_seed"));
    NodeIdentity server = NodeIdentity.fromSeed(bytes(inputs, "server_identity_seed"));
    FixedEphemerals clientRandom = new FixedEphemerals(bytes(inputs, "client_nonce"),
        bytes(inputs, "client_ephemeral_private"));
    FixedEphemerals serverRandom = new FixedEphemerals(bytes(inputs, "server_nonce"),
        bytes(inputs, "server_ephemeral_private"));
    out.put("client_ephemeral_public", HEX.formatHex(clientRandom.keyPair().publicKey()));
    out.put("server_ephemeral_public", HEX.formatHex(serverRandom.keyPair().publicKey()));
    out.put("client_identity_public", HEX.formatHex(client.publicKey()));
    out.put("server_identity_public", HEX.formatHex(server.publicKey()));
    out.put("client_node_id", String.format("%016x", client.nodeId()));
    out.put("server_node_id", String.format("%016x", server.nodeId()));
    out.put("psk", HEX.formatHex(SecretKeys.psk(secret)));
    for (String mode : new String[] {"mac", "aead"}) {
      Handshake.Client c = new Handshake(secret, clientRandom).client(client,
          bytes(inputs, mode + ".client_flags")[0]);
      Handshake.Server s = new Handshake(secret, serverRandom).server(server,
          bytes(inputs, mode + ".server_flags")[0], Frames.Hello.decode(c.hello()));
      ByteBuffer auth = c.auth(s.challenge());
      Frames.Auth a = Frames.Auth.decode(auth.duplicate());
      s.checkFinished(a);
      ByteBuffer authOk = s.authOk(a);
      c.checkAuthOk(Frames.AuthOk.decode(authOk.duplicate()));
      KeySchedule k = s.keys();
      if (mode.equals("mac")) {
        out.put("dh", HEX.formatHex(k.dh()));
      }
      String p = mode + ".";
      out.put(p + "hello", hex(c.hello()));
      out.put(p + "challenge", hex(s.challenge()));
      out.put(p + "th", HEX.formatHex(k.transcriptHash()));
      out.put(p + "hs", HEX.formatHex(k.handshakeSecret()));
      out.put(p + "client_finished_key", HEX.formatHex(k.clientFinishedKey()));
      out.put(p + "c2s_secret", HEX.formatHex(k.clientToServerSecret()));
      out.put(p + "s2c_secret", HEX.formatHex(k.serverToClientSecret()));
      boolean encrypted = k.encrypted();
      out.put(p + "c2s_key", HEX.formatHex(KeySchedule.recordKey(k.clientToServerSecret(), encrypted)));
      out.put(p + "s2c_key", HEX.formatHex(KeySchedule.recordKey(k.serverToClientSecret(), encrypted)));
      if (!encrypted) {
        out.put(p + "s2c_body_key", HEX.formatHex(KeySchedule.bodyKey(k.serverToClientSecret())));
      }
      out.put(p + "client_finished", HEX.formatHex(k.clientFinished()));
      out.put(p + "auth", hex(auth));
      out.put(p + "auth_ok", hex(authOk));
      RecordLayer.Sealer serverSealer = RecordLayer.serverSealer(k.sessionKeys(), engine);
      RecordLayer.Sealer clientSealer = RecordLayer.clientSealer(c.keys().sessionKeys(), engine);
      out.put(p + "auth_ok_frame", hex(serverSealer.seal(FrameType.AUTH_OK, 0, authOk)));
      out.put(p + "read_request_frame", hex(clientSealer.seal(FrameType.READ_REQUEST, 1,
          ByteBuffer.wrap(bytes(inputs, "read_request")))));
      out.put(p + "read_response_frame", hex(serverSealer.seal(FrameType.READ_RESPONSE, 1,
          ByteBuffer.wrap(bytes(inputs, "read_response")))));
      byte[] c2sSecret1 = KeySchedule.nextSecret(k.clientToServerSecret());
      out.put(p + "c2s_secret_1", HEX.formatHex(c2sSecret1));
      out.put(p + "c2s_key_1", HEX.formatHex(KeySchedule.recordKey(c2sSecret1, encrypted)));
      // The sealer steps to epoch 1 itself: the frame tests its schedule, not the values above.
      SequenceNumbers.skipTo(clientSealer, RecordLayer.EPOCH_LENGTH);
      out.put(p + "read_request_frame_1", hex(clientSealer.seal(FrameType.READ_REQUEST, 2,
          ByteBuffer.wrap(bytes(inputs, "read_request")))));
    }
    return out;
  }

  static byte[] bytes(Map<String, String> values, String key) {
    String v = values.get(key);
    if (v == null) {
      throw new AssertionError("no value '" + key + "' in the vectors");
    }
    return HEX.parseHex(v);
  }

  private static String hex(ByteBuffer... parts) {
    StringBuilder b = new StringBuilder();
    for (ByteBuffer p : parts) {
      byte[] a = new byte[p.remaining()];
      p.duplicate().get(a);
      b.append(HEX.formatHex(a));
    }
    return b.toString();
  }

  /** The file, found from the module's folder or the repository's. */
  static Path file() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve(FILE))) {
        return dir.resolve(FILE);
      }
      if (Files.isDirectory(dir.resolve("docs")) && Files.isRegularFile(dir.resolve("pom.xml"))
          && Files.isDirectory(dir.resolve("transport"))) {
        return dir.resolve(FILE);
      }
    }
    throw new AssertionError("cannot find " + FILE + " above " + Path.of("").toAbsolutePath());
  }

  /** Reads the flat JSON object of strings the file holds. */
  static Map<String, String> read(Path file) throws IOException {
    String text = Files.readString(file);
    Map<String, String> values = new LinkedHashMap<>();
    Matcher m = Pattern.compile("\"([^\"]+)\"\\s*:\\s*\"([^\"]*)\"").matcher(text);
    while (m.find()) {
      values.put(m.group(1), m.group(2));
    }
    return values;
  }

  static String json(Map<String, String> values) {
    StringBuilder b = new StringBuilder("{\n");
    int i = 0;
    for (Map.Entry<String, String> e : values.entrySet()) {
      b.append("  \"").append(e.getKey()).append("\": \"").append(e.getValue()).append('"')
          .append(++i < values.size() ? ",\n" : "\n");
    }
    return b.append("}\n").toString();
  }

  @Test
  @EnabledIfSystemProperty(named = "sluice.writeVectors", matches = "true")
  void write() throws Exception {
    Files.writeString(file(), json(compute(defaultInputs())));
  }
}
