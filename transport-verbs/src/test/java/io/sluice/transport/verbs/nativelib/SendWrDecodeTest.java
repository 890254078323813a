package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.ibm.disni.util.MemBuf;
import com.ibm.disni.util.MemoryAllocation;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.SVCPostSend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.LinkedList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Send work requests serialized by DiSNI's own NatPostSendCall decode, in the library,
 * into exactly the libibverbs requests that posting would submit.
 */
class SendWrDecodeTest {

  private static DisniRuntime runtime;

  @BeforeAll
  static void load() {
    assumeTrue(Packaging.libraryPackaged(), Packaging.NOT_PACKAGED);
    runtime = DisniRuntime.get();
  }

  /** A DiSNI post-send call built from {@code requests}, never executed. */
  private static SVCPostSend serialize(List<IbvSendWR> requests) throws Throwable {
    Class<?> postSend = Reflect.type("com.ibm.disni.verbs.impl.NatPostSendCall");
    return (SVCPostSend) Reflect.construct(postSend,
        new Class<?>[] {Reflect.type("com.ibm.disni.verbs.impl.RdmaVerbsNat"),
            Reflect.type("com.ibm.disni.verbs.impl.NativeDispatcher"), MemoryAllocation.class,
            Reflect.type("com.ibm.disni.verbs.IbvQP"), List.class},
        null, null, MemoryAllocation.getInstance(), null, requests);
  }

  private static MemBuf buffer(SVCPostSend call) {
    return (MemBuf) Reflect.field(call, "cmd");
  }

  private static IbvSge sge(long address, int length, int lkey) {
    IbvSge sge = new IbvSge();
    sge.setAddr(address);
    sge.setLength(length);
    sge.setLkey(lkey);
    return sge;
  }

  private static IbvSendWR request(long id, int opcode, int flags, long remote, int rkey, IbvSge... sges) {
    IbvSendWR wr = new IbvSendWR();
    wr.setWr_id(id);
    wr.setOpcode(opcode);
    wr.setSend_flags(flags);
    wr.getRdma().setRemote_addr(remote);
    wr.getRdma().setRkey(rkey);
    wr.setSg_list(new LinkedList<>(List.of(sges)));
    return wr;
  }

  @Test
  void chainOfReadsAndSendsDecodesFieldForField() throws Throwable {
    IbvSendWR read = request(7, IbvSendWR.IBV_WR_RDMA_READ, IbvSendWR.IBV_SEND_SIGNALED,
        0x7f0000001000L, 0xabcd, sge(0x10000, 4096, 21), sge(0x20000, 512, 22));
    IbvSendWR send = request(8, IbvSendWR.IBV_WR_SEND_WITH_IMM, IbvSendWR.IBV_SEND_SIGNALED | IbvSendWR.IBV_SEND_FENCE,
        0, 0, sge(0x30000, 32, 23));
    send.setImm_data(0x01020304);
    SVCPostSend call = serialize(List.of(read, send));

    long[] decoded = runtime.decodeSendWrs(buffer(call).address());

    long[] expected = {
        7, IbvSendWR.IBV_WR_RDMA_READ, IbvSendWR.IBV_SEND_SIGNALED, 0, 2, 0x7f0000001000L, 0xabcd, 1,
        0x10000, 4096, 21, 0x20000, 512, 22,
        8, IbvSendWR.IBV_WR_SEND_WITH_IMM, IbvSendWR.IBV_SEND_SIGNALED | IbvSendWR.IBV_SEND_FENCE,
        0x01020304, 1, 0, 0, -1,
        0x30000, 32, 23};
    assertArrayEquals(expected, decoded);
  }

  @Test
  void inPlaceModificationsThroughDisniAreSeenByTheDecoder() throws Throwable {
    SVCPostSend call = serialize(List.of(
        request(1, IbvSendWR.IBV_WR_RDMA_READ, IbvSendWR.IBV_SEND_SIGNALED, 0x1000, 5, sge(0x5000, 64, 9))));
    SVCPostSend.SendWRMod mod = call.getWrMod(0);
    mod.setWr_id(99);
    mod.getRdmaMod().setRemote_addr(0x2000);
    mod.getRdmaMod().setRkey(6);
    mod.getSgeMod(0).setAddr(0x6000);
    mod.getSgeMod(0).setLength(128);
    mod.getSgeMod(0).setLkey(10);

    long[] decoded = runtime.decodeSendWrs(buffer(call).address());

    assertArrayEquals(new long[] {99, IbvSendWR.IBV_WR_RDMA_READ, IbvSendWR.IBV_SEND_SIGNALED, 0, 1, 0x2000, 6, -1,
        0x6000, 128, 10}, decoded);
  }

