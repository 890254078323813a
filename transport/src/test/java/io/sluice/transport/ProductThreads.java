package io.sluice.transport;

import java.util.List;
import java.util.function.Predicate;

/**
 * The live threads the product made, told apart from the JVM's, the test framework's and other
 * libraries' by name: every thread Sluice starts is named {@code sluice-...}. A bound on threads
 * is a bound on these (or on a library's own named pool), never on {@link Thread#activeCount()},
 * which counts whatever else the JVM runs at that moment.
 */
public final class ProductThreads {
  /** The prefix of every thread name the product gives. */
  public static final String PREFIX = "sluice-";

  private ProductThreads() {}

  /** Live threads whose name starts with {@link #PREFIX}. */
  public static List<Thread> live() {
    return named(n -> n.startsWith(PREFIX));
  }

  /** How many live threads have a name starting with {@code prefix}. */
  public static int count(String prefix) {
    return named(n -> n.startsWith(prefix)).size();
  }

  /** How many live threads the product made. */
  public static int count() {
    return live().size();
  }

  /** Live threads whose name {@code name} accepts. */
  public static List<Thread> named(Predicate<String> name) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && name.test(t.getName()))
        .toList();
  }

  /** The names of the live product threads, for a failure message. */
  public static String describe() {
    return live().stream().map(Thread::getName).sorted().toList().toString();
  }
}
