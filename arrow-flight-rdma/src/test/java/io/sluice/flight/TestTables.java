package io.sluice.flight;

import io.sluice.flight.table.FlightTable;
import io.sluice.transport.TransportException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Deterministic tables for the tests: every Arrow type the examples use (ints, floats, decimals,
 * strings, large strings, lists, structs, nulls, dictionary-encoded strings, timestamps), and a
 * way to render what a reader saw so two paths can be compared exactly.
 */
public final class TestTables {
  private static final String[] CITIES = {"Lisbon", "Oslo", "Quito", "Hanoi", "Perth"};
  static final long CITY_DICTIONARY = 7L;

  private TestTables() {}

  /** The schema of {@link #mixed}: the city column is dictionary-encoded (int32 indices). */
  public static Schema mixedSchema() {
    Field list = new Field("tags", FieldType.nullable(new ArrowType.List()),
        List.of(Field.nullable("item", new ArrowType.Int(32, true))));
    Field struct = new Field("point", FieldType.nullable(ArrowType.Struct.INSTANCE), List.of(
        Field.nullable("x", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
        Field.nullable("label", ArrowType.Utf8.INSTANCE)));
    return new Schema(List.of(
        Field.nullable("id", new ArrowType.Int(64, true)),
        Field.nullable("score", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
        Field.nullable("amount", new ArrowType.Decimal(18, 4, 128)),
        Field.nullable("name", ArrowType.Utf8.INSTANCE),
        Field.nullable("note", ArrowType.LargeUtf8.INSTANCE),
        new Field("city", new FieldType(true, new ArrowType.Int(32, true),
            new DictionaryEncoding(CITY_DICTIONARY, false, new ArrowType.Int(32, true))), null),
        Field.nullable("at", new ArrowType.Timestamp(TimeUnit.MICROSECOND, "UTC")),
        list, struct));
  }

  /** The city dictionary, owned by the caller. */
  public static DictionaryProvider.MapDictionaryProvider cities(BufferAllocator allocator) {
    VarCharVector v = new VarCharVector("city-values", allocator);
    v.allocateNew();
    for (int i = 0; i < CITIES.length; i++) {
      v.setSafe(i, CITIES[i].getBytes(StandardCharsets.UTF_8));
    }
    v.setValueCount(CITIES.length);
    DictionaryProvider.MapDictionaryProvider p = new DictionaryProvider.MapDictionaryProvider();
    p.put(new Dictionary(v, new DictionaryEncoding(CITY_DICTIONARY, false, new ArrowType.Int(32, true))));
    return p;
  }

  /** Fills {@code root} (of {@link #mixedSchema}) with rows [start, start+rows); every 7th value is null. */
  public static void fillMixed(VectorSchemaRoot root, long start, int rows) {
    root.allocateNew();
    BigIntVector id = (BigIntVector) root.getVector("id");
    Float8Vector score = (Float8Vector) root.getVector("score");
    DecimalVector amount = (DecimalVector) root.getVector("amount");
    VarCharVector name = (VarCharVector) root.getVector("name");
    LargeVarCharVector note = (LargeVarCharVector) root.getVector("note");
    IntVector city = (IntVector) root.getVector("city");
    TimeStampMicroTZVector at = (TimeStampMicroTZVector) root.getVector("at");
    ListVector tags = (ListVector) root.getVector("tags");
    StructVector point = (StructVector) root.getVector("point");
    Float8Vector px = point.getChild("x", Float8Vector.class);
    VarCharVector plabel = point.getChild("label", VarCharVector.class);
    UnionListWriter w = tags.getWriter();
    for (int i = 0; i < rows; i++) {
      long r = start + i;
      boolean isNull = r % 7 == 3;
      id.setSafe(i, r);
      if (isNull) {
        score.setNull(i);
        amount.setNull(i);
        name.setNull(i);
        note.setNull(i);
        city.setNull(i);
        at.setNull(i);
        point.setNull(i);
      } else {
        score.setSafe(i, r * 0.25 - 3);
        amount.setSafe(i, BigDecimal.valueOf(r * 10_007 % 1_000_000, 4));
        name.setSafe(i, ("user-" + r).getBytes(StandardCharsets.UTF_8));
        note.setSafe(i, ("note " + "x".repeat((int) (r % 13)) + r).getBytes(StandardCharsets.UTF_8));
        city.setSafe(i, (int) (r % CITIES.length));
        at.setSafe(i, 1_700_000_000_000_000L + r * 1_000);
        point.setIndexDefined(i);
        px.setSafe(i, r / 3.0);
        plabel.setSafe(i, ("p" + r % 11).getBytes(StandardCharsets.UTF_8));
      }
      w.setPosition(i);
      w.startList();
      for (int k = 0; k < r % 4; k++) {
        w.writeInt((int) (r * k));
      }
      w.endList();
    }
    w.setValueCount(rows);
    root.setRowCount(rows);
  }

  /** A table of {@code batches} batches of {@code rows} rows of {@link #mixedSchema}. */
  public static FlightTable mixed(BufferAllocator allocator, int batches, int rows, CompressionUtil.CodecType codec) {
    try (DictionaryProvider.MapDictionaryProvider dictionaries = cities(allocator);
         VectorSchemaRoot root = VectorSchemaRoot.create(mixedSchema(), allocator);
         FlightTable.Builder b = FlightTable.builder(mixedSchema(), dictionaries).compression(codec)) {
      for (int k = 0; k < batches; k++) {
        fillMixed(root, (long) k * rows, rows);
        b.add(root);
      }
      return b.build();
    }
  }

  /**
   * Publishes {@link #mixed} as {@code name} on {@code server} and returns what {@link #render}
   * prints for it, so a test compares what it reads with what it published.
   */
  public static String publishMixed(SluiceFlightServer server, BufferAllocator allocator, String name, int batches,
      int rows, CompressionUtil.CodecType codec) throws TransportException {
    server.publish(name, mixed(allocator, batches, rows, codec));
    return expectedMixed(allocator, batches, rows);
  }

  /** A numeric table: {@code batches} batches of {@code rows} rows of two longs and a double. */
  public static FlightTable numeric(BufferAllocator allocator, int batches, int rows) {
    Schema schema = new Schema(List.of(
        Field.nullable("a", new ArrowType.Int(64, true)),
        Field.nullable("b", new ArrowType.Int(64, true)),
        Field.nullable("c", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE))));
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
         FlightTable.Builder b = FlightTable.builder(schema, new DictionaryProvider.MapDictionaryProvider())) {
      for (int k = 0; k < batches; k++) {
        root.allocateNew();
        BigIntVector a = (BigIntVector) root.getVector("a");
        BigIntVector bb = (BigIntVector) root.getVector("b");
        Float8Vector c = (Float8Vector) root.getVector("c");
        for (int i = 0; i < rows; i++) {
          long r = (long) k * rows + i;
          a.setSafe(i, r);
          bb.setSafe(i, r * 31 + 7);
          c.setSafe(i, r * 0.5);
        }
        root.setRowCount(rows);
        b.add(root);
      }
      return b.build();
    }
  }

