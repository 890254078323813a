package io.sluice.transport.verbs.nativelib;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import io.sluice.transport.ShippedCode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.FieldInsnNode;
import org.objectweb.asm.tree.MethodInsnNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.analysis.Analyzer;
import org.objectweb.asm.tree.analysis.AnalyzerException;
import org.objectweb.asm.tree.analysis.Frame;

/**
 * Reads compiled classes (a class folder or a jar) and finds every place that registers memory
 * with DiSNI, together with the access flags it can pass: {@code IbvPd.regMr} and
 * {@code RdmaVerbs.regMr} (access is their last argument), and the calls that register with
 * flags chosen elsewhere ({@code RdmaEndpoint.registerMemory}, whose default access includes
 * {@code IBV_ACCESS_REMOTE_WRITE}, and DiSNI's native {@code _regMr}).
 *
 * <p>Access flags are followed through the bytecode ({@link AccessInterpreter}): constants (javac
 * folds {@code static final} ints), DiSNI's {@code IbvMr.IBV_ACCESS_*} fields, {@code | & ^} of
 * those, both arms of a conditional, and parameters of methods that only the scanned classes can
 * call (private or package-private), whose call sites are followed in turn. Anything else (a
 * field, a computed value, a parameter of a public method) cannot be told and is reported. Not
 * thread safe; one scan per instance.
 */
final class RegistrationScan {

  /** IBV_ACCESS_REMOTE_WRITE and IBV_ACCESS_REMOTE_ATOMIC: access that lets a peer change memory. */
  static final int PEER_WRITES = 2 | 8;

  /** What one registration site can pass as access: the constants, or why it cannot be told. */
  record Site(String where, Set<Integer> access, List<String> problems) {
    boolean grantsPeerWrites() {
      return access.stream().anyMatch(a -> (a & PEER_WRITES) != 0);
    }
  }

  private static final String IBV_MR = "com/ibm/disni/verbs/IbvMr";
  private static final String REG_MR_RESULT = "Lcom/ibm/disni/verbs/SVCRegMr;";
  private static final int MAX_DEPTH = 8;

  private final Map<String, ClassNode> classes = new TreeMap<>();
  private final Map<String, Frame<AccessValue>[]> frames = new java.util.HashMap<>();

  /** Scans the classes of a class folder or jar. */
  static RegistrationScan of(Path classesOrJar) {
    RegistrationScan scan = new RegistrationScan();
    ShippedCode.classFiles(classesOrJar).forEach(scan::add);
    return scan;
  }

