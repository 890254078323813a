package io.sluice.transport;

import java.lang.management.ClassLoadingMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;

/**
 * What the first {@link Transports#open} and the first connect cost a cold JVM, the way a Spark
 * executor pays them inside its first tasks. Each sample is a fresh JVM that opens two transports
 * and connects them both ways; the parent prints the medians over the samples. Besides wall time
 * (noisy on a shared machine) it reports the process's CPU time (every thread, the JIT's
 * included), the opening thread's CPU time and the classes loaded, which a busy machine does not
 * move. Logging is set up before the clock starts, as an executor's is.
 *
 * <p>Run from the module folder after {@code mvn -pl transport test-compile}: {@code java -cp
 * target/test-classes:target/classes:<test class path> io.sluice.transport.ColdOpenCost [samples]
 * [provider] [ms between the opens and the first connect] [encrypt: true or false]}. A tool, not a
 * test: it asserts nothing.
 */
public final class ColdOpenCost {
  private static final String SECRET = "0123456789abcdef0123456789abcdef";
  /** How long a sample's connect, or its exit, may take before the tool gives up on it. */
  private static final long SAMPLE_DEADLINE_SECONDS = 60;
  private static final String[] COLUMNS = {
      "open1 wall ms", "open1 cpu ms", "open1 thread cpu ms", "open1 classes",
      "open2 wall ms", "connect1 wall ms", "connect1 cpu ms", "connect1 classes", "connect2 wall ms"};

  private ColdOpenCost() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("--sample")) {
      sample(args.length > 1 ? args[1] : "auto", args.length > 2 ? Long.parseLong(args[2]) : 0,
          args.length > 3 && Boolean.parseBoolean(args[3]));
      return;
    }
    int samples = args.length > 0 ? Integer.parseInt(args[0]) : 9;
    String provider = args.length > 1 ? args[1] : "auto";
    String pauseMs = args.length > 2 ? args[2] : "0";
    String encrypt = args.length > 3 ? args[3] : "false";
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<double[]> rows = new ArrayList<>();
    for (int i = 0; i < samples; i++) {
      List<String> command = new ArrayList<>(List.of(java));
      // The sample JVMs get this one's sluice.* system properties (-Dsluice.transport.encryption.engine=...).
      for (String name : System.getProperties().stringPropertyNames()) {
        if (name.startsWith("sluice.")) {
          command.add("-D" + name + "=" + System.getProperty(name));
        }
      }
      command.addAll(List.of("-cp", System.getProperty("java.class.path"),
          ColdOpenCost.class.getName(), "--sample", provider, pauseMs, encrypt));
      Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
      // The sample bounds its own waits, so its output ends; its exit gets a deadline too.
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(SAMPLE_DEADLINE_SECONDS, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("sample " + i + " did not exit: " + out);
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException("sample " + i + " failed: " + out);
      }
      for (String line : out.split("\n")) {
        if (line.startsWith("sample ")) {
          rows.add(Arrays.stream(line.substring(7).trim().split(" ")).mapToDouble(Double::parseDouble).toArray());
        }
      }
    }
    System.out.printf("cold open and connect, provider %s, encryption %s, first connect %s ms after the opens,"
        + " median of %d JVMs:%n", provider, encrypt, pauseMs, rows.size());
    for (int c = 0; c < COLUMNS.length; c++) {
      double[] v = new double[rows.size()];
      for (int r = 0; r < v.length; r++) {
        v[r] = rows.get(r)[c];
      }
      Arrays.sort(v);
      System.out.printf("  %-20s %8.1f  (min %.1f, max %.1f)%n", COLUMNS[c], v[v.length / 2], v[0], v[v.length - 1]);
    }
  }

  /** One cold JVM's figures, printed as one line for the parent. */
  private static void sample(String provider, long pauseMs, boolean encrypt) throws Exception {
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    ClassLoadingMXBean classes = ManagementFactory.getClassLoadingMXBean();
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    LoggerFactory.getLogger(ColdOpenCost.class);
    TransportConfig config = TransportConfig.of(Map.of("sluice.transport.provider", provider,
        "sluice.transport.secret", SECRET, "sluice.transport.encryption", String.valueOf(encrypt)));

    int classes0 = classes.getLoadedClassCount();
    long cpu0 = os.getProcessCpuTime();
    long thread0 = threads.getCurrentThreadCpuTime();
    long t0 = System.nanoTime();
    Transport first = Transports.open(config, MessageHandler.REJECT_ALL);
    long t1 = System.nanoTime();
    long thread1 = threads.getCurrentThreadCpuTime();
    long cpu1 = os.getProcessCpuTime();
    int classes1 = classes.getLoadedClassCount();
    Transport second = Transports.open(config, MessageHandler.REJECT_ALL);
    long t2 = System.nanoTime();
    Thread.sleep(pauseMs);
    long t2Paused = System.nanoTime();
    long cpu2Paused = os.getProcessCpuTime();
    int classes2 = classes.getLoadedClassCount();
    Connection one = second.connect(first.localAddress()).get(SAMPLE_DEADLINE_SECONDS, TimeUnit.SECONDS);
    long t3 = System.nanoTime();
    long cpu3 = os.getProcessCpuTime();
    int classes3 = classes.getLoadedClassCount();
    Connection two = first.connect(second.localAddress()).get(SAMPLE_DEADLINE_SECONDS, TimeUnit.SECONDS);
    long t4 = System.nanoTime();
    System.out.printf("sample %.1f %.1f %.1f %d %.1f %.1f %.1f %d %.1f%n",
        (t1 - t0) / 1e6, (cpu1 - cpu0) / 1e6, (thread1 - thread0) / 1e6, classes1 - classes0,
        (t2 - t1) / 1e6, (t3 - t2Paused) / 1e6, (cpu3 - cpu2Paused) / 1e6, classes3 - classes2, (t4 - t3) / 1e6);
    two.close();
    one.close();
    second.close();
    first.close();
  }
}
