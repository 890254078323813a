package io.sluice.transport.carrier;

import io.sluice.transport.NodeAddress;
import io.sluice.transport.handshake.Handshake;
import io.sluice.transport.wire.FrameHeader;
import io.sluice.transport.wire.FrameType;
import io.sluice.transport.wire.RecordLayer;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A man in the middle for tests: clients connect to it, it connects to the real server and
 * relays the byte streams frame by frame, letting a {@link Tamper} alter, drop, duplicate or
 * inject frames in either direction. It knows where each direction's record protection starts
 * (after AUTH from the client, from AUTH_OK from the server) so it can cut frames with their
 * tags, and records every frame the server sent. One connection at a time; two daemon threads.
 */
final class TamperingRelay implements AutoCloseable {
  enum Direction { TO_SERVER, TO_CLIENT }

  /** Decides what is forwarded in place of one whole frame (header, payload and any tag). */
  @FunctionalInterface
  interface Tamper {
    List<byte[]> frame(Direction d, FrameHeader h, byte[] wholeFrame);
  }

  private final ServerSocket listener;
  private final NodeAddress server;
  private final Tamper tamper;
  private final List<FrameHeader> fromServer = new CopyOnWriteArrayList<>();
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  /** Whether HELLO or CHALLENGE asked for encryption (then frames travel in records). */
  private final AtomicBoolean encrypted = new AtomicBoolean();
  /** Where the flags byte sits in HELLO's and CHALLENGE's payload: after u16 version and i64 node. */
  private static final int HANDSHAKE_FLAGS_AT = 2 + 8;

  TamperingRelay(NodeAddress server, Tamper tamper) throws IOException {
    this.server = server;
    this.tamper = tamper;
    this.listener = new ServerSocket(0, 4, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::acceptOne, "relay-accept");
    t.setDaemon(true);
    t.start();
  }

  NodeAddress address() {
    return new NodeAddress("127.0.0.1", listener.getLocalPort());
  }

  /** Every frame header the server sent through this relay, in order. */
  List<FrameHeader> framesFromServer() {
    return fromServer;
  }

  private void acceptOne() {
    try {
      Socket client = listener.accept();
      Socket upstream = new Socket(server.host(), server.port());
      sockets.add(client);
      sockets.add(upstream);
      pump(client, upstream, Direction.TO_SERVER);
      pump(upstream, client, Direction.TO_CLIENT);
    } catch (IOException e) {
      close();
    }
  }

  private void pump(Socket from, Socket to, Direction d) {
    Thread t = new Thread(() -> {
      try {
        DataInputStream in = new DataInputStream(from.getInputStream());
        OutputStream out = to.getOutputStream();
        boolean protectedFrames = false;
        while (true) {
          byte[] head = new byte[FrameHeader.LENGTH];
          in.readFully(head);
          FrameHeader h = FrameHeader.decode(ByteBuffer.wrap(head), Integer.MAX_VALUE);
          if (d == Direction.TO_CLIENT && h.type() == FrameType.AUTH_OK) {
            protectedFrames = true;
          }
          int rest = (int) (protectedFrames ? RecordLayer.protectedLength(encrypted.get(), h.payloadLength())
              : h.payloadLength());
          byte[] whole = new byte[FrameHeader.LENGTH + rest];
          System.arraycopy(head, 0, whole, 0, FrameHeader.LENGTH);
          in.readFully(whole, FrameHeader.LENGTH, rest);
          if ((h.type() == FrameType.HELLO || h.type() == FrameType.CHALLENGE)
              && (whole[FrameHeader.LENGTH + HANDSHAKE_FLAGS_AT] & Handshake.FLAG_ENCRYPT) != 0) {
            encrypted.set(true);
          }
          if (d == Direction.TO_CLIENT) {
            fromServer.add(h);
          }
          for (byte[] f : tamper.frame(d, h, whole)) {
            out.write(f);
          }
          out.flush();
          if (d == Direction.TO_SERVER && h.type() == FrameType.AUTH) {
            protectedFrames = true;
          }
        }
      } catch (IOException | RuntimeException e) {
        close(); // either end closed, or a frame the relay cannot parse: stop relaying
      }
    }, "relay-" + d);
    t.setDaemon(true);
    t.start();
  }

  /** A copy of {@code frame} with one bit flipped at {@code index} (negative: from the end). */
  static byte[] flipped(byte[] frame, int index) {
    byte[] copy = frame.clone();
    int i = index >= 0 ? index : copy.length + index;
    copy[i] ^= 0x01;
    return copy;
  }

  @Override
  public void close() {
    try {
      listener.close();
    } catch (IOException ignored) {
      // closing a test relay
    }
    for (Socket s : sockets) {
      try {
        s.close();
      } catch (IOException ignored) {
        // closing a test relay
      }
    }
  }

}
