package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.ibm.disni.util.MemBuf;
import com.ibm.disni.util.MemoryAllocation;
import java.io.IOException;
import java.nio.ByteOrder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A completion channel or rdma_cm event channel whose descriptor is broken must fail the wait
 * with an IOException, not look like a quiet channel (the caller would poll it forever). The
 * channels here are records whose descriptor is one no process has open (poll reports
 * POLLNVAL); no device is needed.
 */
class EventWaitFailureTest {
  /** A descriptor number far above any this JVM opens. */
  private static final int CLOSED_FD = 1 << 20;
  /** Offset of fd in struct ibv_comp_channel (after the context pointer) and in struct rdma_event_channel. */
  private static final int COMP_CHANNEL_FD = 8;
  private static final int CM_CHANNEL_FD = 0;

  private Object dispatcher;
  private Class<?> type;
  private MemBuf memory;

  @BeforeEach
  void load() throws Throwable {
    assumeTrue(Packaging.libraryPackaged(), Packaging.NOT_PACKAGED);
    ClassLoader loader = DisniRuntime.get().classLoader();
    type = Reflect.type("com.ibm.disni.verbs.impl.NativeDispatcher", loader);
    dispatcher = Reflect.construct(type, new Class<?>[0]);
    memory = MemoryAllocation.getInstance().allocate(64);
  }

  @AfterEach
  void free() {
    if (memory != null) {
      memory.free();
    }
  }

  @Test
  void brokenCompletionChannelIsAnError() {
    memory.getBuffer().order(ByteOrder.nativeOrder()).putInt(COMP_CHANNEL_FD, CLOSED_FD);
    IOException e = assertThrows(IOException.class, () -> Reflect.call(dispatcher, type, "_getCqEvent",
        new Class<?>[] {long.class, int.class}, memory.address(), 10));
    assertTrue(e.getMessage().contains("completion event"), e.getMessage());
  }

  @Test
  void brokenCmEventChannelIsAnError() {
    memory.getBuffer().order(ByteOrder.nativeOrder()).putInt(CM_CHANNEL_FD, CLOSED_FD);
    MemBuf ids = MemoryAllocation.getInstance().allocate(16);
    try {
      IOException e = assertThrows(IOException.class, () -> Reflect.call(dispatcher, type, "_getCmEvent",
          new Class<?>[] {long.class, long.class, long.class, int.class},
          memory.address(), ids.address(), ids.address() + 8, 10));
      assertTrue(e.getMessage().contains("rdma_cm event"), e.getMessage());
    } finally {
      ids.free();
    }
  }
}
