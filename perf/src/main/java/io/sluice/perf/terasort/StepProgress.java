package io.sluice.perf.terasort;

import java.io.PrintStream;

/**
 * One progress line per finished step of a run of known length: "step k of n", what it was, how
 * long it took, the time since the start, and an estimate of the time left (the mean step time
 * so far, times the steps left). Not thread safe: one driver thread reports.
 */
final class StepProgress {
  private final int total;
  private final PrintStream out;
  private final long started = System.nanoTime();
  private int done;
  private long stepStarted;
  private String current = "";

  StepProgress(int total, PrintStream out) {
    this.total = total;
    this.out = out;
  }

  void start(String what) {
    current = what;
    stepStarted = System.nanoTime();
  }

  /** Ends the step begun by {@link #start}; returns its duration in seconds. */
  double finish(String result) {
    long now = System.nanoTime();
    done++;
    double step = (now - stepStarted) / 1e9;
    double elapsed = (now - started) / 1e9;
    double eta = elapsed / done * (total - done);
    out.printf("[terasort] step %d of %d: %-28s %7.1f s  %s  (elapsed %s, ETA %s)%n", done, total, current, step,
        result, clock(elapsed), clock(eta));
    out.flush();
    return step;
  }

  private static String clock(double seconds) {
    long s = Math.round(seconds);
    return String.format("%d:%02d", s / 60, s % 60);
  }
}
