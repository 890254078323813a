package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.RegionInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Optional;
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
  private Optional<RemoteFetcher.Fetched> current = Optional.empty();
  private int nextSlice;
  private boolean remoteDone;

  BlockStreams(int shuffleId, FetchPlan plan, IndexShuffleBlockResolver resolver, RemoteFetcher remote,
      ShuffleReadMetricsReporter metrics) {
    this.shuffleId = shuffleId;
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
      RemoteFetcher.Slice s = f.slices.get(nextSlice++);
      return new BlockStream(s.id(), new RegionInputStream(f.view(s)));
    }
    remote.progress();
    FetchPlan.Block b = local.poll();
    try {
      ManagedBuffer data = resolver.getBlockData(b.id(), Option.empty());
      InputStream in = data.createInputStream();
      metrics.incLocalBlocksFetched(1);
      metrics.incLocalBytesRead(data.size());
      return new BlockStream(b.id(), in);
    } catch (IOException | RuntimeException e) {
      throw FetchFailures.fail(b.location(), shuffleId, b.id().mapId(), b.mapIndex(), b.id().reduceId(),
          "local shuffle block " + b.id() + " is unreadable: " + e, e);
    }
  }

  @Override
  public void close() {
    remote.close(); // first, so releasing the current range issues no further READs
    current.ifPresent(RemoteFetcher.Fetched::close);
    current = Optional.empty();
  }
}
