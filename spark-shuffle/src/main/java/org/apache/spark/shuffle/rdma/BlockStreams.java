package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.RegionInputStream;
import io.sluice.spark.shuffle.registry.MapOutputRegistry;
import io.sluice.transport.Checksums;
import java.io.IOException;
import java.io.File;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Enumeration;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.IntConsumer;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.storage.BlockId;
import scala.Option;

/**
 * The raw block streams of one reduce task: first the blocks this executor wrote (read from its
 * own files; before each, the READs that arrived range answers allow are issued, so they are in
 * flight while local blocks are read), then the remote ranges of
 * a {@link RemoteFetcher} split into their blocks. A fetched range's memory is released when the
 * iterator moves past its last block, i.e. after the consumer has read that block's stream.
 *
 * <p>With {@code verify}, a local block of a map output this executor has registered is checked
 * against the CRC32C taken at registration before it is handed out, as remote blocks are: a data
 * file changed on disk since is a fetch failure carrying Spark's diagnosis, never rows.
 *
 * <p>With {@code concatenate}, consecutive blocks of one map output (a fetched range's, or this
 * executor's own) come as one stream of their bytes in order, named by the first block, for one
 * decompressor and deserializer to read, as Spark's reader fetches a run of blocks in batch; the
 * caller asks for it only where the codec's and the serializer's streams concatenate.
 *
 * <p>Not thread safe: one reduce task drives it. {@link #close} releases everything it holds.
 */
final class BlockStreams implements Iterator<BlockStreams.BlockStream>, AutoCloseable {
  /** One block's serialized (and possibly compressed) bytes. */
  record BlockStream(BlockId id, InputStream stream) {}

  private final int shuffleId;
  private final Deque<FetchPlan.Block> local;
  private final IndexShuffleBlockResolver resolver;
  private final RemoteFetcher remote;
  private final ShuffleReadMetricsReporter metrics;
  private final MapOutputRegistry registry;
  private final boolean verify;
  private final CorruptionDiagnosis diagnosis;
  /** About how many bytes of one map output's own blocks are read at once as a run (by the plan's sizes). */
  static final long LOCAL_RUN_BYTES = 4 << 20;
  /** The most bytes a local run is read with at once; past it (the plan's sizes were averages), a block at a time. */
  static final long MAX_LOCAL_RUN_BYTES = 16 << 20;

  private final boolean concatenate;
  private final IntConsumer blocksInRun;
  private Optional<RemoteFetcher.Fetched> current = Optional.empty();
  private int nextSlice;
  private boolean remoteDone;

  BlockStreams(int shuffleId, FetchPlan plan, IndexShuffleBlockResolver resolver, RemoteFetcher remote,
      ShuffleReadMetricsReporter metrics, MapOutputRegistry registry, boolean verify, CorruptionDiagnosis diagnosis,
      boolean concatenate, IntConsumer blocksInRun) {
    this.shuffleId = shuffleId;
    this.concatenate = concatenate;
    this.blocksInRun = blocksInRun;
    this.registry = registry;
    this.verify = verify;
    this.diagnosis = diagnosis;
    this.local = new ArrayDeque<>(plan.local());
    this.resolver = resolver;
    this.remote = remote;
    this.metrics = metrics;
  }

  @Override
  public boolean hasNext() {
    while (true) {
      if (current.isPresent() && nextSlice < current.get().slices.size()) {
        return true;
      }
      current.ifPresent(RemoteFetcher.Fetched::close);
      current = Optional.empty();
      if (!local.isEmpty()) {
        return true;
      }
      if (remoteDone) {
        return false;
      }
      current = remote.next();
      nextSlice = 0;
      remoteDone = current.isEmpty();
    }
  }

