package io.sluice.transport.verbs.nativelib;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntBinaryOperator;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.IntInsnNode;
import org.objectweb.asm.tree.InvokeDynamicInsnNode;
import org.objectweb.asm.tree.LdcInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.analysis.Interpreter;

/**
 * Follows int constants through a method for {@link RegistrationScan}: {@code iconst}, {@code
 * bipush}, {@code sipush}, {@code ldc}, DiSNI's {@code IbvMr.IBV_ACCESS_*} fields (plain static
 * ints, set once by DiSNI to the libibverbs values), {@code ior}, {@code iand}, {@code ixor} of
 * constants, and parameters. Everything else is unknown. Stateless.
 */
final class AccessInterpreter extends Interpreter<AccessValue> {

  /** DiSNI 2.1's IbvMr access fields and the values its static initializer gives them. */
  private static final Map<String, Integer> IBV_MR_ACCESS = Map.of(
      "IBV_ACCESS_LOCAL_WRITE", 1,
      "IBV_ACCESS_REMOTE_WRITE", 2,
      "IBV_ACCESS_REMOTE_READ", 4,
      "IBV_ACCESS_REMOTE_ATOMIC", 8,
      "IBV_ACCESS_MW_BIND", 16,
      "IBV_ACCESS_ON_DEMAND", 64);

  /** Opcodes whose result takes two slots. */
  private static final Set<Integer> WIDE_RESULTS = Set.of(
      Opcodes.LCONST_0, Opcodes.LCONST_1, Opcodes.DCONST_0, Opcodes.DCONST_1,
      Opcodes.LALOAD, Opcodes.DALOAD, Opcodes.LADD, Opcodes.DADD, Opcodes.LSUB, Opcodes.DSUB,
      Opcodes.LMUL, Opcodes.DMUL, Opcodes.LDIV, Opcodes.DDIV, Opcodes.LREM, Opcodes.DREM,
      Opcodes.LNEG, Opcodes.DNEG, Opcodes.LSHL, Opcodes.LSHR, Opcodes.LUSHR, Opcodes.LAND,
      Opcodes.LOR, Opcodes.LXOR, Opcodes.I2L, Opcodes.I2D, Opcodes.L2D, Opcodes.F2L, Opcodes.F2D,
      Opcodes.D2L);

  /** Opcodes that produce no value (jumps, stores into fields and arrays, returns). */
  private static final Set<Integer> NO_RESULT = Set.of(
      Opcodes.IFEQ, Opcodes.IFNE, Opcodes.IFLT, Opcodes.IFGE, Opcodes.IFGT, Opcodes.IFLE,
      Opcodes.IF_ICMPEQ, Opcodes.IF_ICMPNE, Opcodes.IF_ICMPLT, Opcodes.IF_ICMPGE, Opcodes.IF_ICMPGT,
      Opcodes.IF_ICMPLE, Opcodes.IF_ACMPEQ, Opcodes.IF_ACMPNE, Opcodes.IFNULL, Opcodes.IFNONNULL,
      Opcodes.TABLESWITCH, Opcodes.LOOKUPSWITCH, Opcodes.IRETURN, Opcodes.LRETURN, Opcodes.FRETURN,
      Opcodes.DRETURN, Opcodes.ARETURN, Opcodes.PUTSTATIC, Opcodes.PUTFIELD, Opcodes.ATHROW,
      Opcodes.MONITORENTER, Opcodes.MONITOREXIT);

  AccessInterpreter() {
    super(Opcodes.ASM9);
  }

  @Override
  public AccessValue newValue(Type type) {
    if (type == Type.VOID_TYPE) {
      return null;
    }
    return AccessValue.unknown(type == null ? 1 : type.getSize());
  }

  @Override
  public AccessValue newParameterValue(boolean isInstanceMethod, int local, Type type) {
    return AccessValue.parameter(type.getSize(), local);
  }

  @Override
  public AccessValue newOperation(AbstractInsnNode insn) {
    int op = insn.getOpcode();
    if (op >= Opcodes.ICONST_M1 && op <= Opcodes.ICONST_5) {
      return AccessValue.constant(op - Opcodes.ICONST_0);
    }
    if (insn instanceof IntInsnNode i && (op == Opcodes.BIPUSH || op == Opcodes.SIPUSH)) {
      return AccessValue.constant(i.operand);
    }
    if (insn instanceof LdcInsnNode ldc) {
      if (ldc.cst instanceof Integer v) {
        return AccessValue.constant(v);
      }
      return AccessValue.unknown(ldc.cst instanceof Long || ldc.cst instanceof Double ? 2 : 1);
    }
    if (insn instanceof FieldInsnNode f) {
      Integer access = f.owner.equals("com/ibm/disni/verbs/IbvMr") ? IBV_MR_ACCESS.get(f.name) : null;
      return access != null ? AccessValue.constant(access) : AccessValue.unknown(Type.getType(f.desc).getSize());
    }
    return AccessValue.unknown(WIDE_RESULTS.contains(op) ? 2 : 1);
  }

  @Override
  public AccessValue copyOperation(AbstractInsnNode insn, AccessValue value) {
    return value;
  }

  @Override
  public AccessValue unaryOperation(AbstractInsnNode insn, AccessValue value) {
    int op = insn.getOpcode();
    if (NO_RESULT.contains(op)) {
      return null;
    }
    if (insn instanceof FieldInsnNode f) {
      return AccessValue.unknown(Type.getType(f.desc).getSize());
    }
    return AccessValue.unknown(WIDE_RESULTS.contains(op) ? 2 : 1);
  }

  @Override
  public AccessValue binaryOperation(AbstractInsnNode insn, AccessValue a, AccessValue b) {
    int op = insn.getOpcode();
    if (NO_RESULT.contains(op)) {
      return null;
    }
    IntBinaryOperator f = switch (op) {
      case Opcodes.IOR -> (x, y) -> x | y;
      case Opcodes.IAND -> (x, y) -> x & y;
      case Opcodes.IXOR -> (x, y) -> x ^ y;
      default -> null;
    };
    if (f == null || !a.onlyConstants() || !b.onlyConstants()) {
      return AccessValue.unknown(WIDE_RESULTS.contains(op) ? 2 : 1);
    }
    Set<Integer> results = new TreeSet<>();
    for (int x : a.constants()) {
      for (int y : b.constants()) {
        results.add(f.applyAsInt(x, y));
      }
    }
    return new AccessValue(1, results, Set.of(), false);
  }

  @Override
  public AccessValue ternaryOperation(AbstractInsnNode insn, AccessValue a, AccessValue b, AccessValue c) {
    return null; // array stores
  }

  @Override
  public AccessValue naryOperation(AbstractInsnNode insn, List<? extends AccessValue> values) {
    Type result;
    if (insn instanceof MethodInsnNode m) {
      result = Type.getReturnType(m.desc);
    } else if (insn instanceof InvokeDynamicInsnNode d) {
      result = Type.getReturnType(d.desc);
    } else {
      result = Type.getObjectType("java/lang/Object"); // multianewarray
    }
    return newValue(result);
  }

  @Override
  public void returnOperation(AbstractInsnNode insn, AccessValue value, AccessValue expected) {}

  @Override
  public AccessValue merge(AccessValue a, AccessValue b) {
    if (a.size() != b.size()) {
      AccessValue unusable = AccessValue.unknown(1); // a local slot reused for another type
      return unusable.equals(a) ? a : unusable;
    }
    AccessValue merged = a.union(b);
    return merged.equals(a) ? a : merged;
  }
}
