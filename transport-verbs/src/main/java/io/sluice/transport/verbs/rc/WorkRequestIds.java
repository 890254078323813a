package io.sluice.transport.verbs.rc;

/**
 * The layout of a work request id: the slot that posted it in the low {@value #SLOT_BITS}
 * bits (the node routes a completion by it), and the slot's use in the high {@value
 * #GENERATION_BITS} bits. A slot is posted many times; each post on the send queue takes the
 * next generation, so a completion that belongs to an earlier use of the slot (a device that
 * reports it late, or after the slot was retired and posted again) is told apart from the one
 * the slot waits for, and ignored.
 *
 * <p>Slot numbers come from one counter per node and are never reused while the node lives
 * (2<sup>40</sup> slots is far more than a node builds); generations wrap, which is harmless
 * since only the newest few uses of a slot can have completions queued. Stateless.
 */
final class WorkRequestIds {
  static final int SLOT_BITS = 40;
  static final int GENERATION_BITS = Long.SIZE - SLOT_BITS;
  static final long SLOT_MASK = (1L << SLOT_BITS) - 1;
  static final int GENERATION_MASK = (1 << GENERATION_BITS) - 1;

  private WorkRequestIds() {}

  /** The id a slot posts with in its {@code generation}th use. */
  static long of(long slot, int generation) {
    if ((slot & ~SLOT_MASK) != 0) {
      throw new IllegalArgumentException("work request slot " + slot + " needs more than " + SLOT_BITS + " bits");
    }
    return ((long) (generation & GENERATION_MASK) << SLOT_BITS) | slot;
  }

  /** The slot a completion's id names. */
  static long slot(long wrId) {
    return wrId & SLOT_MASK;
  }

  /** The use of the slot a completion's id names. */
  static int generation(long wrId) {
    return (int) (wrId >>> SLOT_BITS);
  }

  /** The generation after {@code generation}, wrapping. */
  static int next(int generation) {
    return (generation + 1) & GENERATION_MASK;
  }
}
