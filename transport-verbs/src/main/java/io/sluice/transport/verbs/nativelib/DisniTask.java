package io.sluice.transport.verbs.nativelib;

import java.io.PrintStream;
import java.util.List;

/**
 * A job that runs inside the DiSNI class loader, created with
 * {@link DisniRuntime#newInstance} and called from outside it. Shared by both loaders,
 * so it mentions only JDK types.
 */
public interface DisniTask {

  /**
   * Runs the job.
   *
   * @param args job-specific arguments
   * @param out where progress and results are printed
   * @return a process exit status: 0 on success
   */
  int run(List<String> args, PrintStream out);
}
