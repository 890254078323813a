package io.sluice.transport.verbs.rc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.IbvWC;
import io.sluice.transport.PeerClosedException;
import io.sluice.transport.RegionRevokedException;
import io.sluice.transport.TransportException;
import org.junit.jupiter.api.Test;

class CompletionStatusTest {

  private static int status(IbvWC.IbvWcStatus s) {
    return s.ordinal();
  }

  @Test
  void remoteAccessErrorMeansTheRegionIsGone() {
    assertInstanceOf(RegionRevokedException.class,
        CompletionStatus.toException(status(IbvWC.IbvWcStatus.IBV_WC_REM_ACCESS_ERR), "peer"));
  }

  @Test
  void flushAndRetryExhaustionMeanTheConnectionIsGone() {
    assertInstanceOf(PeerClosedException.class,
        CompletionStatus.toException(status(IbvWC.IbvWcStatus.IBV_WC_WR_FLUSH_ERR), "peer"));
    assertInstanceOf(PeerClosedException.class,
        CompletionStatus.toException(status(IbvWC.IbvWcStatus.IBV_WC_RETRY_EXC_ERR), "peer"));
  }

  @Test
  void otherFailuresNameTheStatus() {
    TransportException e = CompletionStatus.toException(status(IbvWC.IbvWcStatus.IBV_WC_LOC_PROT_ERR), "peer");
    assertEquals(TransportException.class, e.getClass());
    assertTrue(e.getMessage().contains("IBV_WC_LOC_PROT_ERR"), e.getMessage());
    assertTrue(CompletionStatus.toException(999, "peer").getMessage().contains("status 999"));
  }

  @Test
  void readsMustHaveAPositiveLength() {
    assertThrows(IllegalArgumentException.class, () -> new RdmaRead(0x1000, 1, 0x2000, 2, 0));
  }
}
