package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The library exports exactly the JNI functions DiSNI's NativeDispatcher declares, plus the
 * project's own ({@link #OWN_NATIVE_CLASSES}).
 */
class JniSymbolsTest {

  /** JNI short name of a native method (JNI specification, "Resolving Native Method Names"). */
  static String jniName(String className, String methodName) {
    return "Java_" + mangle(className) + "_" + mangle(methodName);
  }

  static String mangle(String name) {
    StringBuilder out = new StringBuilder();
    for (char c : name.toCharArray()) {
      switch (c) {
        case '.', '/' -> out.append('_');
        case '_' -> out.append("_1");
        case ';' -> out.append("_2");
        case '[' -> out.append("_3");
        default -> {
          if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            out.append(c);
          } else {
            out.append(String.format("_0%04x", (int) c));
          }
        }
      }
    }
    return out.toString();
  }

  static Set<String> dispatcherSymbols() {
    Class<?> dispatcher = Reflect.type("com.ibm.disni.verbs.impl.NativeDispatcher");
    return Arrays.stream(dispatcher.getDeclaredMethods())
        .filter(m -> Modifier.isNative(m.getModifiers()))
        .map(Method::getName)
        .map(name -> jniName(dispatcher.getName(), name))
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /** The project's classes with native methods of their own. */
  static final java.util.List<String> OWN_NATIVE_CLASSES =
      java.util.List.of("io.sluice.transport.verbs.abi.NativeAbi", "io.sluice.transport.verbs.rc.QueuePairQuery",
          "io.sluice.transport.verbs.rc.ReadChain", "io.sluice.transport.verbs.rc.DeviceQuery",
          "io.sluice.transport.verbs.rc.CmOptions");

  static Set<String> abiSymbols() {
    Set<String> out = new TreeSet<>();
    for (String name : OWN_NATIVE_CLASSES) {
      Class<?> own = Reflect.type(name);
      Arrays.stream(own.getDeclaredMethods())
          .filter(m -> Modifier.isNative(m.getModifiers()))
          .map(m -> jniName(own.getName(), m.getName()))
          .forEach(out::add);
    }
    return out;
  }

  @Test
  void manglingFollowsTheJniSpecification() {
    assertEquals("Java_com_ibm_disni_verbs_impl_NativeDispatcher__1createId",
        jniName("com.ibm.disni.verbs.impl.NativeDispatcher", "_createId"));
    assertEquals("a_1b_0002d", mangle("a_b-"));
  }

  @Test
  void disniDeclares48NativeMethods() {
    assertEquals(48, dispatcherSymbols().size());
  }

  @Test
  void libraryExportsExactlyTheDeclaredFunctions(@TempDir Path dir) throws IOException, InterruptedException {
    assumeTrue(Packaging.libraryPackaged(), Packaging.NOT_PACKAGED);
    Path library = DisniRuntime.get().libraryPath();
    Set<String> exported = definedDynamicSymbols(library, dir.resolve("nm.out"));
    Set<String> expected = new TreeSet<>(dispatcherSymbols());
    expected.addAll(abiSymbols());
    assertEquals(expected, exported, "dynamic symbols of " + library);
  }

  /** {@code nm}'s output goes to {@code out}, so the wait for it has a deadline even if it hangs. */
  private static Set<String> definedDynamicSymbols(Path library, Path out) throws IOException, InterruptedException {
    Process nm;
    try {
      nm = new ProcessBuilder("nm", "-D", "--defined-only", library.toString()).redirectErrorStream(true)
          .redirectOutput(out.toFile()).start();
    } catch (IOException e) {
      assumeTrue(false, "nm (binutils) is not installed");
      throw e;
    }
    boolean exited = nm.waitFor(60, TimeUnit.SECONDS);
    if (!exited) {
      nm.destroyForcibly();
    }
    assertTrue(exited, "nm did not finish");
    String output = Files.readString(out, StandardCharsets.UTF_8);
    assertEquals(0, nm.exitValue(), output);
    return output.lines()
        .map(line -> line.trim().split("\\s+"))
        .filter(parts -> parts.length == 3)
        .map(parts -> parts[2])
        .collect(Collectors.toCollection(TreeSet::new));
  }
}