  /** Scans the given classes, read from their class files on the class path. */
  static RegistrationScan of(Class<?>... types) {
    RegistrationScan scan = new RegistrationScan();
    for (Class<?> type : types) {
      String resource = type.getName().replace('.', '/') + ".class";
      try (InputStream in = type.getClassLoader().getResourceAsStream(resource)) {
        scan.add(in.readAllBytes());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return scan;
  }

  private void add(byte[] classFile) {
    ClassNode node = new ClassNode();
    new ClassReader(classFile).accept(node, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
    classes.put(node.name, node);
  }

  /** Every registration site of the scanned classes with the access it can pass. */
  List<Site> registrations() {
    List<Site> sites = new ArrayList<>();
    for (ClassNode c : classes.values()) {
      for (MethodNode m : c.methods) {
        AbstractInsnNode[] insns = m.instructions.toArray();
        for (int i = 0; i < insns.length; i++) {
          String where = c.name.replace('/', '.') + "." + m.name;
          if (insns[i] instanceof FieldInsnNode f && f.owner.equals(IBV_MR)
              && (f.name.equals("IBV_ACCESS_REMOTE_WRITE") || f.name.equals("IBV_ACCESS_REMOTE_ATOMIC"))) {
            sites.add(new Site(where, Set.of(), List.of("reads IbvMr." + f.name)));
          }
          if (!(insns[i] instanceof MethodInsnNode call)) {
            continue;
          }
          Type[] args = Type.getArgumentTypes(call.desc);
          boolean returnsRegistration = Type.getReturnType(call.desc).getDescriptor().equals(REG_MR_RESULT);
          if (call.name.equals("registerMemory") && returnsRegistration) {
            sites.add(new Site(where, Set.of(), List.of(
                "calls " + call.owner.replace('/', '.') + ".registerMemory, whose default access includes REMOTE_WRITE")));
          } else if (call.name.equals("_regMr")) {
            sites.add(new Site(where, Set.of(), List.of("calls the native _regMr directly")));
          } else if (call.name.equals("regMr") && returnsRegistration && args.length > 0
              && args[args.length - 1].equals(Type.INT_TYPE)) {
            Frame<AccessValue> frame = framesOf(c, m)[i];
            if (frame == null) {
              continue; // unreachable code
            }
            Set<Integer> access = new TreeSet<>();
            List<String> problems = new ArrayList<>();
            resolve(frame.getStack(frame.getStackSize() - 1), c, m, 0, new HashSet<>(), access, problems);
            sites.add(new Site(where, access, problems));
          }
        }
      }
    }
    return sites;
  }

  /** Collects the constants {@code value} can be, following parameters to their call sites. */
  private void resolve(AccessValue value, ClassNode c, MethodNode m, int depth, Set<String> visited,
      Set<Integer> access, List<String> problems) {
    String method = c.name.replace('/', '.') + "." + m.name + m.desc;
    if (value.unknown()) {
      problems.add("access in " + method + " is not made of constants");
    }
    access.addAll(value.constants());
    for (int slot : value.parameters()) {
      if ((m.access & (Opcodes.ACC_PUBLIC | Opcodes.ACC_PROTECTED)) != 0) {
        problems.add("access comes from a parameter of " + method + ", which code outside the jar can call");
        continue;
      }
      if (depth >= MAX_DEPTH || !visited.add(method + "#" + slot)) {
        problems.add("access of " + method + " passes through too many calls");
        continue;
      }
      int argument = argumentIndex(m, slot);
      for (ClassNode caller : classes.values()) {
        for (MethodNode cm : caller.methods) {
          AbstractInsnNode[] insns = cm.instructions.toArray();
          for (int i = 0; i < insns.length; i++) {
            if (insns[i] instanceof MethodInsnNode call && call.name.equals(m.name) && call.desc.equals(m.desc)
                && isOrExtends(call.owner, c.name)) {
              Frame<AccessValue> frame = framesOf(caller, cm)[i];
              if (frame != null) {
                int arguments = Type.getArgumentTypes(m.desc).length;
                resolve(frame.getStack(frame.getStackSize() - arguments + argument), caller, cm, depth + 1,
                    visited, access, problems);
              }
            }
          }
        }
      }
    }
  }

  private boolean isOrExtends(String owner, String target) {
    for (String name = owner; name != null; ) {
      if (name.equals(target)) {
        return true;
      }
      ClassNode node = classes.get(name);
      name = node == null ? null : node.superName;
    }
    return false;
  }

  /** The index among the declared arguments of the parameter held in local {@code slot}. */
  private static int argumentIndex(MethodNode m, int slot) {
    int local = (m.access & Opcodes.ACC_STATIC) != 0 ? 0 : 1;
    Type[] args = Type.getArgumentTypes(m.desc);
    for (int i = 0; i < args.length; i++) {
      if (local == slot) {
        return i;
      }
      local += args[i].getSize();
    }
    throw new IllegalStateException("local " + slot + " is not a parameter of " + m.name + m.desc);
  }

  @SuppressWarnings("unchecked")
  private Frame<AccessValue>[] framesOf(ClassNode c, MethodNode m) {
    return frames.computeIfAbsent(c.name + "." + m.name + m.desc, k -> {
      try {
        return new Analyzer<>(new AccessInterpreter()).analyze(c.name, m);
      } catch (AnalyzerException e) {
        throw new IllegalStateException("cannot analyze " + k, e);
      }
    });
  }
}