  @Override
  public BlockStream next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    if (current.isPresent()) {
      RemoteFetcher.Fetched f = current.get();
      if (concatenate && nextSlice == 0 && f.slices.size() > 1) {
        Optional<InputStream> all = f.streamOfAll();
        if (all.isPresent()) {
          nextSlice = f.slices.size();
          blocksInRun.accept(nextSlice);
          return new BlockStream(f.slices.get(0).id(), all.get());
        }
      }
      RemoteFetcher.Slice s = f.slices.get(nextSlice++);
      return new BlockStream(s.id(), f.stream(s));
    }
    FetchPlan.Block first = local.poll();
    // A run of this map output's blocks in partition order, up to about LOCAL_RUN_BYTES by the plan's sizes.
    List<FetchPlan.Block> run = new ArrayList<>(List.of(first));
    long planned = first.size();
    while (concatenate && sameMapNext(first) && local.peek().id().reduceId() > run.get(run.size() - 1).id().reduceId()
        && planned + local.peek().size() <= LOCAL_RUN_BYTES) {
      FetchPlan.Block b = local.poll();
      run.add(b);
      planned += b.size();
    }
    if (run.size() == 1) {
      return new BlockStream(first.id(), localStream(first));
    }
    return new BlockStream(first.id(), localRun(run));
  }

  /**
   * The blocks of {@code run}, blocks of one map output of this executor's in partition order,
   * read with one positional read of its data file into memory of this task's, where each is
   * checked and from which it is then deserialized (never through a mapping, which a process
   * rewriting or shortening the file could change after the check). Their offsets come from one
   * read of the index, which must give every partition between them that the plan leaves out no
   * bytes, so nothing unchecked lies in the run. Read one block at a time instead where they
   * come to more than {@link #MAX_LOCAL_RUN_BYTES} (the plan's sizes can be averages). Counted as
   * read; a file that does not read back as its index says is a fetch failure.
   */
  private InputStream localRun(List<FetchPlan.Block> run) {
    FetchPlan.Block first = run.get(0);
    FetchPlan.Block last = run.get(run.size() - 1);
    long mapId = first.id().mapId();
    int from = first.id().reduceId();
    int to = last.id().reduceId() + 1;
    long[] offsets;
    File indexFile = resolver.getIndexFile(shuffleId, mapId, Option.empty());
    try {
      try (FileChannel index = FileChannel.open(indexFile.toPath(), StandardOpenOption.READ)) {
        offsets = MapOutputRegistry.offsets(index, indexFile, from, to - from + 1);
      }
      boolean[] planned = new boolean[to - from];
      for (FetchPlan.Block b : run) {
        planned[b.id().reduceId() - from] = true;
      }
      for (int p = 0; p < planned.length; p++) {
        long length = offsets[p + 1] - offsets[p];
        if (length < 0 || (!planned[p] && length != 0)) {
          throw new IOException("its index gives partition " + (from + p) + " " + length + " bytes"
              + (planned[p] ? "" : ", where its map status says it has none"));
        }
      }
    } catch (IOException | RuntimeException e) {
      throw FetchFailures.fail(first.location(), shuffleId, mapId, first.mapIndex(), from,
          "local shuffle blocks " + first.id() + " to " + last.id() + " are unreadable: " + e, e);
    }
    long total = offsets[offsets.length - 1] - offsets[0];
    if (total > MAX_LOCAL_RUN_BYTES) {
      Iterator<FetchPlan.Block> blocks = run.iterator();
      Enumeration<InputStream> streams = new Enumeration<>() {
        @Override
        public boolean hasMoreElements() {
          return blocks.hasNext();
        }

        @Override
        public InputStream nextElement() {
          return localStream(blocks.next());
        }
      };
      blocksInRun.accept(run.size());
      return new SequenceInputStream(streams);
    }
    remote.progress();
    ByteBuffer bytes = ByteBuffer.allocate((int) total);
    try (FileChannel data = FileChannel.open(resolver.getDataFile(shuffleId, mapId).toPath(), StandardOpenOption.READ)) {
      while (bytes.hasRemaining()) {
        if (data.read(bytes, offsets[0] + bytes.position()) < 0) {
          throw new IOException("its data file ends " + (total - bytes.position()) + " bytes before its index says");
        }
      }
    } catch (IOException | RuntimeException e) {
      throw FetchFailures.fail(first.location(), shuffleId, mapId, first.mapIndex(), from,
          "local shuffle blocks " + first.id() + " to " + last.id() + " are unreadable: " + e, e);
    }
    bytes.flip();
    for (FetchPlan.Block b : run) {
      int p = b.id().reduceId() - from;
      ByteBuffer block = bytes.slice((int) (offsets[p] - offsets[0]), (int) (offsets[p + 1] - offsets[p]));
      OptionalInt expected = verify ? registry.checksum(shuffleId, mapId, b.id().reduceId()) : OptionalInt.empty();
      if (expected.isPresent()) {
        checkLocal(b, block, expected.getAsInt());
      }
    }
    metrics.incLocalBlocksFetched(run.size());
    metrics.incLocalBytesRead(total);
    blocksInRun.accept(run.size());
    return new RegionInputStream(bytes);
  }

  /** Whether the next local block is of {@code b}'s map output. */
  private boolean sameMapNext(FetchPlan.Block b) {
    FetchPlan.Block next = local.peek();
    return next != null && next.id().mapId() == b.id().mapId();
  }

  /**
   * A block of this executor's own, read from its files and checked; counted as read. The READs
   * that arrived range answers allow are issued first, so they are in flight while it is read.
   */
  private InputStream localStream(FetchPlan.Block b) {
    remote.progress();
    OptionalInt expected = verify ? registry.checksum(shuffleId, b.id().mapId(), b.id().reduceId()) : OptionalInt.empty();
    InputStream in;
    long size;
    try {
      ManagedBuffer data = resolver.getBlockData(b.id(), Option.empty());
      size = data.size();
      if (expected.isPresent()) {
        ByteBuffer bytes = data.nioByteBuffer();
        checkLocal(b, bytes, expected.getAsInt());
        in = new RegionInputStream(bytes);
      } else {
        in = data.createInputStream();
      }
    } catch (IOException | RuntimeException e) { // not the FetchFailedException above: it is checked
      throw FetchFailures.fail(b.location(), shuffleId, b.id().mapId(), b.mapIndex(), b.id().reduceId(),
          "local shuffle block " + b.id() + " is unreadable: " + e, e);
    }
    metrics.incLocalBlocksFetched(1);
    metrics.incLocalBytesRead(size);
    return in;
  }

  /** Fails the task if local block {@code b}'s bytes do not match the CRC32C taken at registration. */
  private void checkLocal(FetchPlan.Block b, ByteBuffer bytes, int expected) {
    int actual = Checksums.crc32c(bytes.duplicate());
    if (actual != expected) {
      String why = diagnosis.diagnose(b.id(), bytes, b.location());
      throw FetchFailures.fail(b.location(), shuffleId, b.id().mapId(), b.mapIndex(), b.id().reduceId(),
          "local shuffle block " + b.id() + " does not match the CRC32C taken when its map output was registered"
          + String.format(" (%08x now, %08x then)", actual, expected)
          + (why.isEmpty() ? "" : ". " + why), null);
    }
  }

  @Override
  public void close() {
    remote.close(); // first, so releasing the current range issues no further READs
    current.ifPresent(RemoteFetcher.Fetched::close);
    current = Optional.empty();
  }
}
