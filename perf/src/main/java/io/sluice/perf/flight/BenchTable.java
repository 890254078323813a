package io.sluice.perf.flight;

import io.sluice.flight.table.FlightTable;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The table every path of the Flight benchmark moves: numeric and string columns, about 69 body
 * bytes a row, built deterministically so the server JVM and the driver JVM hold the same rows
 * (the server serves it; the driver puts it and checks what it reads against its fingerprint).
 * Row {@code r} has {@code id = r}; strings are slices of a fixed alphabet whose lengths vary
 * with the row. Stateless.
 */
final class BenchTable {
  static final String ID = "id";
  static final String NAME = "name";
  private static final byte[] ALPHABET =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
          .getBytes(StandardCharsets.US_ASCII);

  private BenchTable() {}

  /** A built table, what a reader of all of it must see, and what {@link BodySum} makes of it. */
  record Built(FlightTable table, Fingerprint.Value fingerprint, BodySum.Value sum) implements AutoCloseable {
    @Override
    public void close() {
      table.close();
    }
  }

  static Schema schema() {
    return new Schema(List.of(
        Field.notNullable(ID, new ArrowType.Int(64, true)),
        Field.nullable("price", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
        Field.nullable("quantity", new ArrowType.Int(32, true)),
        Field.nullable("event_time", new ArrowType.Int(64, true)),
        Field.nullable(NAME, ArrowType.Utf8.INSTANCE),
        Field.nullable("category", ArrowType.Utf8.INSTANCE)));
  }

  /**
   * Builds batches of {@code batchRows} rows until their bodies hold at least {@code targetBytes};
   * the table's buffers belong to {@code allocator}.
   */
  static Built build(BufferAllocator allocator, long targetBytes, int batchRows) {
    Fingerprint fingerprint = new Fingerprint();
    BodySum sum = new BodySum();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema(), allocator);
         DictionaryProvider.MapDictionaryProvider none = new DictionaryProvider.MapDictionaryProvider();
         FlightTable.Builder builder = FlightTable.builder(schema(), none)) {
      long bytes = 0;
      long row = 0;
      while (bytes < targetBytes) {
        fill(root, row, batchRows);
        try (ArrowRecordBatch b = new VectorUnloader(root).getRecordBatch()) {
          bytes += b.computeBodyLength();
        }
        builder.add(root);
        fingerprint.add(root);
        sum.add(root);
        row += batchRows;
      }
      return new Built(builder.build(), fingerprint.value(), sum.value());
    }
  }

  /** Fills {@code root} with rows {@code [start, start + rows)}, in fresh buffers. */
  static void fill(VectorSchemaRoot root, long start, int rows) {
    BigIntVector id = (BigIntVector) root.getVector(ID);
    Float8Vector price = (Float8Vector) root.getVector("price");
    IntVector quantity = (IntVector) root.getVector("quantity");
    BigIntVector eventTime = (BigIntVector) root.getVector("event_time");
    VarCharVector name = (VarCharVector) root.getVector(NAME);
    VarCharVector category = (VarCharVector) root.getVector("category");
    id.allocateNew(rows);
    price.allocateNew(rows);
    quantity.allocateNew(rows);
    eventTime.allocateNew(rows);
    long nameBytes = 0;
    long categoryBytes = 0;
    for (int i = 0; i < rows; i++) {
      long m = mix(start + i);
      nameBytes += nameLength(m);
      categoryBytes += categoryLength(m);
    }
    // Exact sizes: the table then holds about its body bytes, not a worst case per row.
    name.allocateNew(nameBytes, rows);
    category.allocateNew(categoryBytes, rows);
    for (int i = 0; i < rows; i++) {
      long r = start + i;
      long m = mix(r);
      id.set(i, r);
      price.set(i, (r % 10_007) * 0.01);
      quantity.set(i, (int) (r % 1_000));
      eventTime.set(i, 1_700_000_000_000_000L + r * 1_000);
      name.set(i, ALPHABET, (int) (r & 63), nameLength(m));
      category.set(i, ALPHABET, (int) (r % 13), categoryLength(m));
    }
    root.setRowCount(rows);
  }

  /** 8 to 39 bytes. */
  private static int nameLength(long mixed) {
    return 8 + (int) (mixed & 31);
  }

  /** 4 to 12 bytes. */
  private static int categoryLength(long mixed) {
    return 4 + (int) ((mixed >>> 8) % 9);
  }

  /** A 64-bit mix of {@code v} (SplitMix64's finalizer). */
  static long mix(long v) {
    long z = v * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
