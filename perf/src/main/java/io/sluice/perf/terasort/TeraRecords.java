package io.sluice.perf.terasort;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.zip.CRC32C;

/**
 * The TeraSort record: 100 bytes, a 10-byte key and a 90-byte value, stored back to back in plain
 * files. Record {@code i} of a data set is a function of {@code i} alone: its key is 10 bytes of a
 * 64-bit mix of {@code i} (uniform over the key space), its value the row number in 20 ASCII
 * digits and 70 letters that follow from it. The checksum of a set of records is the count and the
 * wrapping sum of each record's CRC-32C, so it does not depend on order: a sorted output has the
 * checksum of its input exactly when it holds the same records. Stateless.
 */
final class TeraRecords {
  static final int KEY_BYTES = 10;
  static final int VALUE_BYTES = 90;
  static final int RECORD_BYTES = KEY_BYTES + VALUE_BYTES;

  private TeraRecords() {}

  /**
   * Count and order-independent sum of records' CRC-32C. Immutable. A class rather than a record
   * because Spark's Kryo serializer (task results) cannot build records.
   */
  static final class Checksum implements Serializable {
    private static final long serialVersionUID = 1L;
    static final Checksum EMPTY = new Checksum(0, 0);

    private final long count;
    private final long sum;

    Checksum(long count, long sum) {
      this.count = count;
      this.sum = sum;
    }

    long count() {
      return count;
    }

    long sum() {
      return sum;
    }

    Checksum plus(Checksum other) {
      return new Checksum(count + other.count, sum + other.sum);
    }

    Checksum plus(byte[] key, byte[] value) {
      CRC32C crc = new CRC32C();
      crc.update(key);
      crc.update(value);
      return new Checksum(count + 1, sum + crc.getValue());
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Checksum c && c.count == count && c.sum == sum;
    }

    @Override
    public int hashCode() {
      return Long.hashCode(count * 31 + sum);
    }

    @Override
    public String toString() {
      return count + " records, checksum " + Long.toHexString(sum);
    }
  }

  /** Writes record {@code i} into the two arrays. */
  static void fill(long i, byte[] key, byte[] value) {
    long a = mix(i);
    long b = mix(a ^ 0x5851F42D4C957F2DL);
    for (int k = 0; k < 8; k++) {
      key[k] = (byte) (a >>> (56 - 8 * k));
    }
    key[8] = (byte) (b >>> 56);
    key[9] = (byte) (b >>> 48);
    long n = i;
    for (int d = 19; d >= 0; d--) {
      value[d] = (byte) ('0' + n % 10);
      n /= 10;
    }
    for (int j = 20; j < VALUE_BYTES; j++) {
      value[j] = (byte) ('A' + (i + j) % 26);
    }
  }

  /** SplitMix64's finalizer: a bijection of longs whose outputs look uniform. */
  static long mix(long z) {
    z += 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** Unsigned lexicographic order of keys, the order TeraSort sorts by. */
  static int compareKeys(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b);
  }

  /** Writes records [first, end) to {@code file}; returns their checksum. */
  static Checksum writeRange(Path file, long first, long end) throws IOException {
    byte[] key = new byte[KEY_BYTES];
    byte[] value = new byte[VALUE_BYTES];
    Checksum sum = Checksum.EMPTY;
    try (Writer out = new Writer(file)) {
      for (long i = first; i < end; i++) {
        fill(i, key, value);
        out.write(key, value);
        sum = sum.plus(key, value);
      }
    }
    return sum;
  }

  /** A writer of records to one file. Not thread safe. */
  static final class Writer implements AutoCloseable {
    private final OutputStream out;

    Writer(Path file) throws IOException {
      Files.createDirectories(file.getParent());
      this.out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 20);
    }

    void write(byte[] key, byte[] value) throws IOException {
      if (key.length != KEY_BYTES || value.length != VALUE_BYTES) {
        throw new IllegalArgumentException("record of " + key.length + "+" + value.length + " bytes");
      }
      out.write(key);
      out.write(value);
    }

    @Override
    public void close() throws IOException {
      out.close();
    }
  }

  /**
   * The records of a file, read as they are consumed; each element is a fresh {key, value} pair.
   * The file is closed at its end. Not thread safe.
   */
  static Iterator<byte[][]> read(Path file) throws IOException {
    long size = Files.size(file);
    if (size % RECORD_BYTES != 0) {
      throw new IOException(file + " holds " + size + " bytes, not a whole number of " + RECORD_BYTES + "-byte records");
    }
    InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 20);
    return new Iterator<>() {
      private long left = size / RECORD_BYTES;
      private boolean closed;

      @Override
      public boolean hasNext() {
        if (left == 0 && !closed) {
          closed = true;
          try {
            in.close();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
        return left > 0;
      }

      @Override
      public byte[][] next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        byte[] key = new byte[KEY_BYTES];
        byte[] value = new byte[VALUE_BYTES];
        try {
          readFully(in, key);
          readFully(in, value);
        } catch (IOException e) {
          throw new UncheckedIOException("reading " + file, e);
        }
        left--;
        return new byte[][] {key, value};
      }
    };
  }

  private static void readFully(InputStream in, byte[] b) throws IOException {
    int off = 0;
    while (off < b.length) {
      int n = in.read(b, off, b.length - off);
      if (n < 0) {
        throw new EOFException();
      }
      off += n;
    }
  }
}
