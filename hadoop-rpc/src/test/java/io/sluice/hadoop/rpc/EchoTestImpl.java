package io.sluice.hadoop.rpc;

import io.sluice.hadoop.rpc.testproto.EchoTestProtos.CallContextProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EchoRequestProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EchoResponseProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.EmptyProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.FailFirstRequestProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.FailRequestProto;
import io.sluice.hadoop.rpc.testproto.EchoTestProtos.SleepRequestProto;
import java.io.IOException;
import java.net.InetAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.ipc.Server;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.thirdparty.protobuf.ByteString;
import org.apache.hadoop.thirdparty.protobuf.RpcController;
import org.apache.hadoop.thirdparty.protobuf.ServiceException;

/** The test protocol's server side. Thread safe. */
final class EchoTestImpl implements EchoTestPB {
  private final Map<String, Integer> attempts = new ConcurrentHashMap<>();

  @Override
  public EchoResponseProto echo(RpcController controller, EchoRequestProto request) {
    return EchoResponseProto.newBuilder().setPayload(request.getPayload()).build();
  }

  @Override
  public EmptyProto fail(RpcController controller, FailRequestProto request) throws ServiceException {
    if (request.getKind().equals("checked")) {
      throw new ServiceException(new EchoCheckedException(request.getMessage()));
    }
    throw new IllegalStateException(request.getMessage());
  }

  @Override
  public EmptyProto sleep(RpcController controller, SleepRequestProto request) throws ServiceException {
    try {
      Thread.sleep(request.getMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServiceException(e);
    }
    return EmptyProto.getDefaultInstance();
  }

  @Override
  public CallContextProto callContext(RpcController controller, EmptyProto request) {
    return context();
  }

  @Override
  public CallContextProto failFirst(RpcController controller, FailFirstRequestProto request) throws ServiceException {
    String id = java.util.HexFormat.of().formatHex(Server.getClientId()) + "/" + Server.getCallId();
    int seen = attempts.merge(id, 1, Integer::sum);
    if (seen <= request.getFailures()) {
      throw new ServiceException(new IOException("attempt " + seen + " fails on purpose"));
    }
    return context();
  }

  private static CallContextProto context() {
    CallContextProto.Builder b = CallContextProto.newBuilder()
        .setCallId(Server.getCallId())
        .setRetryCount(Server.getCallRetryCount())
        .setClientId(ByteString.copyFrom(Server.getClientId()))
        .setPath(Server.getCurCall().get().getProtocol())
        .setPriority(Server.getPriorityLevel());
    UserGroupInformation user = Server.getRemoteUser();
    if (user != null) {
      b.setRemoteUser(user.getShortUserName());
      if (user.getRealUser() != null) {
        b.setRealUser(user.getRealUser().getShortUserName());
      }
    }
    InetAddress address = Server.getRemoteIp();
    if (address != null) {
      b.setRemoteAddress(address.getHostAddress());
    }
    return b.build();
  }
}
