package io.sluice.flight;

/**
 * An action of the application's own that a {@link io.sluice.flight.SluiceFlightServer} answers
 * beside its tables (Flight's DoAction): the request body in, one result body out. Runs on a gRPC
 * thread after the server's call authentication; must be thread safe and quick.
 */
public interface ServerAction {
  /** What the action does, as ListActions shows it. */
  String description();

  /**
   * Answers one call.
   *
   * @throws SecurityException to refuse the call (UNAUTHORIZED; its text goes to the caller)
   * @throws RuntimeException to fail the call (INTERNAL; its text goes to the caller)
   */
  byte[] handle(byte[] body);

  /** An action of {@code description} answered by {@code handler}. */
  static ServerAction of(String description, java.util.function.UnaryOperator<byte[]> handler) {
    return new ServerAction() {
      @Override
      public String description() {
        return description;
      }

      @Override
      public byte[] handle(byte[] body) {
        return handler.apply(body);
      }
    };
  }
}
