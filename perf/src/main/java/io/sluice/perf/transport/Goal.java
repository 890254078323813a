package io.sluice.perf.transport;

import io.sluice.perf.ByteSize;
import io.sluice.perf.Measurement;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * A throughput goal: READs of one provider and block size reach at least {@code minRatio} of
 * their baseline, at the better of the measured in-flight depths. Immutable.
 */
record Goal(String provider, int block, double minRatio) {
  /** The goals of the transport benchmark on the project's 2-core reference machine. */
  static final List<Goal> TRANSPORT = List.of(new Goal("tcp", 1 << 20, 0.80), new Goal("shm", 1 << 20, 0.50));

  /** The best measurement this goal applies to, if the run measured any. */
  Optional<Measurement> best(List<Measurement> results, List<Integer> depths) {
    return results.stream()
        .filter(m -> depths.stream().anyMatch(d -> m.name().equals(Names.readThroughput(provider, block, d))))
        .max(Comparator.comparingDouble(Measurement::ratio));
  }

  String describe() {
    return String.format("%s READ %s >= %.0f%% of baseline", provider, ByteSize.label(block), minRatio * 100);
  }
}
