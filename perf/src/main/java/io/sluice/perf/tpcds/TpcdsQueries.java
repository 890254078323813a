package io.sluice.perf.tpcds;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Spark's own TPC-DS queries, read at run time from the resources {@code tpcds/q*.sql} of Spark's
 * {@code spark-sql_2.13:tests} jar (103 queries: q1 to q99, with q14, q23, q24 and q39 in two
 * parts each). Names are the file names without {@code .sql}; {@link #ORDER} sorts them by number,
 * then suffix. Stateless.
 */
public final class TpcdsQueries {
  private static final String FOLDER = "tpcds/";
  private static final Pattern NAME = Pattern.compile("q(\\d+)([a-z]?)");

  /** q1, q2, ..., q14a, q14b, ..., q99. */
  public static final Comparator<String> ORDER = Comparator
      .<String>comparingInt(n -> Integer.parseInt(match(n).group(1)))
      .thenComparing(n -> match(n).group(2));

  private TpcdsQueries() {}

  /** Every query name the jar holds, in {@link #ORDER}. */
  public static List<String> all() {
    URL probe = resource("q1");
    if (!"jar".equals(probe.getProtocol())) {
      throw new IllegalStateException("tpcds/q1.sql is not in a jar: " + probe);
    }
    List<String> names = new ArrayList<>();
    try {
      JarURLConnection c = (JarURLConnection) probe.openConnection();
      c.setUseCaches(false);
      try (JarFile jar = c.getJarFile()) {
        for (JarEntry e : java.util.Collections.list(jar.entries())) {
          String n = e.getName();
          if (n.startsWith(FOLDER) && n.endsWith(".sql") && n.indexOf('/', FOLDER.length()) < 0) {
            String name = n.substring(FOLDER.length(), n.length() - 4);
            if (NAME.matcher(name).matches()) {
              names.add(name);
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the TPC-DS queries in " + probe, e);
    }
    names.sort(ORDER);
    return names;
  }

  /**
   * The queries a {@code --queries} value names: {@code all}, or a comma-separated list of names,
   * each of which must exist. Duplicates are dropped; the order given is kept.
   */
  public static List<String> select(String spec, List<String> available) {
    if (spec.equals("all")) {
      return List.copyOf(available);
    }
    Set<String> chosen = new LinkedHashSet<>();
    for (String s : spec.split(",")) {
      String name = s.trim();
      if (name.isEmpty()) {
        continue;
      }
      if (!available.contains(name)) {
        throw new IllegalArgumentException("no TPC-DS query named " + name + " (there are " + available.size()
            + ": " + available.get(0) + " to " + available.get(available.size() - 1) + ")");
      }
      chosen.add(name);
    }
    if (chosen.isEmpty()) {
      throw new IllegalArgumentException("--queries names no query");
    }
    return List.copyOf(chosen);
  }

  /** The text of one query. */
  public static String text(String name) {
    try (InputStream in = resource(name).openStream()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read TPC-DS query " + name, e);
    }
  }

  private static URL resource(String name) {
    URL url = TpcdsQueries.class.getClassLoader().getResource(FOLDER + name + ".sql");
    if (url == null) {
      throw new IllegalStateException("TPC-DS query " + name + " not found: Spark's spark-sql_2.13 tests jar"
          + " must be on the class path");
    }
    return url;
  }

  private static Matcher match(String name) {
    Matcher m = NAME.matcher(name);
    if (!m.matches()) {
      throw new IllegalArgumentException("not a TPC-DS query name: " + name);
    }
    return m;
  }
}
