package io.sluice.examples.pipeline;

import static org.apache.spark.ml.functions.vector_to_array;
import static org.apache.spark.sql.functions.coalesce;
import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.collect_list;
import static org.apache.spark.sql.functions.countDistinct;
import static org.apache.spark.sql.functions.expr;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.sum;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.feature.OneHotEncoder;
import org.apache.spark.ml.feature.StandardScaler;
import org.apache.spark.ml.feature.StandardScalerModel;
import org.apache.spark.ml.feature.StringIndexer;
import org.apache.spark.ml.feature.VectorAssembler;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.storage.StorageLevel;

/**
 * Per-user features from raw events: the events joined with their items and users, aggregated
 * into counts and rates over 1, 7 and 30 day windows before the cutoff; country and device indexed
 * ({@code StringIndexer}) and one-hot encoded; everything assembled ({@code VectorAssembler}) and
 * standardised ({@code StandardScaler}); the label is whether the user buys in the 7 days after
 * the cutoff; each user's history (item and category of every event before the cutoff) is kept
 * for the dense block ({@link HistoryEmbedding}). {@link #transform} has columns {@code user_id},
 * {@code label}, the vector {@code scaled} and {@code history}; {@link #table} the columns the
 * trainer reads.
 *
 * <p>Bit for bit reproducible: aggregates are integer sums and counts (rates are divided per row),
 * and the ML stages are fitted on the rows in user order in one partition, so no floating-point
 * sum depends on the order in which a shuffle delivered its blocks. Stateless.
 */
public final class Features {
  /** Names of the numeric inputs, in feature order; the one-hot columns follow them. */
  public static final List<String> NUMERIC = List.of("clicks_1d", "clicks_7d", "clicks_30d", "purchases_7d",
      "purchases_30d", "spend_30d", "purchase_rate_30d", "avg_price_30d", "distinct_items_30d",
      "events_60d", "days_since_last", "account_age_days");

  private Features() {}

  /** The per-user aggregate before the ML stages; persisted, since the stages are fitted on it too. */
  public static Dataset<Row> aggregate(RawEvents raw) {
    Dataset<Row> events = raw.events().join(raw.items(), "item_id").join(raw.users(), "user_id");
    final long c = RawEvents.CUTOFF;
    final long d = RawEvents.DAY;
    Column past = col("ts").leq(c);
    Column in1 = past.and(col("ts").gt(c - d));
    Column in7 = past.and(col("ts").gt(c - 7 * d));
    Column in30 = past.and(col("ts").gt(c - 30 * d));
    Column buy = col("is_purchase");
    Dataset<Row> agg = events.groupBy("user_id", "country", "device", "signup_ts").agg(
        count(in1.and(org.apache.spark.sql.functions.not(buy))).as("clicks_1d"),
        count(in7.and(org.apache.spark.sql.functions.not(buy))).as("clicks_7d"),
        count(in30.and(org.apache.spark.sql.functions.not(buy))).as("clicks_30d"),
        count(in7.and(buy)).as("purchases_7d"),
        count(in30.and(buy)).as("purchases_30d"),
        sum(expr("CASE WHEN ts <= " + c + " AND ts > " + (c - 30 * d) + " AND is_purchase THEN price_cents ELSE 0 END"))
            .as("spend_cents_30d"),
        sum(expr("CASE WHEN ts <= " + c + " AND ts > " + (c - 30 * d) + " THEN price_cents ELSE 0 END"))
            .as("seen_cents_30d"),
        countDistinct(expr("CASE WHEN ts <= " + c + " AND ts > " + (c - 30 * d) + " THEN item_id END"))
            .as("distinct_items_30d"),
        count(past).as("events_60d"),
        max(expr("CASE WHEN ts <= " + c + " THEN ts END")).as("last_ts"),
        count(col("ts").gt(c).and(buy)).as("future_purchases"),
        collect_list(expr("CASE WHEN ts <= " + c + " THEN item_id * " + HistoryEmbedding.CATEGORIES
            + " + array_position(array(" + categories() + "), category) - 1 END")).as("history"));
    return agg.select(col("user_id"), col("country"), col("device"),
            col("clicks_1d").cast("double"), col("clicks_7d").cast("double"), col("clicks_30d").cast("double"),
            col("purchases_7d").cast("double"), col("purchases_30d").cast("double"),
            expr("spend_cents_30d / 100.0").cast("double").as("spend_30d"),
            expr("purchases_30d / (clicks_30d + purchases_30d + 1.0)").cast("double").as("purchase_rate_30d"),
            expr("seen_cents_30d / (100.0 * (clicks_30d + purchases_30d + 1.0))").cast("double").as("avg_price_30d"),
            col("distinct_items_30d").cast("double"), col("events_60d").cast("double"),
            coalesce(expr("(" + c + " - last_ts) / 86400.0"), lit(60.0)).cast("double").as("days_since_last"),
            expr("(" + c + " - signup_ts) / 86400.0").cast("double").as("account_age_days"),
            expr("CASE WHEN future_purchases > 0 THEN 1.0 ELSE 0.0 END").cast("double").as("label"),
            col("history"))
        .persist(StorageLevel.MEMORY_AND_DISK());
  }

