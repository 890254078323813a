package io.sluice.transport.crypto;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What sealing and opening the first MiBs of records costs each AES-GCM engine in a cold JVM, the
 * way an executor's first shuffle pays it: each sample is a fresh JVM that seals and opens 64 MiB
 * in 64 KiB records (direct buffers, as a connection does) and reports the CPU time of this
 * process (JIT threads included) for the first 1, 8 and all 64 MiB, and the wall time. The
 * parent runs the engines' samples alternated (A B A B) and prints medians.
 *
 * <p>Run after {@code mvn -pl transport test-compile}: {@code java -cp
 * target/test-classes:target/classes io.sluice.transport.crypto.ColdCipherCost [samples]}. A tool,
 * not a test: it asserts nothing.
 */
public final class ColdCipherCost {
  private static final int RECORD = 64 * 1024;
  private static final int[] MARKS_MIB = {1, 8, 64};

  private ColdCipherCost() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 1 && args[0].equals("--sample")) {
      sample(AesGcmEngine.valueOf(args[1]));
      return;
    }
    int samples = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<AesGcmEngine> engines = new ArrayList<>();
    for (AesGcmEngine e : AesGcmEngine.values()) {
      if (e.unavailabilityCause().isEmpty()) {
        engines.add(e);
      }
    }
    double[][][] rows = new double[engines.size()][samples][];
    for (int i = 0; i < samples; i++) {
      for (int e = 0; e < engines.size(); e++) {
        Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
            ColdCipherCost.class.getName(), "--sample", engines.get(e).name())
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
          throw new IllegalStateException("sample failed: " + out);
        }
        rows[e][i] = Arrays.stream(out.substring(out.lastIndexOf("sample ") + 7).split(" "))
            .mapToDouble(Double::parseDouble).toArray();
      }
    }
    System.out.printf("seal + open of 64 KiB records in a cold JVM, median of %d JVMs per engine (alternated):%n", samples);
    System.out.printf("  %-8s %14s %14s %14s %14s %16s%n", "engine", "cpu ms 1 MiB", "cpu ms 8 MiB", "cpu ms 64 MiB",
        "wall ms 64 MiB", "MB/s 64 MiB wall");
    for (int e = 0; e < engines.size(); e++) {
      double[] med = new double[rows[e][0].length];
      for (int c = 0; c < med.length; c++) {
        double[] v = new double[samples];
        for (int i = 0; i < samples; i++) {
          v[i] = rows[e][i][c];
        }
        Arrays.sort(v);
        med[c] = v[samples / 2];
      }
      System.out.printf("  %-8s %14.1f %14.1f %14.1f %14.1f %16.0f%n", engines.get(e).id(), med[0], med[1], med[2], med[3],
          64 * 1.048576 * 1000 / med[3]);
    }
  }

  private static void sample(AesGcmEngine engine) {
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    byte[] key = new byte[AesGcm.KEY_LENGTH];
    ByteBuffer plain = ByteBuffer.allocateDirect(RECORD);
    for (int i = 0; i < RECORD; i++) {
      plain.put(i, (byte) i);
    }
    ByteBuffer sealed = ByteBuffer.allocateDirect(RECORD + AesGcm.TAG_LENGTH);
    ByteBuffer opened = ByteBuffer.allocateDirect(RECORD);
    ByteBuffer header = ByteBuffer.allocate(16);
    long cpu0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    AesGcm sealer = engine.sealer(key);
    AesGcm opener = engine.opener(key);
    StringBuilder line = new StringBuilder("sample");
    int mark = 0;
    try {
      for (int r = 1; r <= 64 * 16; r++) {
        sealer.startSeal(r, header.clear());
        sealer.finishSeal(plain.duplicate(), sealed.clear());
        opener.open(r, header.clear(), sealed.flip(), opened.clear());
        if (r == MARKS_MIB[mark] * 16) {
          line.append(' ').append((os.getProcessCpuTime() - cpu0) / 1e6);
          mark++;
        }
      }
    } catch (javax.crypto.AEADBadTagException e) {
      throw new IllegalStateException(e);
    }
    line.append(' ').append((System.nanoTime() - t0) / 1e6);
    System.out.println(line);
  }
}
