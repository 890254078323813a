package io.sluice.spark.shuffle.registry;

import io.sluice.spark.shuffle.protocol.AddressBookMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver's table of executors' shuffle transports: each executor registers its transport
 * address once, reducers look up the executors they read from and ask which of them are gone
 * (with the external shuffle service, map outputs outlive their executor). Without Spark
 * authentication it also hands out the application's transport secret, a random value the driver
 * made, to the executors that ask over Spark's RPC. Requests and replies are those of {@link
 * AddressBookMessage}; only addresses and that secret pass through here, never per-block data.
 *
 * <p>An executor announces its open before its first map output can leave it: a reducer that
 * looks it up meanwhile is answered when it registers or withdraws ({@link #answerAsync}), or with
 * "unknown" after the hold time (then it reads through Spark's shuffle), so that an address on its
 * way is not missed for lack of a few milliseconds. An executor the driver no longer counts as
 * active when it is looked up, or when the announcements reach their bound, is taken off.
 *
 * <p>Thread safe.
 */
public final class AddressBook {
  private static final Logger LOG = LoggerFactory.getLogger(AddressBook.class);

  /** Executors announcing an open at once, at most; one more announcement is refused. */
  public static final int MAX_OPENING = 65_536;

  private final Predicate<String> isActive;
  private final Optional<String> secret;
  private final long holdMs;
  private final Map<String, AddressBookMessage.Entry> entries = new ConcurrentHashMap<>();
  /** Executors whose open was announced and has not ended, each with the answer its lookups wait for. */
  private final Map<String, CompletableFuture<String>> opening = new ConcurrentHashMap<>();
  private final Map<String, Map<String, Long>> metrics = new ConcurrentHashMap<>();

  /**
   * @param isActive whether the driver still counts an executor as active (not removed, not being
   *     removed or decommissioned); answers "gone" requests
   * @param secret the transport secret to hand out (hex digits), or empty when the executors
   *     have one of their own (Spark's, or one set explicitly)
   */
  public AddressBook(Predicate<String> isActive, Optional<String> secret) {
    this(isActive, secret, 10_000);
  }

  /**
   * @param isActive as above
   * @param secret as above
   * @param holdMs how long a lookup of an executor whose transport is still opening waits for its
   *     registration at most; below the askers' lookup timeout
   */
  public AddressBook(Predicate<String> isActive, Optional<String> secret, long holdMs) {
    if (holdMs < 0) {
      throw new IllegalArgumentException("hold time " + holdMs + " ms; must be 0 or more");
    }
    this.isActive = isActive;
    this.secret = secret;
    this.holdMs = holdMs;
  }

  /**
   * The sum over executors of the value {@code name} had in each one's last metrics report (an
   * executor that stopped keeps its last one, so totals of a finished job stay); 0 when none
   * reported it.
   */
  public long metricTotal(String name) {
    long sum = 0;
    for (Map<String, Long> m : metrics.values()) {
      sum += m.getOrDefault(name, 0L);
    }
    return sum;
  }

  /** How many executors have reported their metrics. */
  public int reportingExecutors() {
    return metrics.size();
  }

  /** How many executors registered a transport. */
  public int registeredExecutors() {
    return entries.size();
  }

  /** How many executors announced an open that has not ended yet. */
  public int openingExecutors() {
    return opening.size();
  }

  /**
   * The reply to one request, when it is ready: at once, except for the lookup of an executor that
   * announced its open, is still active and has neither registered nor withdrawn, which is
   * answered when it does, or "unknown" after the hold time.
   *
   * @throws IllegalArgumentException for a request this book does not know, or a malformed one
   * @throws IllegalStateException for an announcement past {@link #MAX_OPENING}
   */
  public CompletableFuture<String> answerAsync(String request) {
    if (request.startsWith("lookup ")) {
      String id = request.substring("lookup ".length()).trim();
      // The open's future first: a registration puts the entry before it completes the future.
      CompletableFuture<String> waiting = opening.get(id);
      if (waiting != null && !entries.containsKey(id)) {
        if (isActive.test(id)) {
          return waiting.copy().completeOnTimeout(AddressBookMessage.UNKNOWN, holdMs, TimeUnit.MILLISECONDS);
        }
        // Removed while it opened: it will neither register nor withdraw.
        endOpening(id, AddressBookMessage.UNKNOWN);
      }
    }
    // Everything else, and a lookup with nothing to wait for, is answered from the book as it is.
    return CompletableFuture.completedFuture(answer(request));
  }

  /**
   * The reply to one request, at once: a lookup of an executor still opening is "unknown" here
   * ({@link #answerAsync} waits for it).
   *
   * @throws IllegalArgumentException for a request this book does not know, or a malformed one
   * @throws IllegalStateException for an announcement past {@link #MAX_OPENING}
   */
  public String answer(String request) {
    if (request.startsWith("register ")) {
      AddressBookMessage.Entry e = AddressBookMessage.Entry.decode(request.substring("register ".length()));
      entries.put(e.executorId(), e);
      endOpening(e.executorId(), AddressBookMessage.found(e));
      LOG.info("Shuffle transport of executor {} registered at {} ({})", e.executorId(), e.address(), e.provider());
      return AddressBookMessage.OK;
    }
    if (request.startsWith("opening ")) {
      String id = word(request, "opening ");
      if (!entries.containsKey(id) && !opening.containsKey(id)) {
        if (opening.size() >= MAX_OPENING) {
          // Executors removed while they opened never end their open: theirs go first.
          for (String stale : List.copyOf(opening.keySet())) {
            if (!isActive.test(stale)) {
              endOpening(stale, AddressBookMessage.UNKNOWN);
            }
          }
        }
        if (opening.size() >= MAX_OPENING) {
          throw new IllegalStateException("more than " + MAX_OPENING + " executors announce an open");
        }
        opening.putIfAbsent(id, new CompletableFuture<>());
      }
      return AddressBookMessage.OK;
    }
    if (request.startsWith("withdraw ")) {
      endOpening(word(request, "withdraw "), AddressBookMessage.UNKNOWN);
      return AddressBookMessage.OK;
    }
    if (request.startsWith("lookup ")) {
      AddressBookMessage.Entry e = entries.get(request.substring("lookup ".length()).trim());
      return e == null ? AddressBookMessage.UNKNOWN : AddressBookMessage.found(e);
    }
    if (request.equals("gone") || request.startsWith("gone ")) {
      List<String> gone = new ArrayList<>();
      for (String id : AddressBookMessage.decodeGone(request)) {
        if (!isActive.test(id)) {
          gone.add(id);
        }
      }
      return AddressBookMessage.gone(gone);
    }
    if (request.equals(AddressBookMessage.secret())) {
      return secret.map(AddressBookMessage::secretReply).orElse(AddressBookMessage.UNKNOWN);
    }
    if (request.startsWith("metrics ")) {
      AddressBookMessage.MetricsReport r = AddressBookMessage.decodeMetrics(request);
      metrics.put(r.executorId(), r.values());
      return AddressBookMessage.OK;
    }
    if (request.equals("list")) {
      List<AddressBookMessage.Entry> all = new ArrayList<>(entries.values());
      all.sort((a, b) -> a.executorId().compareTo(b.executorId()));
      return AddressBookMessage.encodeList(all);
    }
    throw new IllegalArgumentException("unknown address book request '" + request + "'");
  }

  /** Ends an executor's open in this book: lookups waiting for it get {@code reply}. */
  private void endOpening(String executorId, String reply) {
    CompletableFuture<String> waiting = opening.remove(executorId);
    if (waiting != null) {
      waiting.complete(reply);
    }
  }

  /** The one word after {@code prefix}: an executor id. */
  private static String word(String request, String prefix) {
    String id = request.substring(prefix.length()).trim();
    if (id.isEmpty() || id.contains(" ")) {
      throw new IllegalArgumentException("malformed address book request '" + request + "'");
    }
    return id;
  }
}
