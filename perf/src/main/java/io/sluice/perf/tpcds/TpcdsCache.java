package io.sluice.perf.tpcds;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where generated TPC-DS data lives: one folder per scale factor, {@code <root>/sf<scale>}. A
 * folder is complete when it holds the {@link #MARKER} file; it is written under {@link
 * #partial} and moved into place only then, so a run that dies half way leaves nothing that looks
 * finished. Needs no Spark. Stateless.
 */
public final class TpcdsCache {
  /** Written last: its presence says every table is there. */
  public static final String MARKER = "_SLUICE_TPCDS_COMPLETE";

  private TpcdsCache() {}

  /** {@code <root>/sf<scale>}, the scale in its plainest decimal form (sf0.1, sf1, sf10). */
  public static Path folder(Path root, double scale) {
    return root.resolve("sf" + BigDecimal.valueOf(scale).stripTrailingZeros().toPlainString());
  }

  /** Where {@code folder} is generated before it is complete. */
  public static Path partial(Path folder) {
    return folder.resolveSibling(folder.getFileName() + ".partial");
  }

  public static boolean complete(Path folder) {
    return Files.isRegularFile(folder.resolve(MARKER));
  }

  /** {@code $XDG_CACHE_HOME/sluice-tpcds}, else {@code ~/.cache/sluice-tpcds}. */
  public static Path defaultRoot() {
    String xdg = System.getenv("XDG_CACHE_HOME");
    Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache");
    return base.resolve("sluice-tpcds");
  }
}
