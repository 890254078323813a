package io.sluice.flight.server;

import io.sluice.transport.Transport;
import io.sluice.transport.metrics.Metric;
import io.sluice.transport.metrics.TransportMetrics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters of one Flight server: gets and puts by path (plain gRPC or the data plane), the
 * bytes they carried, grants issued and refused, and refused calls. Cheap {@link LongAdder}s kept
 * where the server serves; read as a snapshot of {@link Metric}s, to which the data plane's
 * transport adds its own under {@code transport.}.
 *
 * <p>The server sees the bytes of a data-plane get as the bodies it announced, not the path the
 * reader took; {@link #snapshot} splits them by what its transport saw: all of them on verbs;
 * on tcp, the bytes it served in READ frames as tcp and the rest as shm (mapped by the reader).
 *
 * <p>Thread safe.
 */
public final class FlightMetrics {
  private final LongAdder plainGets = new LongAdder();
  private final LongAdder dataPlaneGets = new LongAdder();
  private final LongAdder failedGets = new LongAdder();
  private final LongAdder grpcGetBytes = new LongAdder();
  private final LongAdder dataPlaneGetBytes = new LongAdder();
  private final LongAdder plainPuts = new LongAdder();
  private final LongAdder dataPlanePuts = new LongAdder();
  private final LongAdder grpcPutBytes = new LongAdder();
  private final LongAdder grantsIssued = new LongAdder();
  private final LongAdder grantsRefused = new LongAdder();
  private final LongAdder unauthenticated = new LongAdder();

  /** A plain Flight get sent {@code bytes} of batch bodies; {@code ok} false when it ended in an error. */
  void plainGet(long bytes, boolean ok) {
    plainGets.increment();
    grpcGetBytes.add(bytes);
    if (!ok) {
      failedGets.increment();
    }
  }

  /** A data-plane get announced bodies of {@code bytes}, all READ when {@code ok}. */
  void dataPlaneGet(long bytes, boolean ok) {
    dataPlaneGets.increment();
    if (ok) {
      dataPlaneGetBytes.add(bytes);
    } else {
      failedGets.increment();
    }
  }

  /** A plain Flight put stored {@code bytes}. */
  void plainPut(long bytes) {
    plainPuts.increment();
    grpcPutBytes.add(bytes);
  }

  /** A data-plane put was stored; its bytes are the transport's READs. */
  void dataPlanePut() {
    dataPlanePuts.increment();
  }

  void grantIssued() {
    grantsIssued.increment();
  }

  /** A data-plane call named a grant that is unknown, used or expired. */
  void grantRefused() {
    grantsRefused.increment();
  }

  /** A call was refused as UNAUTHENTICATED by the server's call authentication. */
  void unauthenticatedCall() {
    unauthenticated.increment();
  }

  /** Every metric now, the same names in the same order each time (with the data plane's transport's when on). */
  public List<Metric> snapshot(Optional<Transport> transport) {
    List<Metric> m = new ArrayList<>(160);
    m.add(Metric.counter("gets.plain", Metric.Unit.COUNT, plainGets.sum()));
    m.add(Metric.counter("gets.dataPlane", Metric.Unit.COUNT, dataPlaneGets.sum()));
    m.add(Metric.counter("gets.failed", Metric.Unit.COUNT, failedGets.sum()));
    long dataPlane = dataPlaneGetBytes.sum();
    Map<String, Long> t = new HashMap<>();
    transport.ifPresent(x -> x.metrics().snapshot().forEach(v -> t.put(v.name(), v.value())));
    boolean verbs = transport.map(x -> x.provider().equals("verbs")).orElse(false);
    long tcp = verbs ? 0 : Math.min(dataPlane, t.getOrDefault("served.reads.bytes", 0L));
    m.add(Metric.counter("gets.bytes.grpc", Metric.Unit.BYTES, grpcGetBytes.sum()));
    m.add(Metric.counter("gets.bytes.tcp", Metric.Unit.BYTES, tcp));
    m.add(Metric.counter("gets.bytes.shm", Metric.Unit.BYTES, verbs ? 0 : dataPlane - tcp));
    m.add(Metric.counter("gets.bytes.verbs", Metric.Unit.BYTES, verbs ? dataPlane : 0));
    m.add(Metric.counter("puts.plain", Metric.Unit.COUNT, plainPuts.sum()));
    m.add(Metric.counter("puts.dataPlane", Metric.Unit.COUNT, dataPlanePuts.sum()));
    m.add(Metric.counter("puts.bytes.grpc", Metric.Unit.BYTES, grpcPutBytes.sum()));
    for (String path : TransportMetrics.PATHS) {
      m.add(Metric.counter("puts.bytes." + path, Metric.Unit.BYTES, t.getOrDefault("reads." + path + ".bytes", 0L)));
    }
    m.add(Metric.counter("grants.issued", Metric.Unit.COUNT, grantsIssued.sum()));
    m.add(Metric.counter("grants.refused", Metric.Unit.COUNT, grantsRefused.sum()));
    m.add(Metric.counter("calls.unauthenticated", Metric.Unit.COUNT, unauthenticated.sum()));
    for (Metric v : transport.map(x -> x.metrics().snapshot())
        .orElseGet(() -> new TransportMetrics().snapshot())) {
      m.add(new Metric("transport." + v.name(), v.unit(), v.kind(), v.value()));
    }
    return m;
  }
}
