package io.sluice.hadoop.rpc;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeysPublic;
import org.apache.hadoop.security.SaslRpcServer;
import org.apache.hadoop.security.SecurityUtil;
import org.apache.hadoop.security.UserGroupInformation.AuthenticationMethod;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides whether calls may take the transport, or must take the stock TCP path so that nothing
 * the operator asked of Hadoop security is weakened. The transport authenticates processes by a
 * shared secret, not users by Kerberos or tokens, and protects integrity but not privacy of
 * bodies; so any authentication other than {@code simple}, any SASL quality of protection beyond
 * authentication (or a per-connection QOP resolver), or no configured secret means the stock path.
 * Each reason is logged once per process. Thread safe.
 */
final class TransportPolicy {
  private static final Logger LOG = LoggerFactory.getLogger(TransportPolicy.class);
  private static final Set<String> LOGGED = ConcurrentHashMap.newKeySet();

  private TransportPolicy() {}

  /** Why this configuration must use the stock path, or empty when the transport may be used. */
  static Optional<String> stockPathReason(Configuration conf) {
    AuthenticationMethod auth = SecurityUtil.getAuthenticationMethod(conf);
    if (auth != AuthenticationMethod.SIMPLE) {
      return Optional.of(CommonConfigurationKeysPublic.HADOOP_SECURITY_AUTHENTICATION + " is " + auth
          + ", which the transport does not carry");
    }
    for (String qop : conf.getTrimmedStrings(CommonConfigurationKeysPublic.HADOOP_RPC_PROTECTION)) {
      if (!qop.equalsIgnoreCase(SaslRpcServer.QualityOfProtection.AUTHENTICATION.name())) {
        return Optional.of(CommonConfigurationKeysPublic.HADOOP_RPC_PROTECTION + " asks for SASL QOP " + qop);
      }
    }
    if (conf.get(CommonConfigurationKeysPublic.HADOOP_SECURITY_SASL_PROPS_RESOLVER_CLASS) != null) {
      return Optional.of(CommonConfigurationKeysPublic.HADOOP_SECURITY_SASL_PROPS_RESOLVER_CLASS
          + " may ask for a SASL QOP per connection");
    }
    if (EngineSettings.from(conf).secret().isEmpty()) {
      return Optional.of("no transport secret is configured (" + io.sluice.transport.config.TransportKeys.SECRET.key() + ")");
    }
    return Optional.empty();
  }

  /** Logs, once per process and reason, that {@code who} uses the stock path. */
  static void logStockPath(String who, String reason) {
    if (LOGGED.add(who + "|" + reason)) {
      LOG.info("Sluice RPC {}: using Hadoop's stock TCP path because {}", who, reason);
    }
  }
}
