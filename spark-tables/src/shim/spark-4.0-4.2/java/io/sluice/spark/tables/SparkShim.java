package io.sluice.spark.tables;

import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;

/** What differs between Spark lines, for Spark 4.0 and later: the classic Dataset holds the plan. */
final class SparkShim {
  private SparkShim() {}

  /** The rows of {@code df}'s executed plan, in Spark's internal form. */
  static RDD<InternalRow> internalRows(Dataset<Row> df) {
    if (!(df instanceof org.apache.spark.sql.classic.Dataset<Row> classic)) {
      throw new TableException("publishing needs a DataFrame of a classic Spark session (not Spark Connect); got "
          + df.getClass().getName());
    }
    return classic.queryExecution().toRdd();
  }
}
