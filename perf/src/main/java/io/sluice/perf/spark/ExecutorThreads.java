package io.sluice.perf.spark;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * CPU time of the executor JVMs' threads, read from {@code /proc/<pid>/task/<tid>/stat} by the
 * benchmark's driver, and split by what the threads do ({@link Kind}). On {@code local-cluster}
 * the executors are child processes of the driver's JVM, so the driver finds them ({@link
 * #executorsOf}) and reads every thread of theirs, JIT compiler and GC threads included, which a
 * {@code ThreadMXBean} inside a task would not see. Linux only; threads are known by the 15
 * characters of their name that the kernel keeps ({@code comm}). Immutable snapshots; the class
 * keeps no state.
 */
public final class ExecutorThreads {
  /** What a thread does, from its name. */
  public enum Kind {
    /** {@code Executor task launch worker ...}: Spark's task threads (map, reduce, serialization). */
    TASK("task"),
    /** Sluice's transport threads ({@code sluice-io-*}, {@code sluice-handler-*}, ...). */
    SLUICE("sluice"),
    /**
     * Netty's block transfer threads ({@code shuffle-client-*}, {@code shuffle-server-*}): the sort
     * shuffle's data movement (under RdmaShuffleManager they still serve what is not shuffle data).
     */
    NETTY_SHUFFLE("netty_shuffle"),
    /** Spark's RPC ({@code rpc-*}, {@code netty-rpc-*}, {@code dispatcher-*}): control messages. */
    RPC("rpc"),
    /** HotSpot's C1 and C2 compiler threads. */
    JIT("jit"),
    /** The garbage collector's threads and the VM thread that runs its pauses. */
    GC("gc"),
    /** Every other live thread. */
    OTHER("other"),
    /** Threads that ended between the two snapshots: the process's CPU time no live thread accounts for. */
    EXITED("exited");

    public final String label;

    Kind(String label) {
      this.label = label;
    }
  }

  /** One executor JVM at one moment: its total CPU ticks and each live thread's name and ticks. */
  public record Process(long pid, long ticks, Map<Long, String> names, Map<Long, Long> threadTicks) {}

  /** Every executor JVM at one moment. */
  public record Snapshot(List<Process> processes) {}

  private static final Path PROC = Path.of("/proc");
  /** Linux's USER_HZ, the unit of the tick counts in {@code stat}; 100 on every common kernel. */
  private static final double TICKS_PER_SECOND = 100;

  private ExecutorThreads() {}

  public static Kind classify(String name) {
    if (name.startsWith("Executor task")) {
      return Kind.TASK;
    }
    if (name.startsWith("sluice-")) {
      return Kind.SLUICE;
    }
    if (name.startsWith("shuffle-client") || name.startsWith("shuffle-server")) {
      return Kind.NETTY_SHUFFLE;
    }
    if (name.startsWith("rpc-") || name.startsWith("netty-rpc") || name.startsWith("dispatcher-")) {
      return Kind.RPC;
    }
    if (name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")) {
      return Kind.JIT;
    }
    if (name.startsWith("GC Thread") || name.startsWith("G1 ") || name.equals("VM Thread")) {
      return Kind.GC;
    }
    return Kind.OTHER;
  }

  /**
   * The pids of the executor JVMs below {@code driverPid} ({@code CoarseGrainedExecutorBackend}
   * on its command line); empty where the executors run elsewhere (a standalone master).
   */
  static List<Long> executorsOf(long driverPid) {
    return ProcessHandle.of(driverPid).stream().flatMap(ProcessHandle::descendants)
        .filter(p -> p.info().commandLine().orElse("").contains("CoarseGrainedExecutorBackend"))
        .map(ProcessHandle::pid).sorted().toList();
  }

  /** Reads every thread of {@code pids} now; a process that has gone is left out. */
  public static Snapshot take(List<Long> pids) {
    List<Process> processes = new java.util.ArrayList<>();
    for (long pid : pids) {
      try {
        Path dir = PROC.resolve(String.valueOf(pid));
        long total = ticks(Files.readString(dir.resolve("stat"), StandardCharsets.US_ASCII));
        Map<Long, String> names = new HashMap<>();
        Map<Long, Long> threadTicks = new HashMap<>();
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(dir.resolve("task"))) {
          for (Path t : tasks) {
            try {
              String stat = Files.readString(t.resolve("stat"), StandardCharsets.US_ASCII);
              long tid = Long.parseLong(t.getFileName().toString());
              names.put(tid, name(stat));
              threadTicks.put(tid, ticks(stat));
            } catch (NoSuchFileException e) {
              // The thread ended while the folder was listed: its time shows as EXITED.
            }
          }
        }
        processes.add(new Process(pid, total, names, threadTicks));
      } catch (IOException e) {
        // The process ended: it is left out of this snapshot.
      }
    }
    return new Snapshot(List.copyOf(processes));
  }

  /**
   * Seconds of CPU each kind of thread used between two snapshots, summed over the processes in
   * both. A thread in {@code after} only counts from zero; time of threads that ended is {@link
   * Kind#EXITED}.
   */
  public static Map<Kind, Double> between(Snapshot before, Snapshot after) {
    Map<Kind, Double> seconds = new EnumMap<>(Kind.class);
    for (Kind k : Kind.values()) {
      seconds.put(k, 0.0);
    }
    for (Process a : after.processes()) {
      Process b = before.processes().stream().filter(p -> p.pid() == a.pid()).findFirst().orElse(null);
      if (b == null) {
        continue;
      }
      long live = 0;
      for (Map.Entry<Long, Long> t : a.threadTicks().entrySet()) {
        long used = t.getValue() - b.threadTicks().getOrDefault(t.getKey(), 0L);
        live += used;
        seconds.merge(classify(a.names().get(t.getKey())), used / TICKS_PER_SECOND, Double::sum);
      }
      long exited = Math.max(0, a.ticks() - b.ticks() - live);
      seconds.merge(Kind.EXITED, exited / TICKS_PER_SECOND, Double::sum);
    }
    return seconds;
  }

  /** The thread's name in a {@code stat} line: between the first '(' and the last ')'. */
  static String name(String stat) {
    return stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  }

  /** utime + stime of a {@code stat} line (fields 14 and 15; the name may hold spaces and parentheses). */
  static long ticks(String stat) {
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
    // f[0] is field 3 (the state), so field n is f[n - 3].
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }
}
