package io.sluice.transport.handshake;

import io.sluice.transport.AuthenticationFailedException;
import io.sluice.transport.ProtocolException;
import io.sluice.transport.SecretKeys;
import io.sluice.transport.crypto.KeySchedule;
import io.sluice.transport.crypto.NodeIdentity;
import io.sluice.transport.crypto.Curves;
import io.sluice.transport.crypto.X25519;
import io.sluice.transport.wire.Frames;
import java.nio.ByteBuffer;
import java.security.MessageDigest;

/**
 * Protocol 7: a SIGMA-style authenticated key exchange with a pre-shared key, shaped like TLS
 * 1.3's psk_dhe_ke with signatures (docs/protocol.md defines it byte by byte):
 *
 * <pre>
 *   client                                                   server
 *   HELLO     version, node, flags, nonce, X25519 key, Ed25519 key  -->
 *             <--  CHALLENGE  version, node, flags, nonce, X25519 key, Ed25519 key
 *   AUTH      finished, signature("sluice/7 client signature" | th) -->
 *             <--  AUTH_OK (protected)  signature("sluice/7 server signature" | th | finished)
 * </pre>
 *
 * th hashes HELLO and CHALLENGE as sent; dh = X25519 of the two ephemeral keys; the keys come
 * from psk ({@link SecretKeys}), dh and th ({@link KeySchedule}). The secret decides who may talk
 * at all, and nothing the server sends before the client proved it (with its finished value)
 * depends on it, so connecting gives no one a value to test guesses against. The signatures decide
 * which node is talking: a peer that holds the secret but not a node's private key cannot claim
 * that node's id. dh decides who can read: the record keys need an ephemeral private key, so
 * whoever records a connection and learns the secret later, or relays it holding the secret,
 * gets no key (forward secrecy). A client that talks to an impostor holding no secret sends it
 * its finished value, which the impostor can test guesses of the secret against offline: secrets
 * have at least 128 bits ({@link SecretKeys#MIN_SECRET_BYTES}) for that reason.
 *
 * <p>A {@code Handshake} holds the pre-shared key and the source of fresh values and is
 * immutable and thread safe; its {@link Client} and {@link Server} are the two halves of one
 * connection's handshake, each used by one thread at a time, and do no I/O.
 */
public final class Handshake {
  /** HELLO/CHALLENGE flag: this side asks for an encrypted connection. */
  public static final int FLAG_ENCRYPT = Frames.FLAG_ENCRYPT;
  public static final String CLIENT_SIGNATURE = "sluice/7 client signature";
  public static final String SERVER_SIGNATURE = "sluice/7 server signature";
  private final byte[] psk;
  private final Ephemerals ephemerals;

  /** @throws IllegalArgumentException naming {@code sluice.transport.secret} if the secret is empty or too short */
  public Handshake(String secret) {
    this(secret, Ephemerals.SECURE);
  }

  /** A handshake that draws its nonces and ephemeral keys from {@code ephemerals}. */
  Handshake(String secret, Ephemerals ephemerals) {
    this.psk = SecretKeys.psk(secret);
    this.ephemerals = ephemerals;
  }

  /**
   * Chooses the JVM's {@link Curves} and loads what a transport's identity, handshakes and record
   * protection use: the JCA's Ed25519 and X25519 where the curves are the JDK's, SHA-256,
   * HMAC-SHA256 and the strong random source; creates no key. The JDK's AES-GCM, which only a
   * transport that chose the JDK's engine uses, is {@link #loadEncryption}'s. On a cold JVM the
   * first lookup of these costs tens of milliseconds of class loading; a transport that is opening
   * runs this on a thread of its own ({@link io.sluice.transport.Transports#open}), so that cost
   * overlaps its other set-up instead of adding to it, and its first connection finds them loaded.
   * What fails here is left for the real use to report. Thread safe.
   */
  public static void loadAlgorithms() {
    try {
      if (Curves.chosen() == Curves.JDK) {
        java.security.KeyPairGenerator.getInstance("Ed25519");
        java.security.Signature.getInstance("Ed25519");
        java.security.KeyFactory.getInstance("Ed25519");
        java.security.KeyPairGenerator.getInstance("X25519");
        javax.crypto.KeyAgreement.getInstance("XDH");
        java.security.KeyFactory.getInstance("XDH");
      }
      MessageDigest.getInstance("SHA-256");
      javax.crypto.Mac.getInstance("HmacSHA256");
      new java.security.SecureRandom().nextBytes(new byte[8]);
    } catch (java.security.GeneralSecurityException | IllegalStateException e) {
      // The identity or the handshake that needs the missing algorithm fails with its own message.
    }
  }

