package io.sluice.transport.spi;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One selector thread serving many non-blocking connections ({@link SessionSocket}s): it
 * dispatches their readiness and runs tasks handed to it by other threads. A fixed number of
 * these serve all of a transport's accepted connections, however many there are.
 *
 * <p>Owned by its {@link Carrier}, which closes it. {@link #register}, {@link #execute} and
 * {@link #wakeup} may be called from any thread; everything else runs on the loop's own thread.
 */
final class IoLoop implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(IoLoop.class);

  private final Selector selector;
  private final Thread thread;
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private volatile boolean open = true;
  /** Set once the loop thread has ended; tasks handed over later run on the caller's thread. */
  private volatile boolean finished;

  IoLoop(String name) throws IOException {
    this.selector = Selector.open();
    this.thread = new Thread(this::run, name);
    thread.setDaemon(true);
    thread.start();
  }

  /** Hands {@code socket} (non-blocking) to this loop; a failure to register closes it. */
  void register(SocketChannel channel, SessionSocket socket) {
    tasks.add(() -> {
      try {
        socket.registered(channel.register(selector, SelectionKey.OP_READ, socket));
      } catch (ClosedChannelException | java.nio.channels.ClosedSelectorException e) {
        socket.close();
      }
    });
    selector.wakeup();
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
    while (open) {
      try {
        if (tasks.isEmpty()) {
          selector.select(TimeUnit.SECONDS.toMillis(1));
        } else {
          selector.selectNow();
        }
      } catch (IOException e) {
        LOG.error("Selector of {} failed; its connections are closed", thread.getName(), e);
        break;
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
    for (SelectionKey key : selector.keys()) {
      ((SessionSocket) key.attachment()).close();
    }
    finished = true;
    runTasks();
    try {
      selector.close();
    } catch (IOException ignored) {
      // the loop is over either way
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
