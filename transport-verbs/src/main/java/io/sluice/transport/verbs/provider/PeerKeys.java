package io.sluice.transport.verbs.provider;

import io.sluice.transport.ProtocolException;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.UnknownKeyException;
import io.sluice.transport.carrier.CarrierConnection;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What one connection knows about the peer's keys: for each key it read, the registration the
 * owner reported over the authenticated carrier connection (address, live length, rkey), or the
 * owner's refusal. The first READ of a key asks (one round trip per key and connection); a
 * READ the device refused asks again, and so does every READ after its queue pair was opened
 * again ({@link #forgetAnswers}). Refusals ({@link RegionRevokedException}, {@link
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

  /**
   * Forgets every answer but the owner's refusals, so that each key is asked about again before
   * its next READ. Called when a READ queue pair is opened again: the one before it may have died
   * of a READ of a key revoked since it was asked about, and which key that was is known only
   * once the dead queue pair's READs have all been handed back. Posted on the new queue pair with
   * the old answer, that key would kill it too, and with it the READs already retried once on it.
   * Answers still on their way are forgotten as well: they may predate the revocation.
   */
  void forgetAnswers() {
    known.values().removeIf(answer -> !answer.isCompletedExceptionally());
  }

  static Throwable unwrap(Throwable e) {
    while (e instanceof CompletionException && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }
}
