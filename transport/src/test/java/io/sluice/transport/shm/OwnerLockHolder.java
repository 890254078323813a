package io.sluice.transport.shm;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A second process for {@link ShmArenaTest}: locks the file named by its argument as an arena's
 * owner does, prints {@code locked}, and holds the lock until its standard input closes.
 */
final class OwnerLockHolder {
  private OwnerLockHolder() {}

  public static void main(String[] args) throws IOException {
    try (FileChannel ch = FileChannel.open(Path.of(args[0]), StandardOpenOption.READ, StandardOpenOption.WRITE);
        var lock = ch.lock()) {
      System.out.println("locked");
      System.out.flush();
      while (System.in.read() >= 0) {
        // held until the test closes our input
      }
    }
  }
}
