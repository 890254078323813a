package io.sluice.transport;

/**
 * What most READ cases start from: a server transport with a region filled with a pattern, a
 * client transport with a destination, and a connection from the client to the server. Closing
 * it closes the connection and both regions; the harness closes the transports.
 */
public record ReadFixture(Transport server, Transport client, RegisteredRegion src, RegisteredRegion dst,
    Connection connection) implements AutoCloseable {

  /**
   * Opens both transports on {@code harness}, a region of {@code srcLength} bytes on the server
   * filled with the pattern of {@code seed}, a destination of {@code dstLength} bytes on the
   * client, and connects.
   */
  public static ReadFixture open(TransportHarness harness, int srcLength, int dstLength, long seed) throws Exception {
    Transport server = harness.open(MessageHandler.REJECT_ALL);
    Transport client = harness.open(MessageHandler.REJECT_ALL);
    RegisteredRegion src = server.allocate(srcLength);
    RegisteredRegion dst = null;
    try {
      dst = client.allocate(dstLength);
      TransportTestSupport.fillPattern(src, seed);
      return new ReadFixture(server, client, src, dst, TransportHarness.connect(client, server));
    } catch (Exception | Error e) {
      if (dst != null) {
        dst.close();
      }
      src.close();
      throw e;
    }
  }

  @Override
  public void close() {
    try (RegisteredRegion s = src; RegisteredRegion d = dst; Connection c = connection) {
      // closed in reverse order: the connection, then the destination, then the source
    }
  }
}
