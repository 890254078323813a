package io.sluice.transport.carrier;

import io.sluice.transport.PeerClosedException;
import io.sluice.transport.TransportUnavailableException;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One selector thread serving many non-blocking connections ({@link SessionSocket}s): it
 * dispatches their readiness and runs tasks handed to it by other threads. A fixed number of
 * these serve all of a transport's accepted connections, however many there are.
 *
 * <p>Whatever serving one connection throws closes that connection only. Should the thread end
 * otherwise (its selector fails), it has died: it closes its connections with a {@link
 * TransportUnavailableException} that names it, refuses connections handed to it later, and
 * {@link #death} says why, so that its {@link Carrier} takes no new work on it.
 *
 * <p>Owned by its {@link Carrier}, which closes it. {@link #register}, {@link #execute}, {@link
 * #wakeup} and {@link #death} may be called from any thread; everything else runs on the loop's
 * own thread.
 */
final class IoLoop implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(IoLoop.class);

  private final Selector selector;
  private final Thread thread;
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private volatile boolean open = true;
  /** Set once the loop thread has ended; tasks handed over later run on the caller's thread. */
  private volatile boolean finished;
  /** Why the thread ended without being closed; set before {@link #finished}. */
  private volatile TransportUnavailableException death;
  /** The connections handed to this loop and not closed yet. */
  private final Set<SessionSocket> sockets = ConcurrentHashMap.newKeySet();

  /** A loop on {@code selector}, which it owns from here on. */
  IoLoop(String name, Selector selector) {
    this.selector = selector;
    this.thread = new Thread(this::run, name);
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Hands {@code socket} (non-blocking) to this loop; a failure to register closes it, as does a
   * loop that has died (with its {@link #death}).
   */
  void register(SocketChannel channel, SessionSocket socket) {
    execute(() -> {
      if (finished) { // run here by the caller: the loop will not serve it
        TransportUnavailableException dead = death;
        socket.close(dead != null ? dead : new PeerClosedException("selector thread " + thread.getName() + " is closed"));
        return;
      }
      sockets.add(socket);
      try {
        socket.registered(channel.register(selector, SelectionKey.OP_READ, socket));
      } catch (ClosedChannelException e) {
        socket.close();
      } catch (ClosedSelectorException e) {
        socket.close(died(e)); // closed under the running loop, which cannot go on
      }
    });
  }

  /** The connection closed; the loop no longer answers for it. */
  void forget(SessionSocket socket) {
    sockets.remove(socket);
  }

  /** Why this loop's thread died, if it did: it serves nothing any more. */
  Optional<TransportUnavailableException> death() {
    return Optional.ofNullable(death);
  }

  /** Runs {@code task} on the loop thread, soon; once the loop has ended, on this thread. */
  void execute(Runnable task) {
    tasks.add(task);
    if (finished) {
      runTasks();
    } else {
      wakeup();
    }
  }

  private void runTasks() {
    Runnable task;
    while ((task = tasks.poll()) != null) {
      try {
        task.run();
      } catch (RuntimeException | Error e) {
        LOG.warn("A task of {} failed", thread.getName(), e);
      }
    }
  }

  boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /** Makes a blocked select return so that changed interest takes effect. */
  void wakeup() {
    if (!inLoop()) {
      selector.wakeup();
    }
  }

  private void run() {
    Throwable failure = null;
    try {
      serve();
    } catch (Throwable t) {
      failure = t; // the selector itself failed: nothing is left to serve connections with
    }
    TransportUnavailableException cause = failure != null ? died(failure) : null;
    for (SessionSocket s : sockets) {
      if (cause != null) {
        s.close(cause);
      } else {
        s.close();
      }
    }
    finished = true;
    runTasks();
    try {
      selector.close();
    } catch (IOException ignored) {
      // the loop is over either way
    }
  }

  /** Records, once, that the loop cannot go on because of {@code failure}. @return the death */
  private synchronized TransportUnavailableException died(Throwable failure) {
    if (death == null) {
      LOG.error("Selector thread {} died; its {} connections are closed and it takes no new ones",
          thread.getName(), sockets.size(), failure);
      death = new TransportUnavailableException("selector thread " + thread.getName() + " died: " + failure, failure);
    }
    return death;
  }

  /** Serves until closed; returns normally only then. */
  private void serve() throws IOException {
    while (open) {
      if (tasks.isEmpty()) {
        selector.select(TimeUnit.SECONDS.toMillis(1));
      } else {
        selector.selectNow();
      }
      runTasks();
      var ready = selector.selectedKeys().iterator();
      while (ready.hasNext()) {
        SelectionKey key = ready.next();
        ready.remove();
        SessionSocket s = (SessionSocket) key.attachment();
        try {
          s.onReady(key);
        } catch (RuntimeException | Error e) {
          LOG.warn("Closing a connection whose handling failed", e);
          s.brokeDown(e);
        }
      }
    }
  }

  /** Stops the loop, closing the connections still on it, and waits up to {@code nanos} for it. */
  void close(long nanos) {
    open = false;
    selector.wakeup();
    if (!inLoop()) {
      try {
        thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nanos)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void close() {
    close(TimeUnit.SECONDS.toNanos(5));
  }
}
