package io.sluice.flight.server;

import io.sluice.flight.FlightOption;
import java.util.HashMap;
import java.util.Map;
import org.apache.arrow.flight.CallStatus;

/**
 * What puts may hold on a server, all puts together: bytes (batch bodies and IPC metadata) of the
 * tables puts stored plus those of puts under way, at most {@code maxBytes}; and tables stored by
 * puts, at most {@code maxTables}. A put reserves as its batches arrive ({@link Put#grow}), before
 * it lands anything, and is refused with RESOURCE_EXHAUSTED naming the setting once it would pass
 * either bound; what a stored table holds is given back when it is replaced or removed.
 *
 * <p>Thread safe.
 */
final class PutBudget {
  private final long maxBytes;
  private final long maxTables;
  private final Map<String, Long> stored = new HashMap<>();
  private long heldBytes;

  PutBudget(long maxBytes, long maxTables) {
    this.maxBytes = maxBytes;
    this.maxTables = maxTables;
  }

  /**
   * Starts a put of table {@code name}.
   *
   * @throws org.apache.arrow.flight.FlightRuntimeException RESOURCE_EXHAUSTED if it would be one
   *     table too many
   */
  synchronized Put begin(String name) {
    checkTables(name);
    return new Put(name);
  }

  /** The table {@code name} is gone (removed, or replaced by the application): its bytes are free. */
  synchronized void forget(String name) {
    Long bytes = stored.remove(name);
    if (bytes != null) {
      heldBytes -= bytes;
    }
  }

  synchronized long heldBytes() {
    return heldBytes;
  }

  private void checkTables(String name) {
    if (!stored.containsKey(name) && stored.size() >= maxTables) {
      throw CallStatus.RESOURCE_EXHAUSTED.withDescription("puts have stored " + stored.size() + " tables, the most"
          + " this server keeps (" + FlightOption.MAX_PUT_TABLES.key() + "); nothing was stored").toRuntimeException();
    }
  }

  /** One put's reservation: grows with its batches, then becomes its stored table's or is given back. */
  final class Put implements AutoCloseable {
    private final String name;
    private long bytes;
    private boolean done;

    private Put(String name) {
      this.name = name;
    }

    /**
     * The put now holds {@code total} bytes.
     *
     * @throws org.apache.arrow.flight.FlightRuntimeException RESOURCE_EXHAUSTED past the total bound
     */
    void grow(long total) {
      synchronized (PutBudget.this) {
        long more = total - bytes;
        if (more > 0 && heldBytes + more > maxBytes) {
          throw CallStatus.RESOURCE_EXHAUSTED.withDescription("puts would hold more than " + maxBytes + " bytes"
              + " together (" + FlightOption.MAX_PUT_TOTAL_BYTES.key() + "); nothing was stored").toRuntimeException();
        }
        heldBytes += more;
        bytes = total;
      }
    }

    /** The put's table is about to be stored: it keeps the bytes, and frees those of the table it replaces. */
    void commit() {
      synchronized (PutBudget.this) {
        checkTables(name);
        Long old = stored.put(name, bytes);
        if (old != null) {
          heldBytes -= old;
        }
        done = true;
      }
    }

    /** Gives the bytes back unless {@link #commit} kept them. */
    @Override
    public void close() {
      synchronized (PutBudget.this) {
        if (!done) {
          heldBytes -= bytes;
          done = true;
        }
      }
    }
  }
}
