package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.ibm.disni.util.MemBuf;
import com.ibm.disni.util.MemoryAllocation;
import com.ibm.disni.util.NetUtils;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.LinkedList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The record layouts compiled into libdisni.so agree with what DiSNI's Java classes
 * serialize and read. DiSNI's classes here are the class path copies, whose constants
 * NativeDispatcher never adjusted: they are DiSNI's own assumptions.
 */
class LayoutTest {

  private static DisniRuntime runtime;

  @BeforeAll
  static void load() {
    assumeTrue(Packaging.libraryPackaged(), Packaging.NOT_PACKAGED);
    assertTrue(DisniRuntime.isAvailable(), () -> "packaged but not loadable: " + DisniRuntime.unavailabilityCause());
    runtime = DisniRuntime.get();
  }

  private static int disni(String className, String field) {
    return Reflect.staticInt(Reflect.type(className), field);
  }

  @Test
  void sizesAndOffsetsMatchDisniConstants() {
    String sendWr = "com.ibm.disni.verbs.impl.NatIbvSendWR";
    assertEquals(disni(sendWr, "CSIZE"), runtime.layout("send_wr.size"));
    assertEquals(disni(sendWr, "WRID_OFFSET"), runtime.layout("send_wr.wr_id"));
    assertEquals(disni(sendWr, "SENDFLAGS_OFFSET"), runtime.layout("send_wr.send_flags"));
    assertEquals(disni(sendWr, "REMOTEADDR_OFFSET"), runtime.layout("send_wr.remote_addr"));
    assertEquals(disni(sendWr, "RKEY_OFFSET"), runtime.layout("send_wr.rkey"));
    assertEquals(disni("com.ibm.disni.verbs.impl.NatIbvSge", "CSIZE"), runtime.layout("sge.size"));
    assertEquals(disni("com.ibm.disni.verbs.impl.NatIbvRecvWR", "CSIZE"), runtime.layout("recv_wr.size"));
    assertEquals(disni("com.ibm.disni.verbs.IbvWC", "CSIZE"), runtime.layout("wc.size"));
    assertEquals(disni("com.ibm.disni.verbs.impl.SockAddrIn", "CSIZE"), runtime.layout("sockaddr.size"));
  }

  @Test
  void recordsPassedInPlaceHaveLibibverbsSizes() {
    assertEquals(runtime.layout("ibv_sge.size"), runtime.layout("sge.size"));
    assertEquals(runtime.layout("ibv_recv_wr.size"), runtime.layout("recv_wr.size"));
    assertEquals(runtime.layout("ibv_wc.size"), runtime.layout("wc.size"));
    assertTrue(runtime.layout("ibv_send_wr.size") >= runtime.layout("send_wr.size"));
  }

  @Test
  void unknownNamesAreReportedAsMinusOne() {
    assertEquals(-1, runtime.layout("no_such.field"));
  }

  @Test
  void completionWrittenAtNativeOffsetsIsReadBackByDisni() throws Throwable {
    ByteBuffer record = ByteBuffer.allocateDirect(runtime.layout("wc.size")).order(ByteOrder.nativeOrder());
    record.putLong(runtime.layout("wc.wr_id"), 0x1122334455667788L);
    record.putInt(runtime.layout("wc.status"), 0);
    record.putInt(runtime.layout("wc.opcode"), 2);
    record.putInt(runtime.layout("wc.vendor_err"), 17);
    record.putInt(runtime.layout("wc.byte_len"), 65536);
    record.putInt(runtime.layout("wc.imm_data"), 0x0a0b0c0d);
    record.putInt(runtime.layout("wc.qp_num"), 4242);
    record.putInt(runtime.layout("wc.src_qp"), 99);
    record.putInt(runtime.layout("wc.wc_flags"), 3);
    record.putShort(runtime.layout("wc.pkey_index"), (short) 5);
    record.putShort(runtime.layout("wc.slid"), (short) 6);
    record.put(runtime.layout("wc.sl"), (byte) 7);
    record.put(runtime.layout("wc.dlid_path_bits"), (byte) 8);

    Class<?> pollCall = Reflect.type("com.ibm.disni.verbs.impl.NatPollCqCall");
    IbvWC[] wcs = {new IbvWC()};
    Object call = Reflect.construct(pollCall,
        new Class<?>[] {Reflect.type("com.ibm.disni.verbs.impl.RdmaVerbsNat"),
            Reflect.type("com.ibm.disni.verbs.impl.NativeDispatcher"), MemoryAllocation.class,
            Reflect.type("com.ibm.disni.verbs.IbvCQ"), IbvWC[].class, int.class},
        null, null, MemoryAllocation.getInstance(), null, wcs, 1);
    IbvWC wc = wcs[0];
    Reflect.call(call, pollCall, "update", new Class<?>[] {IbvWC.class, ByteBuffer.class}, wc, record);

    assertEquals(0x1122334455667788L, wc.getWr_id());
    assertEquals(2, wc.getOpcode());
    assertEquals(17, wc.getVendor_err());
    assertEquals(65536, wc.getByte_len());
    assertEquals(0x0a0b0c0d, wc.getImm_data());
    assertEquals(4242, wc.getQp_num());
    assertEquals(99, wc.getSrc_qp());
    assertEquals(3, wc.getWc_flags());
    assertEquals(5, wc.getPkey_index());
    assertEquals(6, wc.getSlid());
    assertEquals(7, wc.getSl());
    assertEquals(8, wc.getDlid_path_bits());
  }

