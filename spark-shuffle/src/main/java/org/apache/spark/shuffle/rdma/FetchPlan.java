package org.apache.spark.shuffle.rdma;

import io.sluice.spark.shuffle.protocol.RangeProtocol;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockId;
import scala.Tuple2;
import scala.Tuple3;

/**
 * What one reduce task reads, grouped the way it is fetched: blocks of this executor (read from
 * local files) and, per remote executor, one contiguous partition range per map output (one range
 * request per executor, one READ range per map). Immutable.
 */
final class FetchPlan {
  /** One non-empty block as MapOutputTracker reported it (size may be approximate). */
  record Block(BlockManagerId location, ShuffleBlockId id, long size, int mapIndex) {}

  /** Partitions [startPartition, endPartition) of one map output on a remote executor. */
  record MapRange(long mapId, int mapIndex, int startPartition, int endPartition) {
    RangeProtocol.Query query() {
      return new RangeProtocol.Query(mapId, startPartition, endPartition);
    }
  }

  /** Everything to read from one remote executor. */
  record Remote(BlockManagerId location, List<MapRange> maps) {}

  private final List<Block> local;
  private final List<Remote> remote;

  private FetchPlan(List<Block> local, List<Remote> remote) {
    this.local = List.copyOf(local);
    this.remote = List.copyOf(remote);
  }

  List<Block> local() {
    return local;
  }

  List<Remote> remote() {
    return remote;
  }

  /** This plan without the remote executors named; its local blocks stay. */
  FetchPlan without(Set<String> executorIds) {
    return new FetchPlan(local, remote.stream().filter(r -> !executorIds.contains(r.location().executorId())).toList());
  }

  /**
   * Groups MapOutputTracker's answer. Blocks on {@code localExecutorId} are local when {@code
   * localReads} is set.
   *
   * @throws IllegalArgumentException for a block id other than a plain shuffle block
   */
  static FetchPlan build(
      scala.collection.Iterator<Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>>> byAddress,
      String localExecutorId, boolean localReads) {
    List<Block> local = new ArrayList<>();
    List<Remote> remote = new ArrayList<>();
    while (byAddress.hasNext()) {
      Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>> entry = byAddress.next();
      BlockManagerId location = entry._1();
      boolean isLocal = localReads && location.executorId().equals(localExecutorId);
      Map<Long, int[]> ranges = new LinkedHashMap<>(); // mapId -> {mapIndex, min, max}
      for (Tuple3<BlockId, Object, Object> b : ScalaInterop.asJava(entry._2())) {
        if (!(b._1() instanceof ShuffleBlockId id)) {
          throw new IllegalArgumentException("unsupported shuffle block " + b._1());
        }
        long size = (Long) b._2();
        int mapIndex = (Integer) b._3();
        if (isLocal) {
          local.add(new Block(location, id, size, mapIndex));
          continue;
        }
        int[] r = ranges.get(id.mapId());
        if (r == null) {
          ranges.put(id.mapId(), new int[] {mapIndex, id.reduceId(), id.reduceId()});
        } else {
          r[1] = Math.min(r[1], id.reduceId());
          r[2] = Math.max(r[2], id.reduceId());
        }
      }
      if (!ranges.isEmpty()) {
        List<MapRange> maps = new ArrayList<>(ranges.size());
        ranges.forEach((mapId, r) -> maps.add(new MapRange(mapId, r[0], r[1], r[2] + 1)));
        remote.add(new Remote(location, maps));
      }
    }
    return new FetchPlan(local, remote);
  }
}
