package io.sluice.spark.tables;

import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;

/** What differs between Spark lines, for Spark 3.5: the Dataset holds the plan. */
final class SparkShim {
  private SparkShim() {}

  /** The rows of {@code df}'s executed plan, in Spark's internal form. */
  static RDD<InternalRow> internalRows(Dataset<Row> df) {
    return df.queryExecution().toRdd();
  }
}
