package io.sluice.transport.verbs.diag;

import java.io.IOException;
import java.nio.ByteBuffer;

/** The byte pattern {@link ReadCheck} serves and verifies: byte i is (i * 31 + 7) mod 256. */
final class Pattern {

  private Pattern() {}

  static byte at(int index) {
    return (byte) (index * 31 + 7);
  }

  static void fill(ByteBuffer buffer) {
    for (int i = 0; i < buffer.capacity(); i++) {
      buffer.put(i, at(i));
    }
  }

  static void clear(ByteBuffer buffer) {
    for (int i = 0; i < buffer.capacity(); i++) {
      buffer.put(i, (byte) 0);
    }
  }

  static void verify(ByteBuffer buffer, String what) throws IOException {
    for (int i = 0; i < buffer.capacity(); i++) {
      if (buffer.get(i) != at(i)) {
        throw new IOException(what + ": byte " + i + " is " + buffer.get(i) + ", expected " + at(i));
      }
    }
  }

  /** An order-sensitive checksum of the whole buffer (FNV-1a, 64 bit). */
  static long checksum(ByteBuffer buffer) {
    long hash = 0xcbf29ce484222325L;
    for (int i = 0; i < buffer.capacity(); i++) {
      hash ^= buffer.get(i) & 0xff;
      hash *= 0x100000001b3L;
    }
    return hash;
  }
}
