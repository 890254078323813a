package io.sluice.transport.check;

import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Stream;

/**
 * What the host says about itself, read from /sys, /proc and the file system without native
 * code, so it answers on any Linux host in milliseconds: RDMA devices and their ports, GIDs and
 * the network interface behind each, the locked-memory limit, and free space under a directory.
 * Stateless; every method reads afresh.
 */
final class HostFacts {
  private HostFacts() {}

  /** One port of an RDMA device: its state, link layer, and the GIDs with the interface each belongs to. */
  record Port(String device, int number, String state, String linkLayer, List<Gid> gids) {
    boolean active() {
      return state.contains("ACTIVE");
    }
  }

  /** A GID of a port and the network interface it belongs to (empty for InfiniBand GIDs). */
  record Gid(int index, String gid, String type, Optional<String> netdev) {}

  /** Every port of every device under {@code root} (/sys/class/infiniband); empty without devices. */
  static List<Port> ports(Path root) {
    return ports(root, interfacesByMac());
  }

  /**
   * As {@link #ports(Path)}, with the host's network interfaces by hardware address ({@code
   * interfacesByMac}, lower-case hex without separators): iWARP devices name no interface for
   * their GIDs, whose first six bytes are the MAC address of the interface they run on.
   */
  static List<Port> ports(Path root, Map<String, String> interfacesByMac) {
    List<Port> ports = new ArrayList<>();
    for (Path device : list(root)) {
      for (Path port : list(device.resolve("ports"))) {
        int number;
        try {
          number = Integer.parseInt(port.getFileName().toString());
        } catch (NumberFormatException e) {
          continue;
        }
        ports.add(new Port(device.getFileName().toString(), number, read(port.resolve("state")).orElse("unknown"),
            read(port.resolve("link_layer")).orElse("unknown"), gids(port, interfacesByMac)));
      }
    }
    return ports;
  }

  private static List<Gid> gids(Path port, Map<String, String> interfacesByMac) {
    List<Gid> gids = new ArrayList<>();
    for (Path g : list(port.resolve("gids"))) {
      Optional<String> value = read(g);
      if (value.isEmpty() || value.get().replace(":", "").chars().allMatch(c -> c == '0')) {
        continue; // an empty slot of the table
      }
      String index = g.getFileName().toString();
      Optional<String> netdev = read(port.resolve("gid_attrs/ndevs/" + index));
      if (netdev.isEmpty()) {
        String hex = value.get().replace(":", "").toLowerCase(Locale.ROOT);
        netdev = hex.length() >= 12 ? Optional.ofNullable(interfacesByMac.get(hex.substring(0, 12))) : Optional.empty();
      }
      gids.add(new Gid(Integer.parseInt(index), value.get(),
          read(port.resolve("gid_attrs/types/" + index)).orElse(""), netdev));
    }
    gids.sort((a, b) -> Integer.compare(a.index(), b.index()));
    return gids;
  }

  /** The host's network interfaces that have a 6-byte hardware address, by that address in hex. */
  static Map<String, String> interfacesByMac() {
    Map<String, String> byMac = new HashMap<>();
    try {
      for (NetworkInterface n : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        byte[] mac = n.getHardwareAddress();
        if (mac != null && mac.length == 6) {
          byMac.putIfAbsent(HexFormat.of().formatHex(mac), n.getName());
        }
      }
    } catch (SocketException e) {
      return Map.of();
    }
    return byMac;
  }

  /** The addresses of network interface {@code name}, empty if there is none of that name. */
  static List<InetAddress> addresses(String name) {
    try {
      NetworkInterface n = NetworkInterface.getByName(name);
      return n == null ? List.of() : Collections.list(n.getInetAddresses());
    } catch (SocketException e) {
      return List.of();
    }
  }

  /**
   * The soft limit on locked memory from {@code limits} (/proc/self/limits), in bytes; empty
   * when unlimited, or when the file cannot be read (then {@link #memlockReadable} says so).
   */
  static OptionalLong memlockBytes(Path limits) {
    Optional<String> line = lines(limits).stream().filter(l -> l.startsWith("Max locked memory")).findFirst();
    if (line.isEmpty()) {
      return OptionalLong.empty();
    }
    String[] parts = line.get().substring("Max locked memory".length()).trim().split("\\s+");
    if (parts[0].equals("unlimited")) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(Long.parseLong(parts[0]));
  }

  static boolean memlockReadable(Path limits) {
    return lines(limits).stream().anyMatch(l -> l.startsWith("Max locked memory"));
  }

  /** Bit 14 of a capability set: CAP_IPC_LOCK, which lifts the locked-memory limit. */
  private static final int CAP_IPC_LOCK = 14;

  /**
   * Whether the effective capabilities in {@code status} (/proc/self/status, its "CapEff:" line of
   * hex digits) include CAP_IPC_LOCK; false when the file or the line cannot be read.
   */
  static boolean holdsIpcLock(Path status) {
    Optional<String> line = lines(status).stream().filter(l -> l.startsWith("CapEff:")).findFirst();
    if (line.isEmpty()) {
      return false;
    }
    try {
      return new BigInteger(line.get().substring("CapEff:".length()).trim(), 16).testBit(CAP_IPC_LOCK);
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /** Bytes free for an unprivileged writer under {@code dir}; empty if it does not exist. */
  static OptionalLong freeBytes(Path dir) {
    try {
      FileStore store = Files.getFileStore(dir);
      return OptionalLong.of(store.getUsableSpace());
    } catch (IOException e) {
      return OptionalLong.empty();
    }
  }

  private static List<Path> list(Path dir) {
    try (Stream<Path> s = Files.list(dir)) {
      return s.sorted().toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  private static Optional<String> read(Path file) {
    try {
      return Optional.of(Files.readString(file).trim());
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static List<String> lines(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException e) {
      return List.of();
    }
  }
}