  @Test
  void atomicOpcodesAreRejectedBecauseDisniDoesNotSerializeTheirOperands() throws Throwable {
    SVCPostSend call = serialize(List.of(request(1, 5, 0, 0x1000, 1, sge(0x5000, 8, 9))));
    IOException e = assertThrows(IOException.class, () -> runtime.decodeSendWrs(buffer(call).address()));
    assertTrue(e.getMessage().contains("opcode"), e.getMessage());
  }

  @Test
  void absurdScatterGatherCountIsRejected() throws Throwable {
    IOException e = decodeAlteredRead(records -> records.putInt(runtime.layout("send_wr.num_sge"), 100_000));
    assertTrue(e.getMessage().contains("num_sge"), e.getMessage());
  }

  @Test
  void cyclicChainIsRejectedInsteadOfLoopingForever() throws Throwable {
    SVCPostSend call = serialize(List.of(
        request(1, IbvSendWR.IBV_WR_RDMA_READ, 0, 0x1000, 1, sge(0x5000, 8, 9)),
        request(2, IbvSendWR.IBV_WR_RDMA_READ, 0, 0x1000, 1, sge(0x5000, 8, 9))));
    MemBuf cmd = buffer(call);
    ByteBuffer records = cmd.getBuffer().duplicate().order(ByteOrder.nativeOrder());
    int second = runtime.layout("send_wr.size");
    records.putLong(second + runtime.layout("send_wr.next"), cmd.address());
    IOException e = assertThrows(IOException.class, () -> runtime.decodeSendWrs(cmd.address()));
    assertTrue(e.getMessage().contains("too many"), e.getMessage());
  }

  @Test
  void requestWithoutScatterGatherListIsRejected() throws Throwable {
    decodeAlteredRead(records -> records.putLong(runtime.layout("send_wr.sg_list"), 0));
  }

  /** Serializes one READ, lets {@code alter} change its record in place, and expects decoding to fail. */
  private IOException decodeAlteredRead(Consumer<ByteBuffer> alter) throws Throwable {
    SVCPostSend call = serialize(List.of(
        request(1, IbvSendWR.IBV_WR_RDMA_READ, 0, 0x1000, 1, sge(0x5000, 8, 9))));
    alter.accept(buffer(call).getBuffer().duplicate().order(ByteOrder.nativeOrder()));
    return assertThrows(IOException.class, () -> runtime.decodeSendWrs(buffer(call).address()));
  }

  @Test
  void emptyChainDecodesToNothing() throws IOException {
    assertEquals(0, runtime.decodeSendWrs(0).length);
  }

  @Test
  void theMalformedRequestIsNamedByItsIndex() throws Throwable {
    SVCPostSend call = serialize(List.of(
        request(1, IbvSendWR.IBV_WR_RDMA_READ, 0, 0x1000, 1, sge(0x5000, 8, 9)),
        request(2, IbvSendWR.IBV_WR_RDMA_READ, 0, 0x1000, 1, sge(0x5000, 8, 9)),
        request(3, 5, 0, 0x1000, 1, sge(0x5000, 8, 9))));
    IOException e = assertThrows(IOException.class, () -> runtime.decodeSendWrs(buffer(call).address()));
    assertTrue(e.getMessage().contains("work request 2"), e.getMessage());
  }

  @Test
  void chainsLongerThanTheStackBufferDecodeInOrder() throws Throwable {
    List<IbvSendWR> requests = new java.util.ArrayList<>();
    for (int i = 0; i < 40; i++) {
      requests.add(request(100 + i, IbvSendWR.IBV_WR_RDMA_READ, 0, 0x1000L * i, i, sge(0x5000, 8, 9)));
    }
    long[] decoded = runtime.decodeSendWrs(buffer(serialize(requests)).address());

    int perRequest = 8 + 3;
    assertEquals(40 * perRequest, decoded.length);
    for (int i = 0; i < 40; i++) {
      assertEquals(100 + i, decoded[i * perRequest], "wr_id of request " + i);
      assertEquals(0x1000L * i, decoded[i * perRequest + 5], "remote address of request " + i);
      assertEquals(i == 39 ? -1 : i + 1, decoded[i * perRequest + 7], "next of request " + i);
    }
  }
}
