package io.sluice.transport.verbs.provider;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.spi.CarrierConnection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What one connection knows about the peer's keys: for each key it read, the registration the
 * owner reported over the authenticated carrier connection (address, live length, rkey), or the
 * owner's refusal. The first READ of a key asks (one round trip per key and connection); a
 * READ the device refused asks again. Refusals ({@link RegionRevokedException}, {@link
 * UnknownKeyException}) are kept, since keys are never reused; other failures are forgotten so
 * the next READ asks again. Bounded: past {@link #MAX_KEYS} entries the memory starts over.
 *
 * <p>Thread safe.
 */
final class PeerKeys {
  static final int MAX_KEYS = 65_536;

  private final CarrierConnection tcp;
  private final Map<Long, CompletableFuture<SetupMessages.KeyInfo>> known = new ConcurrentHashMap<>();

  PeerKeys(CarrierConnection tcp) {
    this.tcp = tcp;
  }

  /** The registration of {@code key}, asking the owner unless known. */
  CompletableFuture<SetupMessages.KeyInfo> lookup(long key) {
    CompletableFuture<SetupMessages.KeyInfo> f = known.get(key);
    return f != null ? f : recheck(key, Optional.empty());
  }

  /** What is known now, without asking. */
  Optional<CompletableFuture<SetupMessages.KeyInfo>> peek(long key) {
    return Optional.ofNullable(known.get(key));
  }

  /**
   * Asks the owner again, unless someone already replaced {@code stale} with a newer answer
   * (then that one is returned), so many READs failing on one key cost one round trip.
   */
  CompletableFuture<SetupMessages.KeyInfo> recheck(long key, Optional<CompletableFuture<SetupMessages.KeyInfo>> stale) {
    if (known.size() >= MAX_KEYS) {
      known.clear();
    }
    CompletableFuture<SetupMessages.KeyInfo> fresh = new CompletableFuture<>();
    CompletableFuture<SetupMessages.KeyInfo> winner = known.compute(key,
        (k, current) -> current == null || (stale.isPresent() && current == stale.get()) ? fresh : current);
    if (winner != fresh) {
      return winner;
    }
    CompletableFuture<java.nio.ByteBuffer> reply;
    try {
      reply = tcp.control(SetupMessages.SERVICE, SetupMessages.keyRequest(key));
    } catch (RuntimeException e) {
      reply = CompletableFuture.failedFuture(e);
    }
    reply.whenComplete((payload, error) -> {
      if (error == null) {
        try {
          fresh.complete(SetupMessages.keyInfo(payload));
          return;
        } catch (ProtocolException e) {
          error = e;
        }
      }
      Throwable cause = unwrap(error);
      if (!(cause instanceof RegionRevokedException) && !(cause instanceof UnknownKeyException)) {
        known.remove(key, fresh);
      }
      fresh.completeExceptionally(cause);
    });
    return fresh;
  }

  static Throwable unwrap(Throwable e) {
    while (e instanceof CompletionException && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }
}
