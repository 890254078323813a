package io.sluice.examples.pipeline;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * The dense block of the feature table: a user's history embedded as {@value #DIMS} float32
 * values, the first {@value #ITEM_DIMS} the sum of hashed item embeddings over the items the user
 * saw before the cutoff, the last {@value #CATEGORY_DIMS} the same for their categories, each sum
 * divided by {@code 1024 * sqrt(history length)}. Component values are small integers from a hash
 * and the sums are integer sums, so the block is the same bit for bit in any order the shuffle
 * delivered the history. A history entry is {@code item_id * 8 + category_index}
 * ({@link Features#aggregate} builds them).
 *
 * <p>Immutable after construction and thread safe; one per executor JVM and item count
 * ({@link #forItems}), a table of {@code items * ITEM_DIMS} ints. In a DataFrame, {@link #column}
 * computes the block as an {@code array<float>} column.
 */
public final class HistoryEmbedding {
  public static final int DIMS = 256;
  public static final int ITEM_DIMS = 192;
  public static final int CATEGORY_DIMS = DIMS - ITEM_DIMS;
  static final int CATEGORIES = 8;
  private static HistoryEmbedding cached; // guarded by HistoryEmbedding.class

  private final long items;
  private final int[] itemTable;
  private final int[] categoryTable;

  private HistoryEmbedding(long items) {
    if (items < 1 || items * ITEM_DIMS > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("item count out of range for an embedding table: " + items);
    }
    this.items = items;
    this.itemTable = table(items, ITEM_DIMS, 0x51ed2701L);
    this.categoryTable = table(CATEGORIES, CATEGORY_DIMS, 0x7f4a7c15L);
  }

  /** This JVM's embedding for {@code items} items, built on first use. */
  public static synchronized HistoryEmbedding forItems(long items) {
    if (cached == null || cached.items != items) {
      cached = new HistoryEmbedding(items);
    }
    return cached;
  }

  /**
   * The block of {@code history} (an array of history entries) as a column of {@value #DIMS}
   * floats ({@code array<float>}, no nulls): a Java UDF over {@link #embed}.
   */
  public static Column column(Column history, long items) {
    return functions.udf(new Embed(items), DataTypes.createArrayType(DataTypes.FloatType, false)).apply(history);
  }

  /** The UDF: serializable, its table built once per executor JVM ({@link #forItems}). */
  private static final class Embed implements UDF1<scala.collection.Seq<Object>, float[]> {
    private static final long serialVersionUID = 1L;
    private final long items;
    private transient HistoryEmbedding embedding;

    Embed(long items) {
      this.items = items;
    }

    @Override
    public float[] call(scala.collection.Seq<Object> seen) {
      if (embedding == null) {
        embedding = forItems(items);
      }
      long[] history = new long[seen.size()];
      for (int h = 0; h < history.length; h++) {
        history[h] = ((Number) seen.apply(h)).longValue();
      }
      float[] out = new float[DIMS]; // the row keeps it
      embedding.embed(history, history.length, new int[DIMS], out);
      return out;
    }
  }

  private static int[] table(long rows, int dims, long salt) {
    int[] t = new int[(int) (rows * dims)];
    for (int i = 0; i < t.length; i++) {
      t[i] = (int) (mix(salt + i) >>> 53) - 1024; // 11 bits: [-1024, 1023]
    }
    return t;
  }

  /**
   * Embeds one history ({@code n} entries of {@code history}) into {@code out[0..DIMS)};
   * {@code acc} is scratch of {@value #DIMS} ints.
   */
  public void embed(long[] history, int n, int[] acc, float[] out) {
    java.util.Arrays.fill(acc, 0);
    for (int h = 0; h < n; h++) {
      long item = history[h] >>> 3;
      int category = (int) (history[h] & 7);
      if (item >= items) {
        throw new IllegalArgumentException("history names item " + item + ", the table has " + items);
      }
      int at = (int) item * ITEM_DIMS;
      for (int d = 0; d < ITEM_DIMS; d++) {
        acc[d] += itemTable[at + d];
      }
      int c = category * CATEGORY_DIMS;
      for (int d = 0; d < CATEGORY_DIMS; d++) {
        acc[ITEM_DIMS + d] += categoryTable[c + d];
      }
    }
    float scale = n == 0 ? 0f : (float) (1.0 / (1024.0 * Math.sqrt(n)));
    for (int d = 0; d < DIMS; d++) {
      out[d] = acc[d] * scale;
    }
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
    z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
    return z ^ (z >>> 33);
  }
}
