package io.sluice.transport.verbs.diag;

import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.RdmaServerEndpoint;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * READs the device must refuse: with a wrong rkey, past the end of a region, and of a
 * region deregistered before the READ (what closing a registered region relies on). Each
 * must complete with an error status, promptly, and leave the JVM intact; one connection
 * per case because a failed READ moves the queue pair to the error state. Both sides run in
 * this JVM. Not thread safe; one run at a time.
 */
final class AccessFailureCheck {

  enum Case { WRONG_RKEY, PAST_END, DEREGISTERED }

  private static final int REGION = 64 * 1024;

  private AccessFailureCheck() {}

  /** Runs every case; returns the number that did not fail as they must. */
  static int run(InetSocketAddress address, long timeoutNanos, PrintStream out) throws IOException {
    long deadline = System.nanoTime() + timeoutNanos;
    ExecutorService serverThread = Executors.newSingleThreadExecutor();
    RdmaActiveEndpointGroup<CheckEndpoint> serverGroup = Endpoints.newGroup();
    RdmaActiveEndpointGroup<CheckEndpoint> clientGroup = Endpoints.newGroup();
    List<CheckEndpoint> served = new CopyOnWriteArrayList<>();
    try {
      RdmaServerEndpoint<CheckEndpoint> server = serverGroup.createServerEndpoint();
      Endpoints.bind(server, address);
      Future<?> serving = serverThread.submit(() -> {
        for (Case c : Case.values()) {
          served.add(serveOne(server, c == Case.DEREGISTERED, deadline));
        }
        return null;
      });
      int wrong = 0;
      for (Case c : Case.values()) {
        try {
          wrong += readOne(clientGroup, address, c, deadline, out) ? 0 : 1;
        } catch (IOException | RuntimeException e) {
          // Said here, with the case: the clean-up below must not be what a failure reports.
          out.printf("DISNI-CHECK failure case %s: %s%n", c, e);
          e.printStackTrace(out);
          return wrong + 1;
        }
      }
      Endpoints.awaitServerSide(serving, deadline - System.nanoTime());
      return wrong;
    } finally {
      serverThread.shutdownNow();
      served.forEach(endpoint -> Endpoints.closeQuietly(endpoint::close));
      Endpoints.closeQuietly(clientGroup::close);
      Endpoints.closeQuietly(serverGroup::close);
    }
  }

  /** Accepts one client and sends it a descriptor; the region is already gone if asked. */
  private static CheckEndpoint serveOne(RdmaServerEndpoint<CheckEndpoint> server, boolean deregister,
      long deadline) throws IOException {
    CheckEndpoint endpoint = Endpoints.accept(server, deadline);
    ByteBuffer data = ByteBuffer.allocateDirect(REGION);
    Pattern.fill(data);
    IbvMr region = endpoint.register(data);
    ControlMessage descriptor = new ControlMessage(ControlMessage.DESCRIPTOR, region.getAddr(), REGION,
        region.getRkey(), Pattern.checksum(data));
    if (deregister) {
      endpoint.deregisterMemory(region);
    }
    endpoint.sendControl(1, descriptor);
    endpoint.await(ReadCheck.WC_SEND, deadline);
    return endpoint;
  }

  /** Returns true if the READ of this case failed with an error completion as it must. */
  private static boolean readOne(RdmaActiveEndpointGroup<CheckEndpoint> group, InetSocketAddress address,
      Case c, long deadline, PrintStream out) throws IOException {
    CheckEndpoint endpoint = group.createEndpoint();
    try {
      Endpoints.connect(endpoint, address, deadline);
      endpoint.await(ReadCheck.WC_RECV, deadline);
      ControlMessage remote = endpoint.receivedControl().expect(ControlMessage.DESCRIPTOR);
      ByteBuffer target = ByteBuffer.allocateDirect(REGION);
      IbvMr local = endpoint.register(target);
      long remoteAddress = remote.address() + (c == Case.PAST_END ? REGION - 16 : 0);
      int rkey = c == Case.WRONG_RKEY ? remote.rkey() ^ 0x5a5a5a00 : remote.rkey();
      endpoint.post(List.of(read(remoteAddress, rkey, local, 64)));
      CheckEndpoint.Completion completion = endpoint.next(deadline);
      boolean refused = completion.status() != IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal();
      boolean untouched = target.get(0) == 0 && target.get(63) == 0;
      out.printf("DISNI-CHECK failure case %s: completion status %d (%s), destination %s%n", c,
          completion.status(), statusName(completion.status()), untouched ? "untouched" : "WRITTEN");
      return refused && untouched;
    } finally {
      Endpoints.closeQuietly(endpoint::close);
    }
  }

  private static IbvSendWR read(long remoteAddress, int rkey, IbvMr local, int length) {
    IbvSge sge = new IbvSge();
    sge.setAddr(local.getAddr());
    sge.setLength(length);
    sge.setLkey(local.getLkey());
    IbvSendWR wr = new IbvSendWR();
    wr.setWr_id(1);
    wr.setOpcode(IbvSendWR.IBV_WR_RDMA_READ);
    wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
    wr.getRdma().setRemote_addr(remoteAddress);
    wr.getRdma().setRkey(rkey);
    wr.setSg_list(new LinkedList<>(List.of(sge)));
    return wr;
  }

  static String statusName(int status) {
    IbvWC.IbvWcStatus[] all = IbvWC.IbvWcStatus.values();
    return status >= 0 && status < all.length ? all[status].name() : "unknown";
  }
}