  /**
   * Loads the JDK's AES-GCM, as {@link #loadAlgorithms} loads the rest: for a transport whose
   * engine is the JDK's, which every connection needs (aead records, and mac mode's READ_RESPONSE
   * GMAC). One with OpenSSL's engine never uses it. Thread safe.
   */
  public static void loadEncryption() {
    try {
      javax.crypto.Cipher.getInstance("AES/GCM/NoPadding");
    } catch (java.security.GeneralSecurityException e) {
      // The first encrypted connection fails with its own message.
    }
  }

  /** The client half, as {@code self}. */
  public Client client(NodeIdentity self, int flags) {
    return new Client(self, self.nodeId(), self.publicKey(), flags);
  }

  /**
   * The client half claiming node {@code node} with identity key {@code identityKey}, signing
   * with {@code signer}'s private key: an honest client when those are the signer's own.
   */
  public Client client(NodeIdentity signer, long node, byte[] identityKey, int flags) {
    return new Client(signer, node, identityKey, flags);
  }

  /**
   * The server half, answering {@code hello} as {@code self}: draws this side's nonce and
   * ephemeral key and computes every key. Costs two X25519 operations.
   *
   * @throws AuthenticationFailedException if the client's node id is not the one its key derives,
   *     or its ephemeral key is a point of small order
   */
  public Server server(NodeIdentity self, int flags, Frames.Hello hello) throws AuthenticationFailedException {
    return server(self, self.nodeId(), self.publicKey(), flags, hello);
  }

  /** The server half claiming {@code node} and {@code identityKey}, signing with {@code signer}'s key. */
  public Server server(NodeIdentity signer, long node, byte[] identityKey, int flags, Frames.Hello hello)
      throws AuthenticationFailedException {
    NodeIdentity.checkClaim("client", hello.node(), hello.identityKey());
    return new Server(signer, node, identityKey, flags, hello);
  }

  /** Constant-time comparison. */
  static boolean matches(byte[] expected, byte[] actual) {
    return MessageDigest.isEqual(expected, actual);
  }

