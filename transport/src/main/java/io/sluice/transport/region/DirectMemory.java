package io.sluice.transport.region;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;

/**
 * Frees direct and mapped buffers at a known moment instead of at the next GC, through {@code
 * sun.misc.Unsafe.invokeCleaner} (module jdk.unsupported, open to everyone: no JVM flags needed).
 * Only the owner of a buffer may free it, and only once no view of it is used again.
 */
public final class DirectMemory {
  private static final sun.misc.Unsafe UNSAFE = loadUnsafe();

  private DirectMemory() {}

  /** Unmaps or frees a direct buffer that was allocated or mapped by the caller. */
  public static void free(ByteBuffer buffer) {
    if (buffer != null && buffer.isDirect()) {
      UNSAFE.invokeCleaner(buffer);
    }
  }

  private static sun.misc.Unsafe loadUnsafe() {
    try {
      Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
      f.setAccessible(true);
      return (sun.misc.Unsafe) f.get(null);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
}
