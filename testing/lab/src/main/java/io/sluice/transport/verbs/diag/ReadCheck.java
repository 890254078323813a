package io.sluice.transport.verbs.diag;

import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.RdmaServerEndpoint;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import io.sluice.transport.verbs.nativelib.DisniTask;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * End-to-end check of DiSNI over the project's libdisni.so: a server registers a region
 * filled with a known pattern and sends its descriptor (address, length, rkey) with a
 * SEND; the client connects with rdma_cm, reads the whole region with one RDMA READ, then
 * reads it again as a batch of READs with two scatter/gather entries each posted in one
 * call, verifies every byte, and reports its checksum back with a SEND.
 *
 * <p>Arguments: {@code server|client|loopback|failures|readpath|channel HOST PORT [BYTES] [TIMEOUT_SECONDS]}.
 * {@code loopback} runs both sides in this JVM on two threads; {@code failures} runs the
 * READs and connection attempts that must fail ({@link AccessFailureCheck},
 * {@link CmFailureCheck}) on PORT, PORT+1 and PORT+2; {@code readpath} exercises the
 * {@link io.sluice.transport.verbs.rc.RdmaNode} data path ({@link ReadPathCheck}); {@code
 * channel} a hostile requester against a message channel ({@link ChannelCheck}). Every wait is bounded by the
 * timeout (default 60 s). Runs inside the DiSNI class loader (see DisniRuntime); not
 * thread safe, one run at a time.
 */
public final class ReadCheck implements DisniTask {

  static final int WC_SEND = 0;
  static final int WC_RDMA_READ = 2;
  static final int WC_RECV = 128;
  private static final int BATCH = 8;

  @Override
  public int run(List<String> args, PrintStream out) {
    try {
      Options options = Options.parse(args);
      switch (options.mode()) {
        case "server" -> serve(options, out, () -> { });
        case "client" -> read(options, out);
        case "loopback" -> loopback(options, out);
        case "failures" -> {
          return failures(options, out);
        }
        case "channel" -> {
          int wrong = ChannelCheck.run(options.address(), options.timeoutNanos(), out);
          out.println("DISNI-CHECK channel steps behaving wrongly: " + wrong);
          return wrong == 0 ? 0 : 1;
        }
        case "readpath" -> {
          int wrong = ReadPathCheck.run(options.address(), options.timeoutNanos(), out);
          out.println("DISNI-CHECK readpath steps behaving wrongly: " + wrong);
          return wrong == 0 ? 0 : 1;
        }
        default -> throw new IllegalArgumentException("unknown mode " + options.mode());
      }
      return 0;
    } catch (IOException | RuntimeException e) {
      out.println("DISNI-CHECK error: " + e);
      e.printStackTrace(out);
      return 1;
    }
  }

  record Options(String mode, InetSocketAddress address, int bytes, long timeoutNanos) {
    static Options parse(List<String> args) {
      if (args.size() < 3) {
        throw new IllegalArgumentException("need MODE HOST PORT [BYTES] [TIMEOUT_SECONDS]");
      }
      int bytes = args.size() > 3 ? Integer.parseInt(args.get(3)) : 1 << 20;
      if (bytes < 2 * BATCH || bytes % (2 * BATCH) != 0) {
        throw new IllegalArgumentException("BYTES must be a positive multiple of " + 2 * BATCH);
      }
      long seconds = args.size() > 4 ? Long.parseLong(args.get(4)) : 60;
      return new Options(args.get(0), new InetSocketAddress(args.get(1), Integer.parseInt(args.get(2))),
          bytes, TimeUnit.SECONDS.toNanos(seconds));
    }
  }

  private static int failures(Options options, PrintStream out) throws IOException {
    InetSocketAddress base = options.address();
    int wrong = AccessFailureCheck.run(base, options.timeoutNanos(), out);
    wrong += CmFailureCheck.run(new InetSocketAddress(base.getAddress(), base.getPort() + 1),
        new InetSocketAddress(base.getAddress(), base.getPort() + 2), options.timeoutNanos(), out);
    out.println("DISNI-CHECK failure cases behaving wrongly: " + wrong);
    return wrong == 0 ? 0 : 1;
  }

  private static void loopback(Options options, PrintStream out) throws IOException {
    ExecutorService server = Executors.newSingleThreadExecutor();
    CountDownLatch listening = new CountDownLatch(1);
    try {
      Future<?> served = server.submit(() -> {
        serve(options, out, listening::countDown);
        return null;
      });
      // A connect before the server listens would be refused; wait for the bind.
      if (!listening.await(options.timeoutNanos(), TimeUnit.NANOSECONDS)) {
        throw new IOException("the server side did not start listening in time");
      }
      read(options, out);
      Endpoints.awaitServerSide(served, options.timeoutNanos());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    } finally {
      server.shutdownNow();
    }
  }

