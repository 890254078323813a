package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** DiSNI, defined by the runtime's loader, binds to the project's library without flags. */
class DisniRuntimeTest {

  private static DisniRuntime runtime;

  @BeforeAll
  static void load() {
    runtime = Packaging.loadedRuntime();
  }

  @Test
  void runtimeIsOnePerJvm() {
    assertSame(runtime, DisniRuntime.get());
    assertTrue(DisniRuntime.unavailabilityCause().isEmpty());
  }

  @Test
  void disniIsDefinedByTheRuntimeLoaderAndTheLoadingMachineryIsShared() throws ClassNotFoundException {
    ClassLoader loader = runtime.classLoader();
    Class<?> dispatcher = Class.forName("com.ibm.disni.verbs.impl.NativeDispatcher", false, loader);
    assertSame(loader, dispatcher.getClassLoader());
    assertNotSame(Reflect.type("com.ibm.disni.verbs.impl.NativeDispatcher"), dispatcher);
    assertSame(DisniTask.class, Class.forName(DisniTask.class.getName(), false, loader));
    assertFalse(runtime.definesClass(DisniRuntime.class.getName()));
    assertFalse(runtime.definesClass("org.slf4j.Logger"));
  }

  @Test
  void nativeDispatcherLoadsAndAcceptsTheLibrarysVersionAndLayouts() throws Throwable {
    ClassLoader loader = runtime.classLoader();
    Class<?> dispatcher = Class.forName("com.ibm.disni.verbs.impl.NativeDispatcher", true, loader);
    Object instance = Reflect.construct(dispatcher, new Class<?>[0]);
    assertEquals(DisniRuntime.DISNI_JNI_VERSION,
        Reflect.call(instance, dispatcher, "_getVersion", new Class<?>[0]));
    // The constructor adopts the native value of every size it finds different; all match,
    // so the copies in the runtime loader still hold DiSNI's compiled-in values.
    String[][] constants = {
        {"com.ibm.disni.verbs.impl.NatIbvSendWR", "CSIZE"},
        {"com.ibm.disni.verbs.impl.NatIbvSendWR", "REMOTEADDR_OFFSET"},
        {"com.ibm.disni.verbs.impl.NatIbvSendWR", "RKEY_OFFSET"},
        {"com.ibm.disni.verbs.impl.NatIbvRecvWR", "CSIZE"},
        {"com.ibm.disni.verbs.impl.NatIbvSge", "CSIZE"},
        {"com.ibm.disni.verbs.IbvWC", "CSIZE"},
        {"com.ibm.disni.verbs.impl.SockAddrIn", "CSIZE"}};
    for (String[] constant : constants) {
      assertEquals(Reflect.staticInt(Reflect.type(constant[0]), constant[1]),
          Reflect.staticInt(Reflect.type(constant[0], loader), constant[1]), String.join(".", constant));
    }
  }

  @Test
  void openingAnEventChannelReachesLibrdmacm() throws Throwable {
    ClassLoader loader = runtime.classLoader();
    Class<?> channelType = Class.forName("com.ibm.disni.verbs.RdmaEventChannel", true, loader);
    if (runtime.deviceCount() <= 0) {
      // No RDMA in this kernel: the error must come from rdma_create_event_channel itself.
      IOException e = assertThrows(IOException.class,
          () -> Reflect.call(null, channelType, "createEventChannel", new Class<?>[0]));
      assertTrue(e.getMessage().contains("rdma_create_event_channel failed"), e.getMessage());
    } else {
      Object channel = Reflect.call(null, channelType, "createEventChannel", new Class<?>[0]);
      Reflect.call(channel, channelType, "destroyEventChannel", new Class<?>[0]);
    }
  }
}
