package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.RdmaCmId;

/**
 * Options of an rdma_cm id that DiSNI 2.1 cannot set (the library's own entry point beside
 * DiSNI's; rdma_set_option). Stateless; thread safe.
 */
final class CmOptions {

  static {
    System.loadLibrary("disni");
  }

  private CmOptions() {}

  /**
   * Sets the local ACK timeout of the queue pair {@code id} will connect or accept to
   * 4.096 us x 2^{@code exponent}; before rdma_connect or rdma_accept. Returns 0, or the errno
   * the kernel or library refused it with.
   */
  static int setAckTimeout(RdmaCmId id, int exponent) {
    return setAckTimeout0(DeviceQuery.handle(id), exponent);
  }

  private static native int setAckTimeout0(long id, int exponent);
}
