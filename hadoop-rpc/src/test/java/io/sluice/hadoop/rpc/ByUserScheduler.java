package io.sluice.hadoop.rpc;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.ProcessingDetails;
import org.apache.hadoop.ipc.RpcScheduler;
import org.apache.hadoop.ipc.Schedulable;

/**
 * A test scheduler for FairCallQueue: user "heavy" gets priority level 1, everyone else 0, and
 * every user it schedules is recorded. Thread safe.
 */
public final class ByUserScheduler implements RpcScheduler {
  static final Set<String> SCHEDULED = ConcurrentHashMap.newKeySet();

  public ByUserScheduler(int priorityLevels, String namespace, Configuration conf) {
    if (priorityLevels < 2) {
      throw new IllegalArgumentException("needs two priority levels, got " + priorityLevels);
    }
  }

  @Override
  public int getPriorityLevel(Schedulable call) {
    String user = call.getUserGroupInformation().getShortUserName();
    SCHEDULED.add(user);
    return user.equals("heavy") ? 1 : 0;
  }

  @Override
  public boolean shouldBackOff(Schedulable call) {
    return false;
  }

  @Override
  public void addResponseTime(String callName, Schedulable call, ProcessingDetails details) {
    // Nothing to learn from: levels are fixed by user name. (The interface's default forwards to a
    // deprecated method that throws.)
  }

  @Override
  public void stop() {}
}
