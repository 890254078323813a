package io.sluice.flight.loader;

/**
 * Where one rank of a {@link FlightLoader} stands: the epoch, and how many of the rank's shards of
 * that epoch were consumed. A loader resumed from a cursor starts with the shard at
 * {@code position} of that epoch's order and opens none before it. The text form
 * ({@link #toString}, {@link #parse}) is {@code epoch:position}, for a checkpoint file. Immutable.
 */
public record Cursor(int epoch, int position) {
  public static final Cursor START = new Cursor(0, 0);

  public Cursor {
    if (epoch < 0 || position < 0) {
      throw new IllegalArgumentException("a cursor's epoch and position are >= 0, got " + epoch + ":" + position);
    }
  }

  /** The cursor written as {@code epoch:position}. */
  public static Cursor parse(String text) {
    String[] parts = text.trim().split(":");
    if (parts.length != 2) {
      throw new IllegalArgumentException("a cursor is written epoch:position, got '" + text + "'");
    }
    try {
      return new Cursor(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("a cursor is written epoch:position with integers, got '" + text + "'", e);
    }
  }

  /** The cursor after one more shard of this epoch. */
  Cursor advance() {
    return new Cursor(epoch, position + 1);
  }

  /** The start of the next epoch. */
  Cursor nextEpoch() {
    return new Cursor(epoch + 1, 0);
  }

  @Override
  public String toString() {
    return epoch + ":" + position;
  }
}
