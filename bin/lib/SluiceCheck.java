/**
 * The program behind bin/sluice-check, run as a source file by the JDK's launcher with the shipped
 * jar on the class path: the check itself is io.sluice.transport.check.HostCheck in that jar.
 */
public final class SluiceCheck {
  private SluiceCheck() {}

  public static void main(String[] args) {
    System.exit(io.sluice.transport.check.HostCheck.run(args));
  }
}
