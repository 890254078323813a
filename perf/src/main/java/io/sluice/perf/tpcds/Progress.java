package io.sluice.perf.tpcds;

import java.util.Locale;

/** The progress line's pieces: elapsed time and an estimate of the time left. Stateless. */
final class Progress {
  private Progress() {}

  /** {@code 75 s}, {@code 3m05s}, {@code 1h02m}. */
  static String duration(double seconds) {
    long s = Math.round(Math.max(0, seconds));
    if (s < 100) {
      return s + " s";
    }
    if (s < 3600) {
      return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
    }
    return String.format(Locale.ROOT, "%dh%02dm", s / 3600, (s % 3600) / 60);
  }

  /** Time left if the {@code total - done} queries to go take as long as the {@code done} so far. */
  static double eta(double secondsSoFar, int done, int total) {
    return done == 0 ? 0 : secondsSoFar / done * (total - done);
  }
}