  static void serve(Options options, PrintStream out, Runnable listening) throws IOException {
    long deadline = System.nanoTime() + options.timeoutNanos();
    RdmaActiveEndpointGroup<CheckEndpoint> group = Endpoints.newGroup();
    try {
      RdmaServerEndpoint<CheckEndpoint> server = group.createServerEndpoint();
      Endpoints.bind(server, options.address());
      out.println("DISNI-CHECK server listening on " + options.address());
      listening.run();
      CheckEndpoint endpoint = Endpoints.accept(server, deadline);
      out.println("DISNI-CHECK server accepted " + endpoint.getDstAddr());
      ByteBuffer data = ByteBuffer.allocateDirect(options.bytes());
      Pattern.fill(data);
      IbvMr region = endpoint.register(data);
      endpoint.sendControl(1, new ControlMessage(ControlMessage.DESCRIPTOR, region.getAddr(),
          options.bytes(), region.getRkey(), Pattern.checksum(data)));
      endpoint.await(WC_SEND, deadline);
      endpoint.await(WC_RECV, deadline);
      ControlMessage done = endpoint.receivedControl().expect(ControlMessage.DONE);
      if (done.checksum() != Pattern.checksum(data)) {
        throw new IOException("client reports checksum " + done.checksum() + ", region has " + Pattern.checksum(data));
      }
      out.println("DISNI-CHECK server: client read " + done.length() + " bytes, checksum matches");
      endpoint.deregisterMemory(region);
      Endpoints.closeQuietly(endpoint::close);
    } finally {
      Endpoints.closeQuietly(group::close);
    }
  }

  static void read(Options options, PrintStream out) throws IOException {
    long deadline = System.nanoTime() + options.timeoutNanos();
    RdmaActiveEndpointGroup<CheckEndpoint> group = Endpoints.newGroup();
    try {
      CheckEndpoint endpoint = group.createEndpoint();
      Endpoints.connect(endpoint, options.address(), deadline);
      out.println("DISNI-CHECK client connected " + endpoint.getSrcAddr() + " -> " + endpoint.getDstAddr());
      endpoint.await(WC_RECV, deadline);
      ControlMessage descriptor = endpoint.receivedControl().expect(ControlMessage.DESCRIPTOR);
      ByteBuffer target = ByteBuffer.allocateDirect(descriptor.length());
      IbvMr local = endpoint.register(target);

      long started = System.nanoTime();
      endpoint.post(List.of(readRequest(10, descriptor, 0, local, 0, descriptor.length())));
      endpoint.await(WC_RDMA_READ, deadline);
      long elapsed = System.nanoTime() - started;
      Pattern.verify(target, "single READ");
      out.printf("DISNI-CHECK client: one READ of %d bytes in %.3f ms%n", descriptor.length(), elapsed / 1e6);

      Pattern.clear(target);
      endpoint.post(batch(descriptor, local));
      for (int i = 0; i < BATCH; i++) {
        endpoint.await(WC_RDMA_READ, deadline);
      }
      Pattern.verify(target, "batched READs");
      out.println("DISNI-CHECK client: " + BATCH + " READs with 2 SGEs each in one post, all bytes verified");

      endpoint.sendControl(2, new ControlMessage(ControlMessage.DONE, 0, descriptor.length(), 0,
          Pattern.checksum(target)));
      endpoint.await(WC_SEND, deadline);
      endpoint.deregisterMemory(local);
      Endpoints.closeQuietly(endpoint::close);
    } finally {
      Endpoints.closeQuietly(group::close);
    }
  }

  /** BATCH requests, each reading one slice of the region into two halves of the target. */
  private static List<IbvSendWR> batch(ControlMessage descriptor, IbvMr local) {
    int slice = descriptor.length() / BATCH;
    List<IbvSendWR> requests = new ArrayList<>();
    for (int i = 0; i < BATCH; i++) {
      IbvSendWR wr = readRequest(100 + i, descriptor, (long) i * slice, local, (long) i * slice, slice / 2);
      IbvSge second = sge(local, (long) i * slice + slice / 2, slice / 2);
      LinkedList<IbvSge> sges = new LinkedList<>(wr.getSg_list());
      sges.add(second);
      wr.setSg_list(sges);
      requests.add(wr);
    }
    return requests;
  }

  private static IbvSendWR readRequest(long wrId, ControlMessage remote, long remoteOffset, IbvMr local,
      long localOffset, int length) {
    IbvSendWR wr = new IbvSendWR();
    wr.setWr_id(wrId);
    wr.setOpcode(IbvSendWR.IBV_WR_RDMA_READ);
    wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
    wr.getRdma().setRemote_addr(remote.address() + remoteOffset);
    wr.getRdma().setRkey(remote.rkey());
    LinkedList<IbvSge> sges = new LinkedList<>();
    sges.add(sge(local, localOffset, length));
    wr.setSg_list(sges);
    return wr;
  }

  private static IbvSge sge(IbvMr region, long offset, int length) {
    IbvSge sge = new IbvSge();
    sge.setAddr(region.getAddr() + offset);
    sge.setLength(length);
    sge.setLkey(region.getLkey());
    return sge;
  }
}
