package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.RegionInputStream;
import io.sluice.spark.shuffle.registry.MapOutputRegistry;
import io.sluice.transport.Checksums;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Enumeration;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.function.IntConsumer;
import java.util.OptionalInt;
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
    InputStream in = localStream(first);
    if (!concatenate || !sameMapNext(first)) {
      return new BlockStream(first.id(), in);
    }
    // One block at a time, as the reader reaches it: the run's blocks are not all held at once.
    Enumeration<InputStream> run = new Enumeration<>() {
      private boolean firstGiven;

      @Override
      public boolean hasMoreElements() {
        return !firstGiven || sameMapNext(first);
      }

      @Override
      public InputStream nextElement() {
        if (!firstGiven) {
          firstGiven = true;
          blocksInRun.accept(1);
          return in;
        }
        if (!sameMapNext(first)) {
          throw new NoSuchElementException();
        }
        blocksInRun.accept(1);
        return localStream(local.poll());
      }
    };
    return new BlockStream(first.id(), new SequenceInputStream(run));
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
        int actual = Checksums.crc32c(bytes.duplicate());
        if (actual != expected.getAsInt()) {
          String why = diagnosis.diagnose(b.id(), bytes, b.location());
          throw FetchFailures.fail(b.location(), shuffleId, b.id().mapId(), b.mapIndex(), b.id().reduceId(),
              "local shuffle block " + b.id() + " does not match the CRC32C taken when its map output was registered"
              + String.format(" (%08x now, %08x then)", actual, expected.getAsInt())
              + (why.isEmpty() ? "" : ". " + why), null);
        }
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

  @Override
  public void close() {
    remote.close(); // first, so releasing the current range issues no further READs
    current.ifPresent(RemoteFetcher.Fetched::close);
    current = Optional.empty();
  }
}
