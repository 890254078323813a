package io.sluice.transport.verbs.nativelib;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The entry point to DiSNI 2.1 backed by the project's own libdisni.so.
 *
 * <p>{@link #get()} locates the library (packaged in this jar, extracted to a private
 * temporary file; or the file named by {@code -Dsluice.disni.library=...}), creates the
 * {@link DisniClassLoader} that owns it, and checks that it loads and reports the JNI
 * version DiSNI expects. No {@code -Djava.library.path} is needed. Code that uses DiSNI
 * must run inside {@link #classLoader()}: put it in a package under
 * {@code io.sluice.transport.verbs} (but not in this package) and create it with
 * {@link #newInstance}, receiving it through an interface the parent loader knows:
 *
 * <pre>{@code
 * if (DisniRuntime.isAvailable()) {
 *   TransportProvider verbs = DisniRuntime.get()
 *       .newInstance("io.sluice.transport.verbs.VerbsTransportProvider", TransportProvider.class);
 * }
 * }</pre>
 *
 * <p>DiSNI reads direct buffer addresses through {@code sun.nio.ch.DirectBuffer}, so JVMs
 * that use it need {@value #REQUIRED_JVM_FLAG}; without it the runtime is unavailable and
 * its cause names the flag.
 *
 * <p>One runtime exists per JVM (a native library can belong to only one class loader).
 * Thread safe.
 */
public final class DisniRuntime {

  /** The JVM flag DiSNI needs on JDK 17 and later. */
  public static final String REQUIRED_JVM_FLAG = "--add-exports java.base/sun.nio.ch=ALL-UNNAMED";

  /** The version NativeDispatcher requires ({@code JVERBS_VERSION} in DiSNI 2.1). */
  static final int DISNI_JNI_VERSION = 32;

  /** Classes defined by the DiSNI loader. */
  static final List<String> ISOLATED_PREFIXES = List.of("com.ibm.disni.", "io.sluice.transport.verbs.");

  /** Exceptions to {@link #ISOLATED_PREFIXES}: the loading machinery itself, and the verbs keys (declarations only). */
  static final List<String> SHARED_PREFIXES = List.of("io.sluice.transport.verbs.nativelib.",
      "io.sluice.transport.verbs.config.");

  private static final String ABI_CLASS = "io.sluice.transport.verbs.abi.NativeAbi";
  private static final Logger LOG = LoggerFactory.getLogger(DisniRuntime.class);
  private static final Object LOCK = new Object();

  /** Guarded by LOCK; set once. Exactly one of the two is non-null after the first attempt. */
  private static DisniRuntime instance;
  private static Throwable failure;

  private final DisniClassLoader loader;
  private final MethodHandle layout;
  private final MethodHandle deviceCount;
  private final MethodHandle decodeSendWrs;

  private DisniRuntime(DisniClassLoader loader, Class<?> abi) throws ReflectiveOperationException {
    this.loader = loader;
    MethodHandles.Lookup lookup = MethodHandles.publicLookup();
    this.layout = lookup.findStatic(abi, "layout", MethodType.methodType(int.class, String.class));
    this.deviceCount = lookup.findStatic(abi, "deviceCount", MethodType.methodType(int.class));
    this.decodeSendWrs =
        lookup.findStatic(abi, "decodeSendWrs", MethodType.methodType(long[].class, long.class));
  }

  /**
   * Returns the runtime, loading the library on first use.
   *
   * @throws UnsatisfiedLinkError if the library cannot be used; its cause says why, and the
   *     same error is thrown on every later call
   */
  public static DisniRuntime get() {
    synchronized (LOCK) {
      if (instance == null && failure == null) {
        try {
          instance = load();
          LOG.info("libdisni loaded from {}", instance.libraryPath());
        } catch (RuntimeException | LinkageError | ReflectiveOperationException e) {
          failure = e;
          LOG.info("libdisni unavailable: {}", e.toString());
        }
      }
      if (instance != null) {
        return instance;
      }
      UnsatisfiedLinkError error = new UnsatisfiedLinkError("libdisni is unavailable: " + failure);
      error.initCause(failure);
      throw error;
    }
  }

  /** Whether {@link #get()} succeeds. Attempts the load if nobody has yet. */
  public static boolean isAvailable() {
    return unavailabilityCause().isEmpty();
  }

  /** Why {@link #get()} fails, or empty if it succeeds. */
  public static Optional<Throwable> unavailabilityCause() {
    try {
      get();
      return Optional.empty();
    } catch (UnsatisfiedLinkError e) {
      return Optional.of(e.getCause() == null ? e : e.getCause());
    }
  }

  private static DisniRuntime load() throws ReflectiveOperationException {
    ClassLoader parent = DisniRuntime.class.getClassLoader();
    Path library = LibraryFile.locate(parent);
    DisniClassLoader loader =
        new DisniClassLoader(parent, library, ISOLATED_PREFIXES, SHARED_PREFIXES);
    if (!Object.class.getModule().isExported("sun.nio.ch", loader.getUnnamedModule())) {
      throw new IllegalStateException(
          "DiSNI reads direct buffer addresses through sun.nio.ch.DirectBuffer; start the JVM with "
              + REQUIRED_JVM_FLAG);
    }
    Class<?> abi = Class.forName(ABI_CLASS, true, loader);
    DisniRuntime runtime = new DisniRuntime(loader, abi);
    int version = (int) invoke(MethodHandles.publicLookup()
        .findStatic(abi, "version", MethodType.methodType(int.class)));
    if (version != DISNI_JNI_VERSION) {
      throw new UnsatisfiedLinkError(
          library + " reports JNI version " + version + ", DiSNI 2.1 needs " + DISNI_JNI_VERSION);
    }
    return runtime;
  }

  /** The loader that defines DiSNI and owns the library. */
  public ClassLoader classLoader() {
    return loader;
  }

  /** The file the library was loaded from. */
  public Path libraryPath() {
    return loader.library();
  }

  /** Whether {@code className} is defined by {@link #classLoader()} rather than its parent. */
  public boolean definesClass(String className) {
    return loader.isIsolated(className);
  }

  /**
   * Creates an instance of {@code className} (public, with a public no-argument
   * constructor) inside the DiSNI loader and returns it as {@code type}, which must come
   * from the parent loader.
   *
   * @throws IllegalArgumentException if the class is not one the DiSNI loader defines, or
   *     is not a {@code type}
   * @throws IllegalStateException if it cannot be loaded or constructed
   */
  public <T> T newInstance(String className, Class<T> type) {
    if (!loader.isIsolated(className)) {
      throw new IllegalArgumentException(
          className + " is not defined by the DiSNI loader; use a package under "
              + "io.sluice.transport.verbs (outside .nativelib)");
    }
    try {
      Class<?> cls = Class.forName(className, true, loader);
      if (!type.isAssignableFrom(cls)) {
        throw new IllegalArgumentException(
            className + " does not implement " + type.getName() + " as seen by the parent loader");
      }
      return type.cast(cls.getConstructor().newInstance());
    } catch (InvocationTargetException e) {
      throw new IllegalStateException("constructor of " + className + " failed", e.getCause());
    } catch (ReflectiveOperationException | LinkageError e) {
      throw new IllegalStateException("cannot create " + className, e);
    }
  }

  /** The number of RDMA devices libibverbs lists (negative errno on failure). */
  public int deviceCount() {
    return (int) invoke(deviceCount);
  }

  /** A size or offset compiled into the library (see NativeAbi.layout), or -1. */
  public int layout(String name) {
    return (int) invoke(layout, name);
  }

  /** Decodes DiSNI send records the way posting would (see NativeAbi.decodeSendWrs). */
  long[] decodeSendWrs(long address) throws java.io.IOException {
    try {
      return (long[]) decodeSendWrs.invoke(address);
    } catch (java.io.IOException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException(t);
    }
  }

  private static Object invoke(MethodHandle handle, Object... args) {
    try {
      return handle.invokeWithArguments(args);
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException(t);
    }
  }
}
