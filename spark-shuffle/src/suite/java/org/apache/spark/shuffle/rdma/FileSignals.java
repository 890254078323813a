package org.apache.spark.shuffle.rdma;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Signals between a test and the tasks of its local-cluster executors, which run on this host in
 * other JVMs: files in a folder both see. Its functions run in tasks, where the test framework is
 * not on the class path, so every wait here carries its own deadline. Stateless.
 */
final class FileSignals {
  private FileSignals() {}

  /**
   * Writes the file {@code name} in {@code folder} whole, under a name no wait matches first, so
   * whoever sees it appear reads all of {@code content}.
   */
  static void signal(Path folder, String name, String content) throws IOException {
    Path partial = Files.createTempFile(folder, ".partial-", "");
    Files.writeString(partial, content, StandardCharsets.UTF_8);
    Files.move(partial, folder.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /** The content of the file {@code name} in {@code folder}. */
  static String read(Path folder, String name) throws IOException {
    return Files.readString(folder.resolve(name), StandardCharsets.UTF_8);
  }

  /**
   * Waits until {@code folder} holds {@code count} files whose names start with {@code prefix}.
   *
   * @throws IOException if they are not there within {@code seconds}, or on an interrupt
   */
  static void await(Path folder, String prefix, int count, int seconds) throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (true) {
      try (Stream<Path> listing = Files.list(folder)) {
        if (listing.filter(f -> f.getFileName().toString().startsWith(prefix)).count() >= count) {
          return;
        }
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IOException(count + " files " + prefix + "* did not appear in " + folder + " within " + seconds
            + " s");
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted waiting for " + prefix + "* in " + folder, e);
      }
    }
  }
}
