package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.fallback.Decision;
import io.sluice.spark.shuffle.fallback.FallbackPolicy;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.io.CompressionCodec$;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.BlockStoreShuffleReader;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.sort.SortShuffleManager$;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.util.TaskCompletionListener;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.Product2;
import scala.Tuple2;
import scala.Tuple3;
import scala.math.Ordering;

/**
 * Reads a map-index range and partition range of a shuffle with one-sided READs and returns the
 * records as Spark's own reader would: deserialized with the dependency's serializer after
 * Spark's {@link SerializerManager#wrapStream} (compression, encryption), combined by the
 * dependency's aggregator and sorted by its key ordering with Spark's {@link ExternalSorter}.
 *
 * <p>If any executor holding blocks has no shuffle transport (it fell back to Spark's shuffle), or
 * is gone while the external shuffle service keeps its output, the whole task reads through
 * Spark's sort-shuffle reader instead, which can fetch from every executor and shuffle service
 * (the {@link FallbackPolicy} decides, once per task). With {@code
 * spark.shuffle.rdma.peersBeyondBound=spark}, a task that reads more peers than the executor's
 * bound on connections has room for READs only as many as it has ({@link
 * ExecutorShuffleTransport#chooseReadPeers}) and has Spark's reader fetch the other peers' blocks
 * in the same task, both starting at once; their records are combined and sorted together. One
 * instance per reduce task; not thread safe.
 */
final class RdmaShuffleReader<K, C> implements ShuffleReader<K, C> {
  private final BaseShuffleHandle<K, ?, C> handle;
  private final int startMapIndex;
  private final int endMapIndex;
  private final int startPartition;
  private final int endPartition;
  private final TaskContext context;
  private final ShuffleReadMetricsReporter metrics;
  private final ExecutorShuffleTransport transport;
  private final ReaderSettings settings;
  private final IndexShuffleBlockResolver resolver;
  private final FallbackPolicy fallback;
  private final Supplier<ShuffleReader<K, C>> sortShuffleReader;

  /**
   * Reader limits, read once per executor from the SparkConf.
   *
   * @param streamsConcatenate whether block streams of this configuration may be read as one (see
   *     {@link #streamsConcatenate})
   * @param peersBeyondBoundThroughSpark whether a task reads the peers the bound on connections has no
   *     room for through Spark's reader ({@code spark.shuffle.rdma.peersBeyondBound=spark})
   */
  record ReaderSettings(long maxBytesInFlight, int readChunkBytes, long maxRangeBytes, boolean localReads,
      boolean verifyReads, boolean sameHostViews, int maxRequestBytes, boolean shuffleServiceEnabled,
      CorruptionDiagnosis diagnosis, boolean streamsConcatenate, boolean peersBeyondBoundThroughSpark) {}

  /**
   * Whether, under {@code conf}, the bytes of consecutive blocks of one map output may be
   * decompressed as one stream, as Spark's reader fetches them in batch: shuffle blocks are not
   * compressed or their codec reads concatenated streams, and they are not encrypted at rest
   * ({@code spark.io.encryption.enabled}, whose streams do not concatenate). Whether the
   * serializer's streams concatenate, and whether the task asks for it, is per task ({@link #read}).
   */
  static boolean streamsConcatenate(SparkConf conf) {
    if (conf.getBoolean("spark.io.encryption.enabled", false)) {
      return false;
    }
    return !conf.getBoolean("spark.shuffle.compress", true)
        || CompressionCodec$.MODULE$.supportsConcatenationOfSerializedStreams(CompressionCodec$.MODULE$.createCodec(conf));
  }

  RdmaShuffleReader(BaseShuffleHandle<K, ?, C> handle, int startMapIndex, int endMapIndex,
      int startPartition, int endPartition, TaskContext context, ShuffleReadMetricsReporter metrics,
      ExecutorShuffleTransport transport, ReaderSettings settings, IndexShuffleBlockResolver resolver,
      FallbackPolicy fallback, Supplier<ShuffleReader<K, C>> sortShuffleReader) {
    this.handle = handle;
    this.startMapIndex = startMapIndex;
    this.endMapIndex = endMapIndex;
    this.startPartition = startPartition;
    this.endPartition = endPartition;
    this.context = context;
    this.metrics = metrics;
    this.transport = transport;
    this.settings = settings;
    this.resolver = resolver;
    this.fallback = fallback;
    this.sortShuffleReader = sortShuffleReader;
  }

