package io.sluice.transport.verbs.nativelib;

import java.util.Set;
import java.util.TreeSet;
import org.objectweb.asm.tree.analysis.Value;

/**
 * What {@link AccessInterpreter} knows of one value of a method's frame: the int constants it can
 * be, the parameters (local slots at method entry) it can come from, and whether it can also be
 * something else. Immutable.
 */
record AccessValue(int size, Set<Integer> constants, Set<Integer> parameters, boolean unknown) implements Value {

  /** Beyond this many possible constants a value counts as unknown. */
  private static final int MAX_CONSTANTS = 64;

  AccessValue {
    constants = Set.copyOf(constants);
    parameters = Set.copyOf(parameters);
  }

  static AccessValue unknown(int size) {
    return new AccessValue(size, Set.of(), Set.of(), true);
  }

  static AccessValue constant(int value) {
    return new AccessValue(1, Set.of(value), Set.of(), false);
  }

  static AccessValue parameter(int size, int local) {
    return new AccessValue(size, Set.of(), Set.of(local), false);
  }

  @Override
  public int getSize() {
    return size;
  }

  /** Every value either of two values can be (where control flow joins). */
  AccessValue union(AccessValue other) {
    Set<Integer> c = new TreeSet<>(constants);
    c.addAll(other.constants);
    Set<Integer> p = new TreeSet<>(parameters);
    p.addAll(other.parameters);
    boolean u = unknown || other.unknown || c.size() > MAX_CONSTANTS;
    return new AccessValue(size, u ? Set.of() : c, p, u);
  }

  /** Whether this is only constants, so that arithmetic on it can be followed. */
  boolean onlyConstants() {
    return !unknown && parameters.isEmpty() && !constants.isEmpty();
  }
}
