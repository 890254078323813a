package io.sluice.transport.verbs.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sluice.transport.ShippedCode;
import io.sluice.transport.verbs.VerbsTransportProvider;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What this module ships (its class folder under Maven, its jar in the SoftRoCE lab) holds no
 * lab programs and never lets a peer write: no class with a {@code main} method and nothing of
 * the lab's diagnostics and benchmark (they live in testing/lab), and every memory registration passes
 * access flags without {@code IBV_ACCESS_REMOTE_WRITE} or {@code IBV_ACCESS_REMOTE_ATOMIC}, as
 * far as {@link RegistrationScan} can follow them (what it cannot follow fails too).
 */
class ShippedClassesTest {

  private static final Path SHIPPED = ShippedCode.codeSourceOf(VerbsTransportProvider.class);

  @Test
  void shipsNoProgramsAndNoLabCode() {
    ShippedCode.assertLibraryOnly(VerbsTransportProvider.class);
  }

  @Test
  void noShippedRegistrationLetsAPeerWrite() {
    List<RegistrationScan.Site> sites = RegistrationScan.of(SHIPPED).registrations();
    List<String> bad = sites.stream()
        .filter(s -> s.grantsPeerWrites() || !s.problems().isEmpty())
        .map(RegistrationScan.Site::toString)
        .toList();
    assertEquals(List.of(), bad, "registrations in " + SHIPPED);
    // The scan reached the node's registrations, which grant remote READ.
    assertTrue(sites.stream().flatMap(s -> s.access().stream()).anyMatch(a -> (a & 4) != 0),
        "no registration for remote READ found: " + sites);
  }

  @Test
  void scanFindsEveryWayToGrantPeerWrites() {
    List<RegistrationScan.Site> sites = RegistrationScan.of(
        RegistrationFixtures.EndpointDefault.class, RegistrationFixtures.WriteField.class,
        RegistrationFixtures.WriteThroughHelper.class, RegistrationFixtures.PublicAccess.class,
        RegistrationFixtures.ComputedAccess.class, RegistrationFixtures.ReadOnly.class).registrations();
    List<String> refused = sites.stream()
        .filter(s -> s.grantsPeerWrites() || !s.problems().isEmpty())
        .map(s -> s.where().substring(s.where().lastIndexOf('$') + 1))
        .sorted()
        .toList();
    assertEquals(List.of("ComputedAccess.register", "EndpointDefault.register", "PublicAccess.register",
        "WriteField.register", "WriteField.register", "WriteThroughHelper.registerWith"), refused, sites.toString());
    RegistrationScan.Site readOnly = sites.stream().filter(s -> s.where().endsWith("ReadOnly.registerWith"))
        .findFirst().orElseThrow(() -> new AssertionError("no site in ReadOnly: " + sites));
    assertEquals(Set.of(1, 4, 5), readOnly.access(), readOnly.toString());
  }
}