  @Override
  public scala.collection.Iterator<Product2<K, C>> read() {
    SparkEnv env = SparkEnv.get();
    int shuffleId = handle.shuffleId();
    List<Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>>> byAddress = new ArrayList<>();
    scala.collection.Iterator<Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>>> sizes =
        env.mapOutputTracker().getMapSizesByExecutorId(shuffleId, startMapIndex, endMapIndex, startPartition,
            endPartition);
    while (sizes.hasNext()) {
      byAddress.add(sizes.next());
    }
    Optional<FetchPlan> plan = Optional.empty();
    Optional<String> unsupported = Optional.empty();
    try {
      plan = Optional.of(FetchPlan.build(ScalaInterop.asScala(byAddress.iterator()), transport.executorId(),
          settings.localReads()));
    } catch (IllegalArgumentException e) {
      unsupported = Optional.of(e.getMessage());
    }
    List<String> holders = plan.map(p -> p.remote().stream().map(r -> r.location().executorId()).toList())
        .orElse(List.of());
    boolean choosing = settings.peersBeyondBoundThroughSpark();
    // Its own blocks (read over the transport where localReads is off) are never passed on.
    List<String> peers = holders.stream().filter(id -> !id.equals(transport.executorId())).toList();
    if (!choosing || peers.size() <= transport.peerConnectionBound()) {
      // The handshakes with peers it knows run while it decides, and asks the driver about the others.
      transport.connectAhead(holders);
    }
    Decision route = fallback.decideReduceTask(shuffleId, startPartition, unsupported, holders,
        settings.shuffleServiceEnabled(), transport::goneAmong, id -> transport.addressOf(id).isPresent());
    if (route.usesSparkShuffle()) {
      return sortShuffleReader.get().read();
    }
    FetchPlan readPlan = plan.get();
    Optional<ShuffleReader<K, C>> beyondBound = Optional.empty();
    if (choosing) {
      // READ what the bound has room for, the peers with a connection first; Spark's reader
      // fetches the rest in the same task, beside the READs.
      Set<String> chosen = transport.chooseReadPeers(preferenceOrder(transport.executorId(), peers));
      transport.connectAhead(chosen);
      Set<String> passedOn = new HashSet<>(peers);
      passedOn.removeAll(chosen);
      if (!passedOn.isEmpty()) {
        List<Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>>> theirs = new ArrayList<>();
        for (Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>> e : byAddress) {
          if (passedOn.contains(e._1().executorId())) {
            theirs.add(e);
          }
        }
        readPlan = readPlan.without(passedOn);
        beyondBound = Optional.of(new BlockStoreShuffleReader<>(handle, ScalaInterop.asScala(theirs.iterator()),
            context, metrics, env.serializerManager(), env.blockManager(), env.mapOutputTracker(),
            SortShuffleManager$.MODULE$.canUseBatchFetch(startPartition, endPartition, context)));
      }
    }
    RemoteFetcher remote = new RemoteFetcher(shuffleId, readPlan, transport, metrics, settings.maxBytesInFlight(),
        settings.readChunkBytes(), settings.maxRangeBytes(), settings.maxRequestBytes(), settings.verifyReads(),
        settings.sameHostViews(), settings.diagnosis());
    // As Spark's reader batches its fetches: where the task reads several partitions (AQE's coalesced
    // reads ask for it) and the streams concatenate, one stream per run of a map output's blocks,
    // not one decompressor and deserializer per block.
    boolean concatenate = settings.streamsConcatenate()
        && handle.dependency().serializer().supportsRelocationOfSerializedObjects()
        && SortShuffleManager$.MODULE$.canUseBatchFetch(startPartition, endPartition, context);
    BlockStreams streams = new BlockStreams(shuffleId, readPlan, resolver, remote, metrics, transport.registry(),
        settings.verifyReads(), settings.diagnosis(), concatenate, transport::recordBlocksInRun);
    context.addTaskCompletionListener((TaskCompletionListener) ctx -> streams.close());
    remote.start();
    // Spark's reader starts its fetches when asked to read, so both paths have their first bytes in
    // flight from here on; the task then consumes one part and the other.
    Optional<scala.collection.Iterator<Product2<K, C>>> fetched = beyondBound.map(ShuffleReader::read);
    return combineAndSort(records(streams, env.serializerManager()), fetched);
  }

