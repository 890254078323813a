package io.sluice.transport.tcp;

import io.sluice.transport.MessageHandler;
import io.sluice.transport.Transport;
import io.sluice.transport.TransportConfig;
import io.sluice.transport.TransportException;
import io.sluice.transport.TransportOption;
import io.sluice.transport.TransportProvider;
import io.sluice.transport.carrier.DataPathFactory;
import io.sluice.transport.carrier.Settings;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.ServiceLoader;

/**
 * The {@code tcp} provider, built on Java NIO sockets: READs are served from a fixed set of
 * selector threads. Chosen by {@code auto}, it also reads same-host peers through the data path
 * registered as {@code META-INF/services/io.sluice.transport.carrier.DataPathFactory} (shared
 * memory), unless that path's key turns it off; chosen explicitly, it reads every peer over
 * tcp. Other providers that are a data path beside tcp open their transport with {@link
 * #openWithPath}. Stateless; thread safe.
 */
public final class TcpTransportProvider implements TransportProvider {
  /** Where {@code auto} tries tcp: after providers that move READs without the CPU. */
  static final int AUTO_PREFERENCE = 100;

  @Override
  public String name() {
    return "tcp";
  }

  @Override
  public Optional<Throwable> unavailabilityCause() {
    return Optional.empty();
  }

  @Override
  public OptionalInt autoPreference() {
    return OptionalInt.of(AUTO_PREFERENCE);
  }

  @Override
  public Transport open(TransportConfig config, MessageHandler handler) throws TransportException {
    Settings settings = Settings.from(config);
    Optional<DataPathFactory> path = Optional.empty();
    if (config.string(TransportOption.PROVIDER).equalsIgnoreCase("auto")) {
      for (DataPathFactory f : ServiceLoader.load(DataPathFactory.class, TcpTransportProvider.class.getClassLoader())) {
        if (f.usable(settings)) {
          path = Optional.of(f);
          break;
        }
      }
    }
    return new TcpTransport("tcp", settings, handler, path, false);
  }

  /**
   * Opens a tcp transport for the provider named {@code provider} that reads peers through the
   * data path {@code factory} opens for it.
   *
   * @param required whether a peer the path does not reach is refused at connect
   */
  public static Transport openWithPath(String provider, TransportConfig config, MessageHandler handler,
      DataPathFactory factory, boolean required) throws TransportException {
    return new TcpTransport(provider, Settings.from(config), handler, Optional.of(factory), required);
  }
}
