package io.sluice.transport.verbs.nativelib;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Path;
import java.security.CodeSource;
import java.security.ProtectionDomain;
import java.security.cert.Certificate;
import java.util.List;

/**
 * Defines DiSNI's classes, and the project's classes that call DiSNI, in a loader of their
 * own whose {@link #findLibrary} maps the library name {@code disni} to the project's
 * libdisni.so.
 *
 * <p>Why: DiSNI's {@code NativeDispatcher} runs {@code System.loadLibrary("disni")} in its
 * static initializer. The JDK resolves that through the defining class loader's
 * {@code findLibrary} first and only then through {@code java.library.path}, which is fixed
 * when the JVM starts. Defining DiSNI here lets the library live anywhere (extracted from
 * the jar) without any JVM flag, and JNI binds NativeDispatcher's methods to it because the
 * library then belongs to this loader.
 *
 * <p>Class bytes are read from the parent's resources, so the classes are the very ones on
 * the class path, defined a second time here. Classes under {@link #isolatedPrefixes} are
 * loaded child first; everything else (the JDK, slf4j, the transport API) comes from the
 * parent, so objects cross the boundary through parent types only. Thread safe (parallel
 * capable).
 */
final class DisniClassLoader extends ClassLoader {

  static {
    registerAsParallelCapable();
  }

  private final Path library;
  private final List<String> isolatedPrefixes;
  private final List<String> sharedPrefixes;

  /**
   * @param parent where class bytes and shared classes come from
   * @param library absolute path of libdisni.so
   * @param isolatedPrefixes binary-name prefixes defined by this loader
   * @param sharedPrefixes exceptions to {@code isolatedPrefixes} taken from the parent
   */
  DisniClassLoader(
      ClassLoader parent, Path library, List<String> isolatedPrefixes, List<String> sharedPrefixes) {
    super("sluice-disni", parent);
    this.library = library;
    this.isolatedPrefixes = List.copyOf(isolatedPrefixes);
    this.sharedPrefixes = List.copyOf(sharedPrefixes);
  }

  boolean isIsolated(String name) {
    return isolatedPrefixes.stream().anyMatch(name::startsWith)
        && sharedPrefixes.stream().noneMatch(name::startsWith);
  }

  @Override
  protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
    if (!isIsolated(name)) {
      return super.loadClass(name, resolve);
    }
    synchronized (getClassLoadingLock(name)) {
      Class<?> loaded = findLoadedClass(name);
      if (loaded == null) {
        loaded = findClass(name);
      }
      if (resolve) {
        resolveClass(loaded);
      }
      return loaded;
    }
  }

  @Override
  protected Class<?> findClass(String name) throws ClassNotFoundException {
    String resource = name.replace('.', '/') + ".class";
    URL url = getParent().getResource(resource);
    if (url == null) {
      throw new ClassNotFoundException(name);
    }
    byte[] bytes;
    try (InputStream in = url.openStream()) {
      bytes = in.readAllBytes();
    } catch (IOException e) {
      throw new ClassNotFoundException(name + ": cannot read " + url, e);
    }
    definePackageOf(name);
    return defineClass(name, bytes, 0, bytes.length, domainOf(url, resource));
  }

  private void definePackageOf(String className) {
    int dot = className.lastIndexOf('.');
    if (dot > 0) {
      String pkg = className.substring(0, dot);
      if (getDefinedPackage(pkg) == null) {
        try {
          definePackage(pkg, null, null, null, null, null, null, null);
        } catch (IllegalArgumentException alreadyDefinedConcurrently) {
          // another thread defined it first; nothing to do
        }
      }
    }
  }

  /** The code source of a class read from {@code url}: its jar or class directory. */
  private ProtectionDomain domainOf(URL url, String resource) {
    String text = url.toString();
    String location;
    if (text.startsWith("jar:") && text.contains("!/")) {
      location = text.substring("jar:".length(), text.indexOf("!/"));
    } else if (text.endsWith(resource)) {
      location = text.substring(0, text.length() - resource.length());
    } else {
      return new ProtectionDomain(null, null, this, null);
    }
    try {
      CodeSource source = new CodeSource(new URL(location), (Certificate[]) null);
      return new ProtectionDomain(source, null, this, null);
    } catch (java.net.MalformedURLException e) {
      return new ProtectionDomain(null, null, this, null);
    }
  }

  @Override
  protected String findLibrary(String libname) {
    return "disni".equals(libname) ? library.toString() : null;
  }

  @Override
  public URL getResource(String name) {
    return getParent().getResource(name);
  }

  Path library() {
    return library;
  }
}
