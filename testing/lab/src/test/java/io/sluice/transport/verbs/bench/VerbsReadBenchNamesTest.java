package io.sluice.transport.verbs.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** A second device's records get names of their own, baselines included; the first device's stay as they were. */
class VerbsReadBenchNamesTest {

  @Test
  void withoutPrefixNamesStayAsTheyAre() {
    VerbsReadBench.Names names = new VerbsReadBench.Names("");
    assertEquals("verbs.read.64KiB.inflight16", names.of("verbs.read.64KiB.inflight16"));
    assertEquals("ib_read_bw.64KiB.inflight16", names.of("ib_read_bw.64KiB.inflight16"));
  }

  @Test
  void thePrefixReplacesVerbsAndPrecedesEveryOtherName() {
    VerbsReadBench.Names names = new VerbsReadBench.Names("siw");
    assertEquals("siw.read.64KiB.inflight16", names.of("verbs.read.64KiB.inflight16"));
    assertEquals("siw.busyPoll0.read.4KiB.latency_p50", names.of("verbs.busyPoll0.read.4KiB.latency_p50"));
    assertEquals("siw.ib_read_lat.4KiB.latency_p50", names.of("ib_read_lat.4KiB.latency_p50"));
    assertEquals("siw.tcp.request.256B.roundtrip_p50", names.of("tcp.request.256B.roundtrip_p50"));
  }

  @Test
  void aRecordCarriesBothNamesUnderThePrefix() {
    String json = new VerbsReadBench.Names("siw").record("verbs.read.1MiB.inflight16", "MB/s", 12.5,
        "ib_read_bw.1MiB.inflight16", 25);
    assertEquals("{\"name\": \"siw.read.1MiB.inflight16\", \"unit\": \"MB/s\", \"value\": 12.5000,"
        + " \"baseline_name\": \"siw.ib_read_bw.1MiB.inflight16\", \"baseline_value\": 25.0000}", json);
  }
}
