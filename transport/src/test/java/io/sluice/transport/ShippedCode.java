package io.sluice.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.MethodNode;

/**
 * What a shipped module puts in users' class paths: the classes of one code source (a class
 * folder under Maven, a jar elsewhere), read as bytes, never loaded. Shipped code holds no
 * programs (no {@code public static void main(String[])}: demos live in examples/, benchmarks in
 * perf/, lab programs in testing/lab) and no class of the packages that only the lab, the
 * examples or the benchmarks use. Each shipped module has a test that calls
 * {@link #assertLibraryOnly(Class)} with one of its own classes. Stateless.
 */
public final class ShippedCode {
  /** Packages that never ship: lab programs, examples and benchmarks. */
  public static final List<String> NOT_SHIPPED_PACKAGES = List.of(
      "io.sluice.lab.", "io.sluice.examples.", "io.sluice.perf.",
      "io.sluice.transport.verbs.diag.", "io.sluice.transport.verbs.bench.");

  private final Path source;
  private final List<ClassNode> classes;

  private ShippedCode(Path source, List<ClassNode> classes) {
    this.source = source;
    this.classes = classes;
  }

  /** The classes of the code source {@code anchor} was loaded from. */
  public static ShippedCode of(Class<?> anchor) {
    Path source = codeSourceOf(anchor);
    return new ShippedCode(source, classFiles(source).stream().map(ShippedCode::read).toList());
  }

  /** The bytes of every class file in a class folder or jar. */
  public static List<byte[]> classFiles(Path classesOrJar) {
    List<byte[]> files = new ArrayList<>();
    try {
      if (Files.isDirectory(classesOrJar)) {
        try (Stream<Path> paths = Files.walk(classesOrJar)) {
          for (Path f : paths.filter(p -> p.toString().endsWith(".class")).toList()) {
            files.add(Files.readAllBytes(f));
          }
        }
      } else {
        try (JarFile jar = new JarFile(classesOrJar.toFile())) {
          for (JarEntry e : jar.stream().filter(e -> e.getName().endsWith(".class")).toList()) {
            try (InputStream in = jar.getInputStream(e)) {
              files.add(in.readAllBytes());
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + classesOrJar, e);
    }
    return files;
  }

  /** Where {@code type} was loaded from. */
  public static Path codeSourceOf(Class<?> type) {
    try {
      return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException("no code source for " + type, e);
    }
  }

  private static ClassNode read(byte[] classFile) {
    ClassNode node = new ClassNode();
    new ClassReader(classFile).accept(node, ClassReader.SKIP_CODE | ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
    return node;
  }

  /** Binary names of every class, sorted. */
  public TreeSet<String> classNames() {
    TreeSet<String> names = new TreeSet<>();
    classes.forEach(c -> names.add(c.name.replace('/', '.')));
    return names;
  }

  /** Classes with a {@code public static void main(String[])}: programs, not library code. */
  public List<String> programs() {
    List<String> found = new ArrayList<>();
    for (ClassNode c : classes) {
      for (MethodNode m : c.methods) {
        if (m.name.equals("main") && m.desc.equals("([Ljava/lang/String;)V")
            && (m.access & Opcodes.ACC_STATIC) != 0 && (m.access & Opcodes.ACC_PUBLIC) != 0) {
          found.add(c.name.replace('/', '.'));
        }
      }
    }
    found.sort(null);
    return found;
  }

  /** Classes of {@link #NOT_SHIPPED_PACKAGES}. */
  public List<String> notShippedClasses() {
    return classNames().stream().filter(n -> NOT_SHIPPED_PACKAGES.stream().anyMatch(n::startsWith)).toList();
  }

  /**
   * Fails unless the code source of {@code anchor} holds {@code anchor} itself, no program and
   * no class of a package that never ships.
   */
  public static void assertLibraryOnly(Class<?> anchor) {
    ShippedCode code = of(anchor);
    assertTrue(code.classNames().contains(anchor.getName()), "scanned " + code.source + " without " + anchor);
    assertEquals(List.of(), code.programs(), "programs shipped in " + code.source);
    assertEquals(List.of(), code.notShippedClasses(), "lab, example or benchmark code shipped in " + code.source);
  }
}
