package io.sluice.perf.scale;

import java.util.HashMap;
import java.util.Map;

/**
 * Reads the text of Linux's {@code /proc} files that the scale benchmark samples: a process's
 * {@code status} (threads, resident and locked memory) and a network namespace's TCP tables
 * ({@code /proc/<pid>/net/tcp} and {@code tcp6}: each socket's endpoints, state and inode, which
 * the inodes behind a process's {@code fd/} links name). Parsing only, no I/O, so it is tested on
 * fixed text. Stateless.
 */
final class ProcTables {
  /** The kernel's TCP state number of an established connection ({@code TCP_ESTABLISHED}). */
  static final int ESTABLISHED = 1;
  /** The kernel's TCP state number of a listening socket ({@code TCP_LISTEN}). */
  static final int LISTEN = 10;

  private ProcTables() {}

  /** One TCP socket: its endpoints as {@code a.b.c.d:port} (IPv4-mapped IPv6 shown as IPv4), state and inode. */
  record TcpSocket(String local, String remote, int state, long inode) {
    int localPort() {
      return port(local);
    }

    int remotePort() {
      return port(remote);
    }

    private static int port(String endpoint) {
      return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }
  }

  /** What the benchmark reads from a {@code status} file; kB as the kernel counts them, 0 where a field is missing. */
  record Status(int threads, long rssKb, long lockedKb, long pinnedKb) {}

  /** The {@code Threads}, {@code VmRSS}, {@code VmLck} and {@code VmPin} fields of a {@code status} file. */
  static Status status(String text) {
    Map<String, Long> fields = new HashMap<>();
    for (String line : text.split("\n")) {
      int colon = line.indexOf(':');
      if (colon <= 0) {
        continue;
      }
      String key = line.substring(0, colon);
      if (key.equals("Threads") || key.equals("VmRSS") || key.equals("VmLck") || key.equals("VmPin")) {
        String value = line.substring(colon + 1).trim();
        int space = value.indexOf(' ');
        fields.put(key, Long.parseLong(space < 0 ? value : value.substring(0, space)));
      }
    }
    return new Status(fields.getOrDefault("Threads", 0L).intValue(), fields.getOrDefault("VmRSS", 0L),
        fields.getOrDefault("VmLck", 0L), fields.getOrDefault("VmPin", 0L));
  }

  /**
   * Every socket of a {@code net/tcp} or {@code net/tcp6} table by inode (sockets without an
   * inode, such as those in TIME_WAIT, are left out).
   *
   * @throws IllegalArgumentException for a line that is not a socket table row
   */
  static Map<Long, TcpSocket> tcpTable(String text) {
    Map<Long, TcpSocket> sockets = new HashMap<>();
    String[] lines = text.split("\n");
    for (int i = 1; i < lines.length; i++) {
      String line = lines[i].trim();
      if (line.isEmpty()) {
        continue;
      }
      String[] f = line.split("\\s+");
      if (f.length < 10) {
        throw new IllegalArgumentException("not a TCP table row: '" + line + "'");
      }
      long inode = Long.parseLong(f[9]);
      if (inode == 0) {
        continue;
      }
      sockets.put(inode, new TcpSocket(endpoint(f[1]), endpoint(f[2]), Integer.parseInt(f[3], 16), inode));
    }
    return sockets;
  }

  /**
   * An endpoint as the kernel prints it, {@code ADDR:PORT} in hexadecimal, where ADDR is one
   * (IPv4) or four (IPv6) 32-bit words each in the machine's byte order (little-endian here).
   */
  static String endpoint(String hex) {
    int colon = hex.indexOf(':');
    if (colon < 0) {
      throw new IllegalArgumentException("not an endpoint: '" + hex + "'");
    }
    String addr = hex.substring(0, colon);
    int port = Integer.parseInt(hex.substring(colon + 1), 16);
    if (addr.length() != 8 && addr.length() != 32) {
      throw new IllegalArgumentException("not an IPv4 or IPv6 address: '" + addr + "'");
    }
    byte[] bytes = new byte[addr.length() / 2];
    for (int word = 0; word < addr.length() / 8; word++) {
      for (int b = 0; b < 4; b++) {
        // Each word is printed as a number, so its lowest byte (the first on the wire) comes last.
        int at = word * 8 + (3 - b) * 2;
        bytes[word * 4 + b] = (byte) Integer.parseInt(addr.substring(at, at + 2), 16);
      }
    }
    return address(bytes) + ":" + port;
  }

  private static String address(byte[] b) {
    if (b.length == 4) {
      return (b[0] & 0xff) + "." + (b[1] & 0xff) + "." + (b[2] & 0xff) + "." + (b[3] & 0xff);
    }
    boolean mapped = true;
    for (int i = 0; i < 10; i++) {
      mapped &= b[i] == 0;
    }
    mapped &= (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
    if (mapped) {
      return address(new byte[] {b[12], b[13], b[14], b[15]});
    }
    StringBuilder s = new StringBuilder("[");
    for (int i = 0; i < 16; i += 2) {
      s.append(i == 0 ? "" : ":").append(Integer.toHexString(((b[i] & 0xff) << 8) | (b[i + 1] & 0xff)));
    }
    return s.append(']').toString();
  }

  /**
   * The soft limits of a {@code limits} file that the scale model needs: open files and locked
   * memory (bytes); -1 for "unlimited" or a missing row.
   */
  record Limits(long openFiles, long lockedBytes) {}

  static Limits limits(String text) {
    long files = -1;
    long locked = -1;
    for (String line : text.split("\n")) {
      if (line.startsWith("Max open files")) {
        files = soft(line, "Max open files");
      } else if (line.startsWith("Max locked memory")) {
        locked = soft(line, "Max locked memory");
      }
    }
    return new Limits(files, locked);
  }

  private static long soft(String line, String name) {
    String value = line.substring(name.length()).trim().split("\\s+")[0];
    return value.equals("unlimited") ? -1 : Long.parseLong(value);
  }

  /** The inode a {@code fd/} link names when it is a socket ({@code socket:[12345]}), or -1. */
  static long socketInode(String linkTarget) {
    if (!linkTarget.startsWith("socket:[") || !linkTarget.endsWith("]")) {
      return -1;
    }
    return Long.parseLong(linkTarget.substring("socket:[".length(), linkTarget.length() - 1));
  }
}
