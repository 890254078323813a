package io.sluice.transport.verbs.rc;

import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.impl.NatObject;
import java.io.IOException;
import java.lang.reflect.Field;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The rdma_cm ids of one event channel. DiSNI's event channel keeps its ids in a plain
 * HashMap, written when an id is created (on any thread) and when an event brings a new id
 * (a connect request, on the thread reading events), and never shrunk. Here every creation,
 * every event retrieval and every destruction holds one lock, and a destroyed id leaves the
 * map, so entries are neither lost nor kept.
 *
 * <p>Thread safe. Event retrieval holds the lock while it waits, so callers of {@link #next}
 * pass short slices (a fair lock lets a creation in between slices).
 */
final class CmIds {
  private final RdmaEventChannel channel;
  private final ReentrantLock lock = new ReentrantLock(true);
  /** DiSNI's id map, keyed by the native id; guarded by lock. */
  private final Map<?, ?> idMap;

  CmIds(RdmaEventChannel channel) {
    this.channel = channel;
    this.idMap = idMapOf(channel);
  }

  private static Map<?, ?> idMapOf(RdmaEventChannel channel) {
    try {
      Field f = channel.getClass().getDeclaredField("idMap");
      f.setAccessible(true);
      return (Map<?, ?>) f.get(channel);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new IllegalStateException("DiSNI's event channel has no id map where DiSNI 2.1 keeps it", e);
    }
  }

  RdmaCmId create() throws IOException {
    lock.lock();
    try {
      return channel.createId(RdmaCm.RDMA_PS_TCP);
    } finally {
      lock.unlock();
    }
  }

  /** The next event, or null if none came within {@code timeoutMillis}. */
  RdmaCmEvent next(int timeoutMillis) throws IOException {
    lock.lock();
    try {
      return channel.getCmEvent(timeoutMillis);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Destroys the id (its queue pair must be gone) and forgets it.
   *
   * @throws IOException if rdma_destroy_id failed (the id is forgotten all the same: the
   *     channel will not report it again)
   */
  void destroy(RdmaCmId id) throws IOException {
    lock.lock();
    try {
      int rc;
      try {
        rc = id.destroyId();
      } finally {
        idMap.remove(((NatObject) id).getObjId());
      }
      if (rc < 0) {
        throw new IOException("rdma_destroy_id failed with errno " + -rc);
      }
    } finally {
      lock.unlock();
    }
  }

  /** How many ids DiSNI's channel holds. */
  int size() {
    lock.lock();
    try {
      return idMap.size();
    } finally {
      lock.unlock();
    }
  }
}