  /** Fits the ML stages on {@code aggregate} in user order, in one partition. */
  public static PipelineModel fit(Dataset<Row> aggregate) {
    List<String> inputs = new ArrayList<>(NUMERIC);
    inputs.add("country_onehot");
    inputs.add("device_onehot");
    PipelineStage[] stages = {
        new StringIndexer().setInputCols(new String[] {"country", "device"})
            .setOutputCols(new String[] {"country_index", "device_index"}),
        new OneHotEncoder().setInputCols(new String[] {"country_index", "device_index"})
            .setOutputCols(new String[] {"country_onehot", "device_onehot"}),
        new VectorAssembler().setInputCols(inputs.toArray(String[]::new)).setOutputCol("assembled"),
        new StandardScaler().setInputCol("assembled").setOutputCol("scaled").setWithMean(true).setWithStd(true)};
    Dataset<Row> ordered = aggregate.orderBy("user_id").coalesce(1).persist(StorageLevel.MEMORY_AND_DISK());
    try {
      return new Pipeline().setStages(stages).fit(ordered);
    } finally {
      ordered.unpersist();
    }
  }

  /**
   * user_id, label, the scaled feature vector and the history (item and category of each event
   * before the cutoff, for {@link HistoryEmbedding}): what the executors publish.
   */
  public static Dataset<Row> transform(PipelineModel model, Dataset<Row> aggregate) {
    return model.transform(aggregate).select(col("user_id"), col("label"), col("scaled"), col("history"));
  }

  /**
   * The feature table the trainer reads, from {@link #transform}'s columns: {@code user_id}
   * (int64), {@code label} and {@code f0}..{@code f(width-1)} (float64, the scaled vector's
   * elements) and {@code embedding}, the history's {@link HistoryEmbedding} ({@code array<float>}
   * of {@value HistoryEmbedding#DIMS}). What the pipeline publishes and what it writes as Parquet.
   */
  public static Dataset<Row> table(Dataset<Row> transformed, int width, long items) {
    // Two projections: the vector becomes an array once per row, then its elements are columns
    // (Spark does not merge a projection that would compute the array once per element).
    Dataset<Row> arrays = transformed.select(col("user_id"), col("label"),
        vector_to_array(col("scaled"), "float64").as("scaled"),
        HistoryEmbedding.column(col("history"), items).as("embedding"));
    List<Column> columns = new ArrayList<>(List.of(col("user_id").cast("long"), col("label")));
    for (int i = 0; i < width; i++) {
      columns.add(col("scaled").getItem(i).as("f" + i));
    }
    columns.add(col("embedding"));
    return arrays.select(columns.toArray(Column[]::new));
  }

  /** How many features the fitted model produces. */
  public static int width(PipelineModel model) {
    return ((StandardScalerModel) model.stages()[model.stages().length - 1]).mean().size();
  }

  private static String categories() {
    StringBuilder s = new StringBuilder();
    for (String c : RawEvents.CATEGORIES) {
      s.append(s.length() == 0 ? "" : ", ").append('\'').append(c).append('\'');
    }
    return s.toString();
  }

  private static Column count(Column condition) {
    return sum(org.apache.spark.sql.functions.when(condition, 1L).otherwise(0L));
  }
}
