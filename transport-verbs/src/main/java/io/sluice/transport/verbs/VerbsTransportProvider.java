package io.sluice.transport.verbs;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportProvider;
import io.sluice.transport.TransportUnavailableException;
import io.sluice.transport.config.ConfigKey;
import io.sluice.transport.verbs.config.VerbsKeys;
import io.sluice.transport.verbs.nativelib.DisniRuntime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The {@code verbs} provider: READs move over RDMA reliable-connected queue pairs (DiSNI 2.1
 * over the project's libdisni.so); authentication, messages and set-up run over the tcp
 * transport. Available when the library loads (which needs {@value
 * DisniRuntime#REQUIRED_JVM_FLAG}) and an RDMA device has an active port. The transport itself
 * lives in the DiSNI class loader ({@code io.sluice.transport.verbs.provider}); this class only
 * asks and delegates, and must never name those classes directly. Stateless; thread safe.
 */
public final class VerbsTransportProvider implements TransportProvider {
  private static final String OPENER = "io.sluice.transport.verbs.provider.VerbsOpener";
  private static final Path SYS_DEVICES = Path.of("/sys/class/infiniband");

  @Override
  public String name() {
    return "verbs";
  }

  @Override
  public boolean isAvailable() {
    return unavailabilityCause().isEmpty();
  }

  @Override
  public Optional<Throwable> unavailabilityCause() {
    // sysfs first: on a host without an RDMA port (most), loading the native library is tens of
    // milliseconds that every transport open would pay for nothing.
    if (!anyActivePort(SYS_DEVICES)) {
      return Optional.of(new TransportUnavailableException(
          "no RDMA port is ACTIVE (" + SYS_DEVICES + "/*/ports/*/state): no device, or none is up"));
    }
    Optional<Throwable> library = DisniRuntime.unavailabilityCause();
    if (library.isPresent()) {
      return Optional.of(new TransportUnavailableException(
          "the native verbs library cannot be used: " + library.get().getMessage(), library.get()));
    }
    int devices = DisniRuntime.get().deviceCount();
    if (devices <= 0) {
      return Optional.of(new TransportUnavailableException(devices == 0
          ? "no RDMA device (libibverbs lists none)" : "listing RDMA devices failed (errno " + -devices + ")"));
    }
    return Optional.empty();
  }

  /** Whether any port of any device under {@code root} reports the ACTIVE state. */
  static boolean anyActivePort(Path root) {
    try (Stream<Path> devices = Files.list(root)) {
      return devices.anyMatch(VerbsTransportProvider::hasActivePort);
    } catch (IOException e) {
      return false;
    }
  }

  private static boolean hasActivePort(Path device) {
    try (Stream<Path> ports = Files.list(device.resolve("ports"))) {
      return ports.anyMatch(p -> {
        try {
          return Files.readString(p.resolve("state")).contains("ACTIVE");
        } catch (IOException e) {
          return false;
        }
      });
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public List<ConfigKey<?>> keys() {
    return VerbsKeys.ALL;
  }

  @Override
  public Transport open(TransportConfig config, MessageHandler handler) throws TransportException {
    ensureAvailability();
    return DisniRuntime.get().newInstance(OPENER, TransportProvider.class).open(config, handler);
  }
}
