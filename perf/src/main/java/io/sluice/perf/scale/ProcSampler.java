package io.sluice.perf.scale;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Samples processes' resources from {@code /proc} on a thread of its own while a job runs, and
 * keeps each process's peaks: open file descriptors, sockets among them, established TCP
 * connections, threads, resident, locked ({@code VmLck}) and pinned ({@code VmPin}) memory, and
 * every established TCP connection seen (local and remote endpoint), so that the connections
 * between two sampled processes can be told apart afterwards. A process in another network
 * namespace (a simulated host) is read through its own {@code /proc/<pid>/net} tables. The
 * sampler's own process also gets its peak heap in use.
 *
 * <p>Reading a few hundred {@code fd/} links per process costs CPU on a small machine, so the
 * sampler waits between samples at least twice as long as the last sample took (and at least
 * the interval it was given). Needs to be able to read the processes' {@code fd/} folders (the same
 * user, or root). Not thread safe: start, then close from the same thread.
 */
final class ProcSampler implements AutoCloseable {
  private static final Path PROC = Path.of("/proc");
  private static final long STOP_WAIT_MS = 10_000;

  /** One established TCP connection as one process sees it. */
  record Link(String local, String remote) {}

  /**
   * A process's peaks over the samples, every established TCP connection it had in any of them ({@code links}), and
   * the established connections of each sample ({@code linkSamples}, in order).
   */
  record Peaks(long pid, int samples, int fds, int sockets, int tcpEstablished, int threads, long rssKb,
      long lockedKb, long pinnedKb, long heapUsedBytes, Set<Link> links, List<Set<Link>> linkSamples) {
    Peaks {
      links = Set.copyOf(links);
      linkSamples = List.copyOf(linkSamples);
    }

    /** Peaks whose connections were all seen in one sample. */
    Peaks(long pid, int samples, int fds, int sockets, int tcpEstablished, int threads, long rssKb, long lockedKb,
        long pinnedKb, long heapUsedBytes, Set<Link> links) {
      this(pid, samples, fds, sockets, tcpEstablished, threads, rssKb, lockedKb, pinnedKb, heapUsedBytes, links,
          List.of(links));
    }
  }

  private final Map<Long, Accumulator> processes = new LinkedHashMap<>();
  private final long selfPid = ProcessHandle.current().pid();
  private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
  private final long minIntervalMs;
  private final Thread thread;
  private volatile boolean running = true;
  private long sampleNanos;

  /**
   * @param pids the processes to sample (the sampler's own may be among them)
   * @param minIntervalMs the shortest wait between two samples
   */
  ProcSampler(List<Long> pids, long minIntervalMs) {
    if (minIntervalMs <= 0) {
      throw new IllegalArgumentException("the sampling interval must be positive, got " + minIntervalMs);
    }
    for (long pid : pids) {
      processes.put(pid, new Accumulator(pid));
    }
    this.minIntervalMs = minIntervalMs;
    this.thread = new Thread(this::loop, "scale-proc-sampler");
    this.thread.setDaemon(true);
  }

  /** Takes the first sample now and starts sampling. */
  ProcSampler start() {
    sampleOnce();
    thread.start();
    return this;
  }

  private void loop() {
    while (running) {
      long waitMs = Math.max(minIntervalMs, 2 * TimeUnit.NANOSECONDS.toMillis(sampleNanos));
      try {
        Thread.sleep(waitMs);
      } catch (InterruptedException e) {
        return;
      }
      if (running) {
        sampleOnce();
      }
    }
  }

