package io.sluice.transport.wire;

import io.sluice.transport.ProtocolException;

/**
 * The byte ids of the carrier's enumerations on the wire ({@link FrameType}, {@link ErrorCode}):
 * the constant declared i-th (from 0) travels as i + 1, so 0 is never a valid id. Declaration
 * order is therefore part of the wire protocol: constants are only ever appended. Stateless.
 */
final class WireIds {
  private WireIds() {}

  /** The id {@code constant} travels as. */
  static byte of(Enum<?> constant) {
    return (byte) (constant.ordinal() + 1);
  }

  /**
   * The constant of {@code values} (all of an enumeration's, in declaration order) that {@code id}
   * names.
   *
   * @throws ProtocolException naming {@code what} and the id, if it names none
   */
  static <E extends Enum<E>> E decode(E[] values, byte id, String what) throws ProtocolException {
    int i = (id & 0xff) - 1;
    if (i < 0 || i >= values.length) {
      throw new ProtocolException("unknown " + what + " " + (id & 0xff));
    }
    return values[i];
  }
}
