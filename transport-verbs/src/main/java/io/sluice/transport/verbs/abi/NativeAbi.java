package io.sluice.transport.verbs.abi;

import java.io.IOException;

/**
 * Questions about the loaded libdisni.so itself: its JNI version, the sizes and offsets of
 * the records it exchanges with DiSNI's Java side, how it decodes DiSNI's send records,
 * and how many RDMA devices libibverbs sees. None of these needs an RDMA device.
 *
 * <p>The class must be defined by the loader that owns the library, so reach it through
 * {@link io.sluice.transport.verbs.nativelib.DisniRuntime}, which defines it there. Thread
 * safe: every method is a pure query.
 */
public final class NativeAbi {

  static {
    System.loadLibrary("disni");
  }

  /** Values per decoded work request in {@link #decodeSendWrs}, before its SGE triples. */
  public static final int DECODED_WR_FIELDS = 8;

  private NativeAbi() {}

  /** The JNI version DiSNI's NativeDispatcher expects the library to report. */
  public static int version() {
    return version0();
  }

  /**
   * The size or offset named {@code record.field} (for example {@code send_wr.rkey},
   * {@code wc.size}, {@code ibv_send_wr.size}) as compiled into the library, or -1 for an
   * unknown name.
   */
  public static int layout(String name) {
    return layout0(name);
  }

  /** The number of RDMA devices libibverbs lists, or a negative errno value. */
  public static int deviceCount() {
    return deviceCount0();
  }

  /**
   * Decodes the chain of DiSNI send records starting at {@code address} exactly as posting
   * them would, without posting. Per request the result holds wr_id, opcode, send_flags,
   * imm_data, num_sge, remote_addr, rkey and the index of the next request (-1 for none),
   * followed by addr, length and lkey of each scatter/gather entry.
   *
   * @throws IOException if the chain is malformed (the same error posting would raise)
   */
  public static long[] decodeSendWrs(long address) throws IOException {
    return decodeSendWrs0(address);
  }

  private static native int version0();

  private static native int layout0(String name);

  private static native int deviceCount0();

  private static native long[] decodeSendWrs0(long address) throws IOException;
}