  /** Stops the thread, takes a last sample, and returns the peaks by pid. */
  Map<Long, Peaks> finish() {
    running = false;
    thread.interrupt();
    try {
      thread.join(STOP_WAIT_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (thread.isAlive()) {
      throw new IllegalStateException("the /proc sampler did not stop within " + STOP_WAIT_MS + " ms");
    }
    sampleOnce();
    Map<Long, Peaks> out = new LinkedHashMap<>();
    processes.forEach((pid, a) -> out.put(pid, a.peaks()));
    return out;
  }

  @Override
  public void close() {
    running = false;
    thread.interrupt();
  }

  private void sampleOnce() {
    long started = System.nanoTime();
    Map<String, Map<Long, ProcTables.TcpSocket>> tables = new HashMap<>();
    for (Accumulator a : processes.values()) {
      a.sample(tables);
    }
    sampleNanos = System.nanoTime() - started;
  }

  /** One process's running peaks. Touched by the sampling thread, then by {@link #finish} after it ended. */
  private final class Accumulator {
    final long pid;
    final Path dir;
    int samples;
    int fds;
    int sockets;
    int tcpEstablished;
    int threads;
    long rssKb;
    long lockedKb;
    long pinnedKb;
    long heapUsed;
    final Set<Link> links = new HashSet<>();
    final List<Set<Link>> linkSamples = new java.util.ArrayList<>();

    Accumulator(long pid) {
      this.pid = pid;
      this.dir = PROC.resolve(String.valueOf(pid));
    }

    void sample(Map<String, Map<Long, ProcTables.TcpSocket>> tables) {
      try {
        ProcTables.Status s = ProcTables.status(Files.readString(dir.resolve("status"), StandardCharsets.US_ASCII));
        List<Long> socketInodes = new java.util.ArrayList<>();
        int fdCount = 0;
        try (DirectoryStream<Path> fdDir = Files.newDirectoryStream(dir.resolve("fd"))) {
          for (Path fd : fdDir) {
            fdCount++;
            try {
              long inode = ProcTables.socketInode(Files.readSymbolicLink(fd).toString());
              if (inode >= 0) {
                socketInodes.add(inode);
              }
            } catch (IOException e) {
              // Closed while the folder was listed: counted, not classified.
            }
          }
        }
        Map<Long, ProcTables.TcpSocket> table = tables.computeIfAbsent(namespace(), k -> readTcp());
        int established = 0;
        Set<Link> now = new HashSet<>();
        for (long inode : socketInodes) {
          ProcTables.TcpSocket t = table.get(inode);
          if (t != null && t.state() == ProcTables.ESTABLISHED) {
            established++;
            now.add(new Link(t.local(), t.remote()));
          }
        }
        links.addAll(now);
        linkSamples.add(Set.copyOf(now));
        samples++;
        fds = Math.max(fds, fdCount);
        sockets = Math.max(sockets, socketInodes.size());
        tcpEstablished = Math.max(tcpEstablished, established);
        threads = Math.max(threads, s.threads());
        rssKb = Math.max(rssKb, s.rssKb());
        lockedKb = Math.max(lockedKb, s.lockedKb());
        pinnedKb = Math.max(pinnedKb, s.pinnedKb());
        if (pid == selfPid) {
          heapUsed = Math.max(heapUsed, memory.getHeapMemoryUsage().getUsed());
        }
      } catch (IOException e) {
        // The process ended: its earlier samples stand.
      }
    }

    private String namespace() throws IOException {
      return Files.readSymbolicLink(dir.resolve("ns").resolve("net")).toString();
    }

    private Map<Long, ProcTables.TcpSocket> readTcp() {
      Map<Long, ProcTables.TcpSocket> all = new HashMap<>();
      for (String name : List.of("tcp", "tcp6")) {
        try {
          all.putAll(ProcTables.tcpTable(Files.readString(dir.resolve("net").resolve(name), StandardCharsets.US_ASCII)));
        } catch (IOException e) {
          // No IPv6 in that namespace, or the process ended.
        }
      }
      return all;
    }

    Peaks peaks() {
      return new Peaks(pid, samples, fds, sockets, tcpEstablished, threads, rssKb, lockedKb, pinnedKb, heapUsed,
          links, linkSamples);
    }
  }
}
