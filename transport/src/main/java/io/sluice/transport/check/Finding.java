package io.sluice.transport.check;

import java.util.Optional;

/**
 * One line of the host check: what was looked at, whether it is fine, what was found, and, for a
 * problem, the fix in one line.
 */
record Finding(String subject, boolean ok, String detail, Optional<String> fix) {
  static Finding ok(String subject, String detail) {
    return new Finding(subject, true, detail, Optional.empty());
  }

  static Finding problem(String subject, String detail, String fix) {
    return new Finding(subject, false, detail, Optional.of(fix));
  }

  /** "  [ok]  subject: detail" or "  [!!]  subject: detail" and an indented "fix: ..." line. */
  String render() {
    String line = String.format("  %s %-10s %s", ok ? "[ok]" : "[!!]", subject, detail);
    return fix.map(f -> line + System.lineSeparator() + "             fix: " + f).orElse(line);
  }
}