  /**
   * Everything a reader saw, as text: each batch's rows (dictionary columns decoded) in order.
   * Two paths that deliver the same table render the same text.
   */
  public static String render(TableReader reader) {
    StringBuilder out = new StringBuilder();
    out.append(reader.getSchema()).append('\n');
    while (reader.next()) {
      out.append(renderBatch(reader.getRoot(), reader.getDictionaryProvider()));
    }
    return out.toString();
  }

  static String renderBatch(VectorSchemaRoot root, DictionaryProvider dictionaries) {
    StringBuilder out = new StringBuilder("batch ").append(root.getRowCount()).append('\n');
    List<FieldVector> vectors = new ArrayList<>(root.getFieldVectors());
    for (int row = 0; row < root.getRowCount(); row++) {
      for (FieldVector v : vectors) {
        DictionaryEncoding enc = v.getField().getDictionary();
        Object value = v.getObject(row);
        if (enc != null && value != null) {
          value = dictionaries.lookup(enc.getId()).getVector().getObject(((Number) value).intValue());
        }
        out.append(value).append('\t');
      }
      out.append('\n');
    }
    return out.toString();
  }

  /** What {@link #render} prints for the table {@link #mixed} builds, computed directly. */
  public static String expectedMixed(BufferAllocator allocator, int batches, int rows) {
    StringBuilder out = new StringBuilder();
    out.append(mixedSchema()).append('\n');
    try (DictionaryProvider.MapDictionaryProvider dictionaries = cities(allocator);
         VectorSchemaRoot root = VectorSchemaRoot.create(mixedSchema(), allocator)) {
      for (int k = 0; k < batches; k++) {
        fillMixed(root, (long) k * rows, rows);
        out.append(renderBatch(root, dictionaries));
      }
    }
    return out.toString();
  }

  static Map<String, String> secret(String value) {
    return Map.of("sluice.transport.secret", value);
  }
}
