package io.sluice.flight;

import io.sluice.transport.SecretKeys;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.config.TransportKeys;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.apache.arrow.flight.CallHeaders;
import org.apache.arrow.flight.CallInfo;
import org.apache.arrow.flight.CallOption;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClientMiddleware;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.auth2.Auth2Constants;
import org.apache.arrow.flight.auth2.BearerCredentialWriter;
import org.apache.arrow.flight.grpc.CredentialCallOption;

/**
 * The bearer tokens that authenticate Flight calls to a {@link SluiceFlightServer} configured with a
 * transport secret. A token names the server it is for (its <em>audience</em>: the location the
 * client connects to, {@code grpc://host:port}, or a name the servers of a run were configured to
 * accept, {@link FlightOption#TOKEN_AUDIENCES}) and when it expires; a server refuses a token for
 * another audience, an expired one and one whose MAC does not check. Every Flight client presents
 * it the standard way, as the header {@code Authorization: Bearer <token>}:
 *
 * <pre>{@code
 * String token = CallToken.mint(secret, "grpc://host:8815", Duration.ofHours(12));  // for one server
 * flightClient.getStream(ticket, CallToken.callOption(token));   // flight-core, per call
 * FlightClient.builder(allocator, location).intercept(CallToken.clientMiddleware(token)).build();  // every call
 * }</pre>
 *
 * pyarrow: {@code flight.FlightCallOptions(headers=[(b"authorization", b"Bearer " + token)])}.
 * {@link SluiceFlightClient} mints its own, one per server, short-lived, and renews them.
 *
 * <p>Format (version 2): key = HKDF-Expand(psk, "sluice/flight token key", 32), where psk is the
 * transport's pre-shared key of the secret ({@link SecretKeys}); payload = version byte 2 | expiry (epoch seconds, 8 bytes, big-endian) | audience
 * (UTF-8, the rest); token = base64url(payload | HMAC-SHA256(key, payload)), without padding. It
 * does not reveal the secret and cannot stand in for it on the transport; whoever holds it can make
 * Flight calls to its audience until it expires, so on networks others can watch, use TLS locations
 * ({@code grpc+tls}). The same key
 * also signs the server's answer to the data-plane offer ({@link Key#sign}); those inputs start
 * with a label, never with the byte 2, so neither can pass for the other. Stateless and thread safe.
 */
public final class CallToken {
  /** The format version, the payload's first byte. */
  public static final byte VERSION = 2;
  /** Longest audience a token may name, in UTF-8 bytes. */
  public static final int MAX_AUDIENCE_BYTES = 1024;

  private static final String KEY_LABEL = "sluice/flight token key";
  private static final int MAC_BYTES = 32;
  private static final int HEADER_BYTES = 1 + Long.BYTES;

  private CallToken() {}

  /**
   * A token for {@code audience} (a server's location, or a name servers accept), valid for {@code
   * validity} from now, under {@code secret}: what to give a plain Flight
   * client.
   *
   * @throws IllegalArgumentException if the secret is empty or the audience empty or too long
   */
  public static String mint(String secret, String audience, Duration validity) {
    return key(secret).mint(audience, Instant.now().plus(validity));
  }

  /**
   * The token key of {@code secret}.
   *
   * @throws IllegalArgumentException naming {@code sluice.transport.secret} if the secret is empty or
   *     shorter than {@link SecretKeys#MIN_SECRET_BYTES} bytes
   */
  public static Key key(String secret) {
    return new Key(tokenKey(secret));
  }

  /** The key of the secret {@code config} holds; empty when it holds no secret. */
  public static Optional<Key> of(TransportConfig config) {
    String secret = config.value(TransportKeys.SECRET);
    return secret.isEmpty() ? Optional.empty() : Optional.of(key(secret));
  }

  /** The audience a client connecting to {@code location} names: {@code scheme://host:port}. */
  public static String audienceOf(Location location) {
    return audience(location.getUri().toString());
  }

  /**
   * {@code audience} in the one form tokens carry: a location ({@code grpc://Host:8815/}) as {@code
   * grpc://host:8815}, any other name as it is.
   */
  public static String audience(String audience) {
    if (audience == null || audience.isBlank()) {
      throw new IllegalArgumentException("a Flight call token needs an audience (the server's location)");
    }
    String a = audience.trim();
    try {
      URI u = URI.create(a);
      if (u.getScheme() != null && u.getScheme().toLowerCase(Locale.ROOT).startsWith("grpc") && u.getHost() != null
          && u.getPort() >= 0) {
        return u.getScheme().toLowerCase(Locale.ROOT) + "://" + u.getHost().toLowerCase(Locale.ROOT) + ":" + u.getPort();
      }
    } catch (IllegalArgumentException e) {
      // not a location: a name
    }
    return a;
  }

  /** A call option presenting {@code token}, for one call of a plain {@code FlightClient}. */
  public static CallOption callOption(String token) {
    return new CredentialCallOption(new BearerCredentialWriter(token));
  }

  /** Client middleware presenting {@code token} on every call ({@code FlightClient.Builder.intercept}). */
  public static FlightClientMiddleware.Factory clientMiddleware(String token) {
    return clientMiddleware(() -> token);
  }

