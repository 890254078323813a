package io.sluice.spark.tables;

/**
 * Why a published table cannot be made, found or read. Its subclasses say which: {@link
 * TableMemoryException}, {@link LostShardsException}, {@link UnsupportedColumnException}; the
 * message always names the table.
 */
public class TableException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public TableException(String message) {
    super(message);
  }

  public TableException(String message, Throwable cause) {
    super(message, cause);
  }

  /** A table would take more of an executor's memory than its budget for published tables. */
  public static final class TableMemoryException extends TableException {
    private static final long serialVersionUID = 1L;

    public TableMemoryException(String message) {
      super(message);
    }
  }

  /** Some of a table's shards went with executors that are gone; the message lists them. */
  public static final class LostShardsException extends TableException {
    private static final long serialVersionUID = 1L;

    public LostShardsException(String message) {
      super(message);
    }
  }

  /** A column whose Spark type Arrow cannot hold; the message names the column and its type. */
  public static final class UnsupportedColumnException extends TableException {
    private static final long serialVersionUID = 1L;

    public UnsupportedColumnException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
