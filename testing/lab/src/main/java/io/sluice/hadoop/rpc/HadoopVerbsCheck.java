package io.sluice.hadoop.rpc;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.GenericRefreshProtocol;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.RefreshResponse;
import org.apache.hadoop.ipc.proto.GenericRefreshProtocolProtos.GenericRefreshProtocolService;
import org.apache.hadoop.ipc.protocolPB.GenericRefreshProtocolClientSideTranslatorPB;
import org.apache.hadoop.ipc.protocolPB.GenericRefreshProtocolPB;
import org.apache.hadoop.ipc.protocolPB.GenericRefreshProtocolServerSideTranslatorPB;

/**
 * Hadoop RPC over verbs in the SoftRoCE lab: a real Hadoop RPC server and client with {@link
 * SluiceRpcEngine} on the verbs provider, at the device's address. The protocol is
 * hadoop-common's own {@code GenericRefreshProtocol}, served by an echo (each answer's message
 * is the call's argument). Calls with bodies of every size must come back equal; those above
 * the READ threshold ({@code sluice.rpc.readThresholdBytes}, 64 KiB) must have been READ over
 * the transport, request body by the server and answer body by the client, and the small ones
 * must not, as the server's own counters say. The provider is {@code verbs} with no fallback:
 * without verbs the server opens no transport and the check fails.
 *
 * <p>Lives in the engine's package to read the server's counters.
 *
 * <pre>
 *   HadoopVerbsCheck ADDRESS
 * </pre>
 *
 * Prints {@code HADOOP-VERBS} lines; exit status 0 when everything held, 1 otherwise.
 */
public final class HadoopVerbsCheck {
  private static final int[] SIZES = {16, 4000, 60_000, 70_000, 1 << 20};

  private HadoopVerbsCheck() {}

  public static void main(String[] args) {
    if (args.length != 1) {
      System.err.println("usage: HadoopVerbsCheck ADDRESS");
      System.exit(2);
    }
    int status;
    try {
      status = run(args[0]);
    } catch (IOException | RuntimeException e) {
      e.printStackTrace(System.out);
      System.out.println("HADOOP-VERBS FAIL: " + e);
      status = 1;
    }
    System.exit(status);
  }

  /** Answers every refresh with its argument as the message: an echo. */
  private static final class Echo implements GenericRefreshProtocol {
    @Override
    public Collection<RefreshResponse> refresh(String identifier, String[] args) {
      RefreshResponse echo = new RefreshResponse(0, String.join("", args));
      echo.setSenderName("echo"); // the protocol's encoding requires a sender
      return List.of(echo);
    }
  }

  static int run(String address) throws IOException {
    Configuration conf = new Configuration();
    conf.set("sluice.transport.secret", "hadoop-verbs-lab");
    conf.set("sluice.transport.provider", "verbs");
    conf.set("sluice.transport.bindHost", address);
    conf.set("sluice.transport.advertiseHost", address);
    RPC.setProtocolEngine(conf, GenericRefreshProtocolPB.class, SluiceRpcEngine.class);
    RPC.Server server = new RPC.Builder(conf)
        .setProtocol(GenericRefreshProtocolPB.class)
        .setInstance(GenericRefreshProtocolService.newReflectiveBlockingService(
            new GenericRefreshProtocolServerSideTranslatorPB(new Echo())))
        .setBindAddress(address)
        .setPort(0)
        .setNumHandlers(2)
        .build();
    server.start();
    List<String> failures = new ArrayList<>();
    long threshold = Long.parseLong(conf.get(SluiceRpcOption.READ_THRESHOLD_BYTES.key(),
        SluiceRpcOption.READ_THRESHOLD_BYTES.defaultValue()));
    GenericRefreshProtocolPB proxy = null;
    try {
      if (!(server instanceof SluiceRpcServer sluice) || sluice.transportStats().isEmpty()) {
        System.out.println("HADOOP-VERBS FAIL: the server opened no verbs transport");
        return 1;
      }
      System.out.println("HADOOP-VERBS server: Hadoop RPC at " + server.getListenerAddress() + ", verbs transport at "
          + sluice.transportAddress().map(Object::toString).orElse("-"));
      InetSocketAddress at = server.getListenerAddress();
      proxy = RPC.getProxy(GenericRefreshProtocolPB.class, RPC.getProtocolVersion(GenericRefreshProtocolPB.class), at,
          conf);
      GenericRefreshProtocolClientSideTranslatorPB client = new GenericRefreshProtocolClientSideTranslatorPB(proxy);
      Random random = new Random(42);
      for (int size : SIZES) {
        StringBuilder text = new StringBuilder(size);
        for (int i = 0; i < size; i++) {
          text.append((char) ('a' + random.nextInt(26)));
        }
        String payload = text.toString();
        TransportCallService.Stats before = sluice.transportStats().orElseThrow();
        long t0 = System.nanoTime();
        Collection<RefreshResponse> answer = client.refresh("echo", new String[] {payload});
        long micros = (System.nanoTime() - t0) / 1000;
        TransportCallService.Stats after = sluice.transportStats().orElseThrow();
        long read = after.requestBodiesRead() - before.requestBodiesRead();
        long published = after.responseBodiesPublished() - before.responseBodiesPublished();
        boolean large = size > threshold;
        System.out.printf("HADOOP-VERBS echo %d B in %d us: request bodies READ by the server %d, answer bodies"
            + " READ by the client %d%n", size, micros, read, published);
        if (answer.size() != 1 || !payload.equals(answer.iterator().next().getMessage())) {
          failures.add("the answer to a " + size + " B call differs from its argument");
        }
        if (read != (large ? 1 : 0) || published != (large ? 1 : 0)) {
          failures.add("a " + size + " B call: " + read + " request and " + published + " answer bodies READ, expected "
              + (large ? "one each" : "none"));
        }
      }
      if (sluice.transportStats().orElseThrow().calls() < SIZES.length) {
        failures.add("the calls did not travel over the transport");
      }
    } finally {
      if (proxy != null) {
        RPC.stopProxy(proxy);
      }
      server.stop();
    }
    if (failures.isEmpty()) {
      System.out.println("HADOOP-VERBS PASS: " + SIZES.length + " echoes over verbs, bodies above " + threshold
          + " B READ over verbs both ways");
      return 0;
    }
    failures.forEach(f -> System.out.println("HADOOP-VERBS FAIL: " + f));
    return 1;
  }
}
