package io.sluice.transport.verbs.nativelib;

import com.ibm.disni.RdmaEndpoint;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.SVCRegMr;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Registrations for {@link ShippedClassesTest} to scan, one way of granting (or not granting) a
 * peer write access per class. Never run: only their bytecode is read.
 */
final class RegistrationFixtures {
  private RegistrationFixtures() {}

  static final class EndpointDefault {
    SVCRegMr register(RdmaEndpoint endpoint, ByteBuffer buffer) throws IOException {
      return endpoint.registerMemory(buffer);
    }
  }

  static final class WriteField {
    SVCRegMr register(IbvPd pd, ByteBuffer buffer) throws IOException {
      return pd.regMr(buffer, IbvMr.IBV_ACCESS_REMOTE_READ | IbvMr.IBV_ACCESS_REMOTE_WRITE);
    }
  }

  static final class WriteThroughHelper {
    private static final int REMOTE_READ = 4;
    private static final int REMOTE_WRITE = 2;

    SVCRegMr register(IbvPd pd, ByteBuffer buffer, boolean peerWrites) throws IOException {
      return registerWith(pd, buffer, peerWrites ? REMOTE_READ | REMOTE_WRITE : REMOTE_READ);
    }

    private SVCRegMr registerWith(IbvPd pd, ByteBuffer buffer, int access) throws IOException {
      return pd.regMr(buffer, access);
    }
  }

  static final class PublicAccess {
    public SVCRegMr register(IbvPd pd, ByteBuffer buffer, int access) throws IOException {
      return pd.regMr(buffer, access);
    }
  }

  static final class ComputedAccess {
    private int extra;

    SVCRegMr register(IbvPd pd, ByteBuffer buffer) throws IOException {
      return pd.regMr(buffer, 4 + extra);
    }
  }

  /** The node's way: remote READ for shared buffers, local write for landing buffers. */
  static final class ReadOnly {
    private static final int LOCAL_WRITE = 1;
    private static final int REMOTE_READ = 4;

    SVCRegMr register(IbvPd pd, ByteBuffer buffer) throws IOException {
      return registerWith(pd, buffer, buffer.isReadOnly() ? REMOTE_READ : REMOTE_READ | LOCAL_WRITE);
    }

    SVCRegMr registerLocal(IbvPd pd, ByteBuffer buffer) throws IOException {
      return registerWith(pd, buffer, LOCAL_WRITE);
    }

    private SVCRegMr registerWith(IbvPd pd, ByteBuffer buffer, long ignored, int access) throws IOException {
      return pd.regMr(buffer, access);
    }

    private SVCRegMr registerWith(IbvPd pd, ByteBuffer buffer, int access) throws IOException {
      return registerWith(pd, buffer, 0L, access);
    }
  }
}