  @Test
  void socketAddressWrittenByDisniHasNetworkOrderPortAndAddress() throws Throwable {
    Class<?> sockAddr = Reflect.type("com.ibm.disni.verbs.impl.SockAddrIn");
    InetAddress ip = InetAddress.getByAddress(new byte[] {10, 77, 0, 1});
    short af = (short) Reflect.staticInt(sockAddr, "AF_INET");
    Object address = Reflect.construct(sockAddr, new Class<?>[] {short.class, int.class, short.class},
        af, NetUtils.getIntIPFromInetAddress(ip), NetUtils.hostToNetworkByteOrder((short) 19191));
    ByteBuffer record = ByteBuffer.allocateDirect(runtime.layout("sockaddr.size")).order(ByteOrder.nativeOrder());
    Reflect.call(address, sockAddr, "writeBack", new Class<?>[] {ByteBuffer.class}, record);

    assertEquals(2, record.getShort(runtime.layout("sockaddr.family")), "AF_INET in native order");
    ByteBuffer network = record.duplicate().order(ByteOrder.BIG_ENDIAN);
    assertEquals(19191, network.getShort(runtime.layout("sockaddr.port")) & 0xffff);
    int at = runtime.layout("sockaddr.addr");
    assertEquals(List.of((byte) 10, (byte) 77, (byte) 0, (byte) 1),
        List.of(record.get(at), record.get(at + 1), record.get(at + 2), record.get(at + 3)));
  }

  @Test
  void receiveRequestsSerializedByDisniHaveTheNativeLayout() throws Throwable {
    List<IbvRecvWR> requests = List.of(recv(11, 0x1000, 64, 7), recv(12, 0x2000, 128, 8));
    Class<?> postRecv = Reflect.type("com.ibm.disni.verbs.impl.NatPostRecvCall");
    Object call = Reflect.construct(postRecv,
        new Class<?>[] {Reflect.type("com.ibm.disni.verbs.impl.RdmaVerbsNat"),
            Reflect.type("com.ibm.disni.verbs.impl.NativeDispatcher"), MemoryAllocation.class,
            Reflect.type("com.ibm.disni.verbs.IbvQP"), List.class},
        null, null, MemoryAllocation.getInstance(), null, requests);
    MemBuf cmd = (MemBuf) Reflect.field(call, "cmd");
    ByteBuffer buffer = cmd.getBuffer().duplicate().order(ByteOrder.nativeOrder());
    long base = cmd.address();
    int size = runtime.layout("recv_wr.size");

    for (int i = 0; i < 2; i++) {
      int at = i * size;
      assertEquals(11 + i, buffer.getLong(at + runtime.layout("recv_wr.wr_id")));
      assertEquals(i == 0 ? base + size : 0, buffer.getLong(at + runtime.layout("recv_wr.next")));
      assertEquals(1, buffer.getInt(at + runtime.layout("recv_wr.num_sge")));
      long sgeAddress = buffer.getLong(at + runtime.layout("recv_wr.sg_list"));
      int sge = (int) (sgeAddress - base);
      assertEquals(2L * size + (long) i * runtime.layout("sge.size"), sge);
      assertEquals(0x1000L * (i + 1), buffer.getLong(sge + runtime.layout("sge.addr")));
      assertEquals(64 * (i + 1), buffer.getInt(sge + runtime.layout("sge.length")));
      assertEquals(7 + i, buffer.getInt(sge + runtime.layout("sge.lkey")));
    }
  }

  private static IbvRecvWR recv(long id, long address, int length, int lkey) {
    IbvSge sge = new IbvSge();
    sge.setAddr(address);
    sge.setLength(length);
    sge.setLkey(lkey);
    LinkedList<IbvSge> sges = new LinkedList<>(List.of(sge));
    IbvRecvWR wr = new IbvRecvWR();
    wr.setWr_id(id);
    wr.setSg_list(sges);
    wr.setNum_sge(1);
    return wr;
  }
}
