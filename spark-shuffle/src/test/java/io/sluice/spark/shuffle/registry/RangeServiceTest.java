package io.sluice.spark.shuffle.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.spark.shuffle.protocol.RangeProtocol;
import io.sluice.transport.LoopbackTransport;
import io.sluice.transport.MessageTooLargeException;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** A range request's answer is bounded before it is built: a small request cannot make a huge answer. */
class RangeServiceTest {
  private static final int SHUFFLE = 5;
  private static final int PARTITIONS = 2_000;

  @RegisterExtension
  final LoopbackTransport loopback = new LoopbackTransport("range-service-test");

  @TempDir
  Path dir;

  private ShuffleFiles files() {
    return TestShuffleFiles.in(dir);
  }

  /** A map output of {@link #PARTITIONS} partitions of one byte each. */
  private void commit(long mapId) throws IOException {
    Files.write(files().dataFile(SHUFFLE, mapId).toPath(), new byte[PARTITIONS]);
    try (DataOutputStream index = new DataOutputStream(Files.newOutputStream(files().indexFile(SHUFFLE, mapId).toPath()))) {
      for (long offset = 0; offset <= PARTITIONS; offset++) {
        index.writeLong(offset);
      }
    }
  }

  /** {@code count} queries, each for every partition of map 0: 16 bytes each, an answer of ~24 KB each. */
  private static ByteBuffer amplifyingRequest(int count) {
    List<RangeProtocol.Query> queries = new ArrayList<>(Collections.nCopies(count, new RangeProtocol.Query(0, 0, PARTITIONS)));
    return RangeProtocol.encodeRequest(SHUFFLE, queries);
  }

  @Test
  void aRequestWhoseAnswerCouldNotBeSentIsRefusedBeforeAnythingIsBuilt() throws Exception {
    commit(0);
    long bound = 1 << 20;
    try (MapOutputRegistry registry = new MapOutputRegistry(loopback.transport(), files(), 1 << 20)) {
      RangeService service = new RangeService(bound);
      service.serve(registry);
      // 20,000 queries in 320 KB ask for about 480 MB of answers.
      ByteBuffer request = amplifyingRequest(20_000);
      assertTrue(request.remaining() < 330_000);
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> service.handle(1, request).get());
      assertInstanceOf(MessageTooLargeException.class, e.getCause());
      assertTrue(e.getCause().getMessage().contains("at least"), e.getCause().getMessage());
      // A request within the bound is answered.
      ByteBuffer answer = service.handle(1, amplifyingRequest(2)).get();
      assertEquals(RangeProtocol.responseBytes(Collections.nCopies(2, new RangeProtocol.Query(0, 0, PARTITIONS))),
          answer.remaining());
    }
  }

  @Test
  void theBoundMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> new RangeService(0));
  }
}