  private static byte[] array(ByteBuffer b) {
    byte[] a = new byte[b.remaining()];
    b.duplicate().get(a);
    return a;
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] c = new byte[a.length + b.length];
    System.arraycopy(a, 0, c, 0, a.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  /** The connecting side: {@link #hello}, then {@link #auth} for the CHALLENGE, then {@link #checkAuthOk}. */
  public final class Client {
    private final NodeIdentity signer;
    private final int flags;
    private final X25519.KeyPair ephemeral;
    private final byte[] hello;
    private Frames.Challenge challenge;
    private KeySchedule keys;
    private byte[] finished;

    private Client(NodeIdentity signer, long node, byte[] identityKey, int flags) {
      this.signer = signer;
      this.flags = flags;
      this.ephemeral = ephemerals.keyPair();
      this.hello = array(new Frames.Hello(Frames.VERSION, node, flags, ephemerals.nonce(), ephemeral.publicKey(),
          identityKey).encode());
    }

    /** The HELLO payload. */
    public ByteBuffer hello() {
      return ByteBuffer.wrap(hello).asReadOnlyBuffer();
    }

    /**
     * Takes the server's CHALLENGE: checks its version and that the server's node id derives from
     * its key, computes dh and the keys.
     *
     * @return the AUTH payload
     * @throws ProtocolException if the CHALLENGE is malformed
     * @throws AuthenticationFailedException for another protocol version, a node id that is not
     *     the key's, or an ephemeral key of small order
     */
    public ByteBuffer auth(ByteBuffer challengePayload) throws ProtocolException, AuthenticationFailedException {
      if (challengePayload.remaining() >= 2 && (challengePayload.getShort(challengePayload.position()) & 0xffff)
          != Frames.VERSION) {
        throw new AuthenticationFailedException("server speaks protocol version "
            + (challengePayload.getShort(challengePayload.position()) & 0xffff) + "; this side speaks "
            + Frames.VERSION);
      }
      byte[] bytes = array(challengePayload);
      challenge = Frames.Challenge.decode(ByteBuffer.wrap(bytes));
      NodeIdentity.checkClaim("server", challenge.node(), challenge.identityKey());
      byte[] dh = X25519.agree(ephemeral.privateKey(), challenge.ephemeralKey());
      boolean encrypted = ((flags | challenge.flags()) & FLAG_ENCRYPT) != 0;
      keys = KeySchedule.derive(psk, dh, KeySchedule.transcriptHash(hello, bytes), encrypted);
      finished = keys.clientFinished();
      byte[] signature = signer.sign(CLIENT_SIGNATURE, keys.transcriptHash());
      return new Frames.Auth(finished, signature).encode();
    }

    /** The server's node id, as its CHALLENGE claimed it (proven once {@link #checkAuthOk} passed). */
    public long serverNode() {
      return challenge.node();
    }

    /** The server's identity key, as its CHALLENGE sent it (proven once {@link #checkAuthOk} passed); a copy. */
    public byte[] serverIdentityKey() {
      return challenge.identityKey().clone();
    }

    public KeySchedule keys() {
      return keys;
    }

    /**
     * Checks the server's signature in AUTH_OK, whose record tag has already proven that the
     * server holds the same keys.
     *
     * @throws AuthenticationFailedException unless it is the signature of the key the server's node id derives from
     */
    public void checkAuthOk(Frames.AuthOk ok) throws AuthenticationFailedException {
      if (!NodeIdentity.verifies(challenge.identityKey(), SERVER_SIGNATURE, concat(keys.transcriptHash(), finished),
          ok.signature())) {
        throw new AuthenticationFailedException(String.format(
            "server's signature does not verify with the public key of node %016x", challenge.node()));
      }
    }
  }

  /**
   * The accepting side: made from HELLO, it gives the {@link #challenge}; {@link #checkFinished}
   * takes AUTH (cheap), {@link #authOk} checks the client's signature and makes the AUTH_OK
   * payload (public-key work).
   */
  public final class Server {
    private final NodeIdentity signer;
    private final Frames.Hello hello;
    private final byte[] challenge;
    private final KeySchedule keys;

    private Server(NodeIdentity signer, long node, byte[] identityKey, int flags, Frames.Hello hello)
        throws AuthenticationFailedException {
      this.signer = signer;
      this.hello = hello;
      X25519.KeyPair ephemeral = ephemerals.keyPair();
      this.challenge = array(new Frames.Challenge(Frames.VERSION, node, flags, ephemerals.nonce(),
          ephemeral.publicKey(), identityKey).encode());
      byte[] dh = X25519.agree(ephemeral.privateKey(), hello.ephemeralKey());
      boolean encrypted = ((flags | hello.flags()) & FLAG_ENCRYPT) != 0;
      this.keys = KeySchedule.derive(psk, dh, KeySchedule.transcriptHash(array(hello.encode()), challenge),
          encrypted);
    }

    /** The CHALLENGE payload. */
    public ByteBuffer challenge() {
      return ByteBuffer.wrap(challenge).asReadOnlyBuffer();
    }

    /** The client's node id, as its HELLO claimed it (proven once {@link #authOk} returned). */
    public long clientNode() {
      return hello.node();
    }

    /** The client's identity key, as its HELLO sent it (proven once {@link #authOk} returned); a copy. */
    public byte[] clientIdentityKey() {
      return hello.identityKey().clone();
    }

    public KeySchedule keys() {
      return keys;
    }

    /**
     * Checks the client's finished value in constant time: the client holds the secret and the
     * ephemeral private key behind its HELLO.
     *
     * @throws AuthenticationFailedException if it does not
     */
    public void checkFinished(Frames.Auth auth) throws AuthenticationFailedException {
      if (!matches(keys.clientFinished(), auth.finished())) {
        throw new AuthenticationFailedException("client's finished value does not match: another secret, or a"
            + " party in the middle");
      }
    }

    /**
     * Checks the client's signature (it holds the private key of the node id it claimed) and
     * makes this side's. Call after {@link #checkFinished} passed.
     *
     * @return the AUTH_OK payload
     * @throws AuthenticationFailedException if the client's signature does not verify
     */
    public ByteBuffer authOk(Frames.Auth auth) throws AuthenticationFailedException {
      byte[] th = keys.transcriptHash();
      if (!NodeIdentity.verifies(hello.identityKey(), CLIENT_SIGNATURE, th, auth.signature())) {
        throw new AuthenticationFailedException(String.format(
            "client's signature does not verify with the public key of node %016x", hello.node()));
      }
      return new Frames.AuthOk(signer.sign(SERVER_SIGNATURE, concat(th, keys.clientFinished()))).encode();
    }
  }
}
