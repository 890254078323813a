package io.sluice.transport.wire;

/**
 * Moves a {@link RecordLayer.Sealer}'s or {@link RecordLayer.Opener}'s next sequence number
 * forward, for tests in other packages that need frames of a later epoch without sealing a million
 * frames first. Both ends of a test connection must be moved alike, as a real connection moves.
 */
public final class SequenceNumbers {
  private SequenceNumbers() {}

  /** The next frame or record {@code sealer} seals takes sequence number {@code seq}. */
  public static void skipTo(RecordLayer.Sealer sealer, long seq) {
    sealer.skipTo(seq);
  }

  /** The next frame or record {@code opener} opens takes sequence number {@code seq}. */
  public static void skipTo(RecordLayer.Opener opener, long seq) {
    opener.skipTo(seq);
  }
}
