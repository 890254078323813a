package io.sluice.hadoop.rpc;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EchoTestService;
import org.apache.hadoop.ipc.ProtocolInfo;

/** The test protocol, as a Hadoop protobuf protocol interface. */
@ProtocolInfo(protocolName = "io.sluice.hadoop.rpc.EchoTestPB", protocolVersion = 1)
public interface EchoTestPB extends EchoTestService.BlockingInterface {}
