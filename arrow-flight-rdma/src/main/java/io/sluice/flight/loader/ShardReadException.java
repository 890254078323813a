package io.sluice.flight.loader;

/** Reading a shard failed; names the shard and carries the Flight or transport error as its cause. */
public final class ShardReadException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  ShardReadException(Shard shard, Throwable cause) {
    super("reading shard " + shard + " failed: " + cause, cause);
  }
}
