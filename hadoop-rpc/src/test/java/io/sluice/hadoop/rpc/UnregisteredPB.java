package io.sluice.hadoop.rpc;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EchoTestService;
import org.apache.hadoop.ipc.ProtocolInfo;

/** A protocol no test server registers. */
@ProtocolInfo(protocolName = "io.sluice.hadoop.rpc.UnregisteredPB", protocolVersion = 1)
public interface UnregisteredPB extends EchoTestService.BlockingInterface {}
