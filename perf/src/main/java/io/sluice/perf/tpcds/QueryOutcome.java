package io.sluice.perf.tpcds;

import java.util.Optional;

/**
 * One query under both managers. {@code sort} and {@code rdma} are empty when that run failed
 * ({@code error} says why); {@code difference} describes how the results differ, empty when they
 * are equal or could not be compared. Immutable.
 */
record QueryOutcome(String query, Optional<QueryRun> sort, Optional<QueryRun> rdma, Optional<String> difference,
    Optional<String> error, boolean rdmaFirst) {

  boolean measured() {
    return sort.isPresent() && rdma.isPresent();
  }

  /** RdmaShuffleManager's wall time over the sort shuffle's. */
  double ratio() {
    return rdma.orElseThrow().wallSeconds() / sort.orElseThrow().wallSeconds();
  }
}
