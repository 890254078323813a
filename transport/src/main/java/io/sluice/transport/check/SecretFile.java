package io.sluice.transport.check;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * The secret kept in a file, as ssh keeps a private key: the file must be readable by its owner
 * only; one that its group or others may read, write or run is refused, since anyone who can
 * read it can join the transport. The secret is the file's text without trailing white space (a
 * file written by {@code echo} ends with a newline). Stateless.
 */
final class SecretFile {
  /** Every permission but the owner's: none may be set. */
  private static final Set<PosixFilePermission> NOT_OWNERS = EnumSet.of(
      PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE,
      PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);

  private SecretFile() {}

  /**
   * Reads the secret from {@code file}.
   *
   * @throws IllegalArgumentException if the file cannot be read, others may read it, or it is empty;
   *     the message says how to fix it and never holds the file's contents
   */
  static String read(Path file) {
    Set<PosixFilePermission> permissions;
    try {
      permissions = Files.getPosixFilePermissions(file);
    } catch (IOException e) {
      throw new IllegalArgumentException("--secret-file " + file + ": cannot read it (" + e + ")", e);
    } catch (UnsupportedOperationException e) {
      throw new IllegalArgumentException("--secret-file " + file + ": its file system has no owner-only"
          + " permissions to check; use " + HostCheck.SECRET_ENV + " instead", e);
    }
    if (!Files.isRegularFile(file)) {
      throw new IllegalArgumentException("--secret-file " + file + ": not a regular file");
    }
    Set<PosixFilePermission> others = EnumSet.copyOf(NOT_OWNERS);
    others.retainAll(permissions);
    if (!others.isEmpty()) {
      throw new IllegalArgumentException("--secret-file " + file + ": permissions "
          + PosixFilePermissions.toString(permissions) + " are too open: others than its owner may use it; it is"
          + " refused (chmod 600 " + file + ")");
    }
    String secret;
    try {
      secret = Files.readString(file).stripTrailing();
    } catch (IOException e) {
      throw new IllegalArgumentException("--secret-file " + file + ": cannot read it (" + e + ")", e);
    }
    if (secret.isEmpty()) {
      throw new IllegalArgumentException("--secret-file " + file + " is empty");
    }
    return secret;
  }
}
