package io.sluice.hadoop.rpc;

import io.sluice.transport.TransportException;
import java.util.HashMap;
import java.util.Map;

/**
 * Shares one {@link ClientContext} among the proxies with the same engine settings and closes it
 * when the last of them is stopped ({@code RPC.stopProxy}). Hadoop creates proxies through
 * engines it caches per protocol, with nothing that outlives them, so this process-wide table is
 * where a client transport can live, as the stock engine's client cache does. Thread safe.
 */
final class ClientContexts {
  private static final Map<EngineSettings, Entry> CONTEXTS = new HashMap<>();

  private static final class Entry {
    final ClientContext context;
    int references;

    Entry(ClientContext context) {
      this.context = context;
    }
  }

  private ClientContexts() {}

  /** The shared context for these settings, with one more reference. */
  static synchronized ClientContext acquire(EngineSettings settings) throws TransportException {
    Entry e = CONTEXTS.get(settings);
    if (e == null) {
      e = new Entry(new ClientContext(settings));
      CONTEXTS.put(settings, e);
    }
    e.references++;
    return e.context;
  }

  /** Drops a reference; the last one closes the context. */
  static synchronized void release(ClientContext context) {
    for (Map.Entry<EngineSettings, Entry> me : new HashMap<>(CONTEXTS).entrySet()) {
      if (me.getValue().context == context && --me.getValue().references == 0) {
        CONTEXTS.remove(me.getKey());
        context.close();
      }
    }
  }
}