  /** Client middleware presenting the token {@code tokens} gives at each call (a renewing source). */
  public static FlightClientMiddleware.Factory clientMiddleware(Supplier<String> tokens) {
    return (CallInfo info) -> new FlightClientMiddleware() {
      @Override
      public void onBeforeSendingHeaders(CallHeaders outgoing) {
        outgoing.insert(Auth2Constants.AUTHORIZATION_HEADER, Auth2Constants.BEARER_PREFIX + tokens.get());
      }

      @Override
      public void onHeadersReceived(CallHeaders incoming) {}

      @Override
      public void onCallCompleted(CallStatus status) {}
    };
  }

  /** The HMAC key of the secret; the one place the secret becomes a token key. */
  private static byte[] tokenKey(String secret) {
    return SecretKeys.derive(secret, KEY_LABEL, 32);
  }

  /** What a token that checked out says. */
  public record Claims(String audience, Instant expires) {}

  /** Why a token was refused: its message says which check failed. */
  public static final class InvalidTokenException extends Exception {
    private static final long serialVersionUID = 1L;

    InvalidTokenException(String message) {
      super(message);
    }
  }

  /**
   * A secret's token key: mints tokens, checks them, and signs the server's data-plane answers.
   * Immutable and thread safe; holds the key, so keep it where the secret would be kept.
   */
  public static final class Key {
    private final SecretKeySpec key;

    private Key(byte[] key) {
      this.key = new SecretKeySpec(key, "HmacSHA256");
    }

    /**
     * A token for {@code audience} (normalized by {@link CallToken#audience}) that expires at
     * {@code expires} (to the second).
     */
    public String mint(String audience, Instant expires) {
      byte[] a = audience(audience).getBytes(StandardCharsets.UTF_8);
      if (a.length > MAX_AUDIENCE_BYTES) {
        throw new IllegalArgumentException("a token audience of " + a.length + " bytes, at most " + MAX_AUDIENCE_BYTES);
      }
      byte[] payload = ByteBuffer.allocate(HEADER_BYTES + a.length).put(VERSION).putLong(expires.getEpochSecond())
          .put(a).array();
      byte[] token = ByteBuffer.allocate(payload.length + MAC_BYTES).put(payload).put(mac(payload)).array();
      return Base64.getUrlEncoder().withoutPadding().encodeToString(token);
    }

    /**
     * Checks {@code token}: its MAC (in constant time), that it names one of {@code audiences}
     * (in {@link CallToken#audience}'s form), and that it has not expired by {@code clock}.
     *
     * @throws InvalidTokenException naming the check that failed
     */
    public Claims verify(String token, Set<String> audiences, Clock clock) throws InvalidTokenException {
      if (token == null || token.length() > 4 * (HEADER_BYTES + MAX_AUDIENCE_BYTES + MAC_BYTES) / 3 + 4) {
        throw new InvalidTokenException("the bearer token is not this server's");
      }
      byte[] bytes;
      try {
        bytes = Base64.getUrlDecoder().decode(token);
      } catch (IllegalArgumentException e) {
        throw new InvalidTokenException("the bearer token is not this server's");
      }
      if (bytes.length < HEADER_BYTES + MAC_BYTES) {
        throw new InvalidTokenException("the bearer token is not this server's");
      }
      int payloadLength = bytes.length - MAC_BYTES;
      ByteBuffer payload = ByteBuffer.wrap(bytes, 0, payloadLength);
      byte[] presented = java.util.Arrays.copyOfRange(bytes, payloadLength, bytes.length);
      if (!MessageDigest.isEqual(mac(java.util.Arrays.copyOf(bytes, payloadLength)), presented)) {
        throw new InvalidTokenException("the bearer token is not this server's (not made with its secret, or"
            + " altered)");
      }
      byte version = payload.get();
      if (version != VERSION) {
        throw new InvalidTokenException("a bearer token of version " + version + ", this server takes " + VERSION);
      }
      Instant expires = Instant.ofEpochSecond(payload.getLong());
      String audience = new String(bytes, HEADER_BYTES, payloadLength - HEADER_BYTES, StandardCharsets.UTF_8);
      if (!audiences.contains(audience)) {
        throw new InvalidTokenException("the bearer token is for " + audience + ", not for this server");
      }
      if (!clock.instant().isBefore(expires)) {
        throw new InvalidTokenException("the bearer token expired at " + expires + " (mint a new one)");
      }
      return new Claims(audience, expires);
    }

    /** HMAC-SHA256 of {@code label} (which must not start with the byte 2) followed by {@code parts}. */
    public byte[] sign(String label, byte[]... parts) {
      byte[] l = label.getBytes(StandardCharsets.UTF_8);
      if (l.length == 0 || l[0] == VERSION) {
        throw new IllegalArgumentException("a signing label must not look like a token");
      }
      Mac m = newMac();
      m.update(l);
      m.update((byte) 0);
      for (byte[] p : parts) {
        m.update(ByteBuffer.allocate(Integer.BYTES).putInt(p.length).array());
        m.update(p);
      }
      return m.doFinal();
    }

    /** Whether {@code signature} is {@link #sign}'s of the same input (constant time). */
    public boolean verifySignature(byte[] signature, String label, byte[]... parts) {
      return signature != null && MessageDigest.isEqual(sign(label, parts), signature);
    }

    private byte[] mac(byte[] payload) {
      return newMac().doFinal(payload);
    }

    private Mac newMac() {
      try {
        Mac m = Mac.getInstance("HmacSHA256");
        m.init(key);
        return m;
      } catch (GeneralSecurityException e) {
        throw new IllegalStateException("HmacSHA256 unavailable", e);
      }
    }

    @Override
    public String toString() {
      return "CallToken.Key[hidden]";
    }
  }
}
