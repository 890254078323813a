package io.sluice.transport.verbs.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where CPU time went between two samples, from Linux's /proc: the machine's split into user,
 * system, softirq (where SoftRoCE does its packet work) and idle, and the busiest threads of
 * this JVM, each as a share of one CPU over the wall-clock time between the samples (like
 * top; kernel work that a thread's system calls do inline counts as that thread's). A cheap
 * profile for a guest without profiling tools. Not thread safe.
 */
final class CpuAccount {
  private static final Path STAT = Path.of("/proc/stat");
  private static final Path TASKS = Path.of("/proc/self/task");
  /** Clock ticks per second of /proc's figures (USER_HZ, 100 on Linux). */
  private static final double TICKS_PER_SECOND = 100;

  private final long nanos;

  /** Jiffies of the machine: user, nice, system, idle, iowait, irq, softirq, steal. */
  private final long[] machine;
  /** Jiffies (user + system) of each thread of this JVM, by "name (tid)". */
  private final Map<String, Long> threads;

  private CpuAccount(long nanos, long[] machine, Map<String, Long> threads) {
    this.nanos = nanos;
    this.machine = machine;
    this.threads = threads;
  }

  /** A sample now; empty figures where /proc cannot be read (not Linux). */
  static CpuAccount sample() {
    long[] machine = new long[8];
    try {
      String[] f = Files.readAllLines(STAT).get(0).trim().split("\\s+");
      for (int i = 0; i < machine.length && i + 1 < f.length; i++) {
        machine[i] = Long.parseLong(f[i + 1]);
      }
    } catch (IOException | RuntimeException e) {
      // leave zeros: the report then says nothing was measured
    }
    Map<String, Long> threads = new HashMap<>();
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
      for (Path task : tasks) {
        try {
          String stat = Files.readString(task.resolve("stat"));
          // "tid (comm) state ppid ..."; comm may hold spaces, so split after the last ')'.
          int open = stat.indexOf('(');
          int close = stat.lastIndexOf(')');
          String[] rest = stat.substring(close + 2).split(" ");
          long cpu = Long.parseLong(rest[11]) + Long.parseLong(rest[12]); // utime, stime
          threads.put(stat.substring(open + 1, close) + " (" + task.getFileName() + ")", cpu);
        } catch (IOException | RuntimeException threadEnded) {
          // a thread that ended between listing and reading has nothing to report
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux
    }
    return new CpuAccount(System.nanoTime(), machine, threads);
  }

  /** One line: the machine's split since {@code before} and this JVM's busiest threads. */
  String since(CpuAccount before) {
    long[] d = new long[machine.length];
    long total = 0;
    for (int i = 0; i < d.length; i++) {
      d[i] = machine[i] - before.machine[i];
      total += d[i];
    }
    if (total <= 0) {
      return "no CPU figures (/proc/stat unreadable)";
    }
    double t = total;
    StringBuilder line = new StringBuilder(String.format(Locale.ROOT,
        "machine user %.0f%% sys %.0f%% softirq %.0f%% irq %.0f%% idle %.0f%%",
        100 * (d[0] + d[1]) / t, 100 * d[2] / t, 100 * d[6] / t, 100 * d[5] / t, 100 * (d[3] + d[4]) / t));
    List<Map.Entry<String, Long>> busy = new ArrayList<>();
    for (Map.Entry<String, Long> e : threads.entrySet()) {
      long spent = e.getValue() - before.threads.getOrDefault(e.getKey(), 0L);
      if (spent > 0) {
        busy.add(Map.entry(e.getKey(), spent));
      }
    }
    busy.sort(Map.Entry.<String, Long>comparingByValue().reversed());
    double wallTicks = (nanos - before.nanos) / 1e9 * TICKS_PER_SECOND;
    line.append("; JVM threads (% of one CPU):");
    for (Map.Entry<String, Long> e : busy.subList(0, Math.min(5, busy.size()))) {
      line.append(String.format(Locale.ROOT, " %s %.0f%%", e.getKey(), 100 * e.getValue() / wallTicks));
    }
    return line.toString();
  }
}
