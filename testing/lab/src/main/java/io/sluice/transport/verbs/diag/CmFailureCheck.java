package io.sluice.transport.verbs.diag;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.RdmaEventChannel;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Connection attempts that must fail, through DiSNI's low-level rdma_cm API and the
 * library's event delivery: connecting to a port nobody listens on, and to a listener that
 * refuses by destroying the request's id without accepting. Each must end in an error
 * event (REJECTED, UNREACHABLE or CONNECT_ERROR) before the deadline. Both sides run in
 * this JVM. Not thread safe; one run at a time.
 */
final class CmFailureCheck {

  private static final int RESOLVE_TIMEOUT_MS = 2000;
  private static final byte QPT_RC = 2;
  private static final Set<Integer> REFUSALS = Set.of(
      RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED.ordinal(),
      RdmaCmEvent.EventType.RDMA_CM_EVENT_UNREACHABLE.ordinal(),
      RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_ERROR.ordinal());

  private CmFailureCheck() {}

  /** Runs both cases; returns the number that did not end as they must. */
  static int run(InetSocketAddress listenerAddress, InetSocketAddress unusedAddress, long timeoutNanos,
      PrintStream out) throws IOException {
    long deadline = System.nanoTime() + timeoutNanos;
    int wrong = 0;
    int event = connectAndWait(unusedAddress, deadline);
    out.printf("DISNI-CHECK failure case NO_LISTENER: event %s%n", eventName(event));
    wrong += REFUSALS.contains(event) ? 0 : 1;

    ExecutorService listener = Executors.newSingleThreadExecutor();
    RdmaEventChannel channel = RdmaEventChannel.createEventChannel();
    try {
      RdmaCmId listenId = channel.createId(RdmaCm.RDMA_PS_TCP);
      listenId.bindAddr(listenerAddress);
      listenId.listen(4);
      Future<Boolean> refused = listener.submit(() -> refuseOne(channel, deadline));
      event = connectAndWait(listenerAddress, deadline);
      out.printf("DISNI-CHECK failure case REFUSED: event %s%n", eventName(event));
      wrong += REFUSALS.contains(event) && refused.get(remaining(deadline), TimeUnit.NANOSECONDS) ? 0 : 1;
      listenId.destroyId();
    } catch (ExecutionException e) {
      throw new IOException("listener failed", e.getCause());
    } catch (TimeoutException e) {
      throw new IOException("listener saw no connect request in time", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    } finally {
      listener.shutdownNow();
      channel.destroyEventChannel();
    }
    return wrong;
  }

  /** Waits for one connect request and refuses it by destroying its id. */
  private static boolean refuseOne(RdmaEventChannel channel, long deadline) throws IOException {
    RdmaCmEvent event = nextEvent(channel, deadline);
    if (event == null || event.getEvent() != RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST.ordinal()) {
      return false;
    }
    event.getConnIdPriv().destroyId();
    return true;
  }

  /**
   * Resolves, creates a queue pair and connects to {@code address}; returns the event that
   * ends the attempt, or -1 if none came before the deadline.
   */
  private static int connectAndWait(InetSocketAddress address, long deadline) throws IOException {
    RdmaEventChannel channel = RdmaEventChannel.createEventChannel();
    RdmaCmId id = channel.createId(RdmaCm.RDMA_PS_TCP);
    IbvPd pd = null;
    IbvCompChannel completions = null;
    IbvCQ cq = null;
    try {
      id.resolveAddr(null, address, RESOLVE_TIMEOUT_MS);
      expect(nextEvent(channel, deadline), RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED);
      id.resolveRoute(RESOLVE_TIMEOUT_MS);
      expect(nextEvent(channel, deadline), RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED);
      IbvContext context = id.getVerbs();
      pd = context.allocPd();
      completions = context.createCompChannel();
      cq = context.createCQ(completions, 16, 0);
      IbvQPInitAttr attr = new IbvQPInitAttr();
      attr.setQp_type(QPT_RC);
      attr.setSend_cq(cq);
      attr.setRecv_cq(cq);
      attr.cap().setMax_send_wr(4);
      attr.cap().setMax_recv_wr(4);
      attr.cap().setMax_send_sge(1);
      attr.cap().setMax_recv_sge(1);
      id.createQP(pd, attr);
      RdmaConnParam param = new RdmaConnParam();
      param.setRetry_count((byte) 2);
      id.connect(param);
      RdmaCmEvent event = nextEvent(channel, deadline);
      return event == null ? -1 : event.getEvent();
    } finally {
      if (id.getQp() != null) {
        id.destroyQP();
      }
      id.destroyId();
      if (cq != null) {
        cq.destroyCQ();
      }
      if (completions != null) {
        completions.destroyCompChannel();
      }
      if (pd != null) {
        deallocate(pd);
      }
      channel.destroyEventChannel();
    }
  }

  private static void deallocate(IbvPd pd) throws IOException {
    try {
      pd.deallocPd();
    } catch (IOException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IOException("deallocPd failed", e); // DiSNI declares `throws Exception`
    }
  }

  private static void expect(RdmaCmEvent event, RdmaCmEvent.EventType type) throws IOException {
    if (event == null || event.getEvent() != type.ordinal()) {
      throw new IOException("expected " + type + ", got " + (event == null ? "nothing" : eventName(event.getEvent())));
    }
  }

  /** The next event on the channel, or null at the deadline; polls in short slices. */
  private static RdmaCmEvent nextEvent(RdmaEventChannel channel, long deadline) throws IOException {
    while (remaining(deadline) > 0) {
      int slice = (int) Math.min(200, Math.max(1, TimeUnit.NANOSECONDS.toMillis(remaining(deadline))));
      RdmaCmEvent event = channel.getCmEvent(slice);
      if (event != null) {
        event.ackEvent();
        return event;
      }
    }
    return null;
  }

  private static long remaining(long deadline) {
    return Math.max(0, deadline - System.nanoTime());
  }

  static String eventName(int event) {
    RdmaCmEvent.EventType[] all = RdmaCmEvent.EventType.values();
    return event >= 0 && event < all.length ? all[event].name() : "none (" + event + ")";
  }
}
