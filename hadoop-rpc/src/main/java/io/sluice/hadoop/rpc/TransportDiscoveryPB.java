package io.sluice.hadoop.rpc;

import io.sluice.hadoop.rpc.proto.DiscoveryProtos.TransportDiscoveryService;
import org.apache.hadoop.ipc.ProtocolInfo;

/**
 * The protocol a Sluice server adds to its TCP listener so that clients can learn where its
 * transport listens. Asked over the stock path, once per server address and client.
 */
@ProtocolInfo(protocolName = "io.sluice.hadoop.rpc.TransportDiscoveryPB", protocolVersion = 1)
public interface TransportDiscoveryPB extends TransportDiscoveryService.BlockingInterface {}
