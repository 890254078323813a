package io.sluice.spark.tables;

import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/** A DataFrame's schema as Arrow's, by Spark's own mapping (the one PySpark's toArrow uses). */
final class ArrowSchemas {
  private ArrowSchemas() {}

  /**
   * The Arrow schema of {@code schema}, timestamps in {@code timeZone}.
   *
   * @throws TableException.UnsupportedColumnException naming the first column Arrow cannot hold
   * @throws TableException naming a column name that appears twice
   */
  static Schema of(String table, StructType schema, String timeZone) {
    Set<String> names = new HashSet<>();
    for (StructField f : schema.fields()) {
      if (!names.add(f.name().toLowerCase(Locale.ROOT))) {
        throw new TableException("table '" + table + "': the column name '" + f.name() + "' appears twice;"
            + " rename one (withColumnRenamed) before publishing");
      }
      try {
        ArrowUtils.toArrowSchema(new StructType(new StructField[] {f}), timeZone, true, false);
      } catch (RuntimeException e) {
        throw new TableException.UnsupportedColumnException("table '" + table + "': column '" + f.name() + "' of type "
            + f.dataType().simpleString() + " has no Arrow type (" + e.getMessage() + "); cast it or leave it out", e);
      }
    }
    return ArrowUtils.toArrowSchema(schema, timeZone, true, false);
  }
}