  /**
   * The executors in this executor's own order of preference, a rendezvous hash of its id and
   * theirs: stable from task to task, and different from executor to executor, so that where
   * every executor reads every peer and the bound has room for some of them, the executors READ
   * from different peers rather than all from the same ones.
   */
  static List<String> preferenceOrder(String self, List<String> executors) {
    List<String> sorted = new ArrayList<>(executors);
    sorted.sort(Comparator.comparingLong((String id) -> rendezvous(self, id)).thenComparing(id -> id));
    return sorted;
  }

  /** A 64-bit mix (SplitMix64's finalizer) of the two ids' hashes. */
  private static long rendezvous(String self, String peer) {
    long z = ((long) self.hashCode() << 32) ^ (peer.hashCode() & 0xffffffffL);
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  /** Deserializes each block stream; counts records; merges metrics into the task when done. */
  private scala.collection.Iterator<Tuple2<Object, Object>> records(BlockStreams streams, SerializerManager sm) {
    SerializerInstance serializer = handle.dependency().serializer().newInstance();
    Iterator<Tuple2<Object, Object>> records = new Iterator<>() {
      private scala.collection.Iterator<Tuple2<Object, Object>> block = ScalaInterop.emptyIterator();
      private boolean finished;

      @Override
      public boolean hasNext() {
        while (!block.hasNext()) {
          if (!streams.hasNext()) {
            if (!finished) {
              finished = true;
              streams.close();
              context.taskMetrics().mergeShuffleReadMetrics();
            }
            return false;
          }
          BlockStreams.BlockStream s = streams.next();
          // The key-value iterator closes the stream once its last record is read.
          block = serializer.deserializeStream(sm.wrapStream(s.id(), s.stream())).asKeyValueIterator();
        }
        return true;
      }

      @Override
      public Tuple2<Object, Object> next() {
        if (!hasNext()) {
          throw new java.util.NoSuchElementException();
        }
        metrics.incRecordsRead(1);
        return block.next();
      }
    };
    return new InterruptibleIterator<>(context, ScalaInterop.asScala(records));
  }

  /**
   * Combines and sorts as the dependency asks, and as Spark's reader does. {@code fetched}, where
   * present, is what Spark's reader read of the same task's blocks, already combined (and sorted)
   * by it: with an aggregator the task's own records are combined first and the two merged as
   * combiners; without one the two are read one after the other.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private scala.collection.Iterator<Product2<K, C>> combineAndSort(
      scala.collection.Iterator<Tuple2<Object, Object>> records,
      Optional<scala.collection.Iterator<Product2<K, C>>> fetched) {
    ShuffleDependency<K, ?, C> dep = handle.dependency();
    scala.collection.Iterator<Product2<K, C>> combined;
    if (dep.aggregator().isDefined()) {
      org.apache.spark.Aggregator agg = dep.aggregator().get();
      if (fetched.isPresent()) {
        scala.collection.Iterator ours = dep.mapSideCombine() ? records
            : agg.combineValuesByKey((scala.collection.Iterator) records, context);
        combined = (scala.collection.Iterator) agg.combineCombinersByKey(
            ScalaInterop.concat(ours, (scala.collection.Iterator) fetched.get()), context);
      } else {
        combined = dep.mapSideCombine()
            ? (scala.collection.Iterator) agg.combineCombinersByKey((scala.collection.Iterator) records, context)
            : (scala.collection.Iterator) agg.combineValuesByKey((scala.collection.Iterator) records, context);
      }
    } else {
      combined = fetched.isPresent() ? ScalaInterop.concat((scala.collection.Iterator) records, fetched.get())
          : (scala.collection.Iterator) records;
    }
    Option<Ordering<K>> ordering = dep.keyOrdering();
    if (ordering.isEmpty()) {
      return combined instanceof InterruptibleIterator ? combined : new InterruptibleIterator<>(context, combined);
    }
    ExternalSorter<K, C, C> sorter = ExternalSorters.create(context, ordering, dep.serializer());
    // Spills, peak memory and stopping the sorter at task end are handled by Spark's sorter.
    return new InterruptibleIterator<>(context, sorter.insertAllAndUpdateMetrics(combined));
  }
}
