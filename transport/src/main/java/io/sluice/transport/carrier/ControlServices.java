package io.sluice.transport.carrier;

import io.sluice.transport.wire.Frames;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The control services a carrier serves, each under its service id (1..255, chosen by its
 * provider). A CONTROL frame for an id nobody registered is answered with an ERROR frame of code
 * {@code ErrorCode.UNAVAILABLE}, so a peer can ask whether a data path is there. Immutable and
 * thread safe.
 */
public final class ControlServices {
  private static final ControlServices NONE = new ControlServices(Map.of());

  private final Map<Integer, ControlService> byId;

  private ControlServices(Map<Integer, ControlService> byId) {
    this.byId = byId;
  }

  /** No services: every CONTROL frame is refused. */
  public static ControlServices none() {
    return NONE;
  }

  /** Just {@code service} under {@code id}. */
  public static ControlServices of(int id, ControlService service) {
    return NONE.with(id, service);
  }

  /**
   * These services and {@code service} under {@code id}.
   *
   * @throws IllegalArgumentException for an id outside 1..255 or one already taken
   */
  public ControlServices with(int id, ControlService service) {
    Frames.checkServiceId(id);
    if (byId.containsKey(id)) {
      throw new IllegalArgumentException("control service id " + id + " is taken by " + byId.get(id));
    }
    Map<Integer, ControlService> m = new TreeMap<>(byId);
    m.put(id, service);
    return new ControlServices(Map.copyOf(m));
  }

  /** The service under {@code id}, if any. */
  public Optional<ControlService> get(int id) {
    return Optional.ofNullable(byId.get(id));
  }

  @Override
  public String toString() {
    return "ControlServices" + byId.keySet();
  }
}
