package io.sluice.hadoop.rpc;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.SluiceCalls;
import org.apache.hadoop.security.SaslRpcServer;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AuthorizationException;
import org.apache.hadoop.security.authorize.ProxyUsers;

/**
 * The callers a server has authorized: the user (a proxy user when a real user is named) and the
 * address, built and checked as the TCP listener does when a connection sends its context
 * (proxy-user rules, then service-level authorization, counted in the server's authorization
 * metrics). The TCP listener decides once per connection; this decides once per (calling node,
 * user, real user, address, protocol) and keeps the answer as long as a stock client keeps an
 * idle connection, so ACL changes reach new callers as they reach new connections. Refused callers
 * are not remembered. Thread safe.
 */
final class CallerIdentities {
  /** Who is calling, as a call frame says. */
  record Key(long peerNode, String user, String realUser, String host, String protocol) {}

  /** An authorized caller. */
  record Caller(UserGroupInformation user, InetAddress address, long expiresNanos) {}

  private static final int MAX_ENTRIES = 10_000;

  private final RPC.Server server;
  private final long lifetimeNanos;
  private final Map<Key, Caller> authorized = new ConcurrentHashMap<>();

  CallerIdentities(RPC.Server server, long lifetimeMs) {
    this.server = server;
    this.lifetimeNanos = TimeUnit.MILLISECONDS.toNanos(lifetimeMs);
  }

  /**
   * The caller's user and address.
   *
   * @throws AuthorizationException if proxy-user rules or service-level authorization refuse it
   * @throws UnknownHostException if the caller's host is not an IP address literal
   */
  Caller authorize(Key key) throws AuthorizationException, UnknownHostException {
    long now = System.nanoTime();
    Caller known = authorized.get(key);
    if (known != null && now - known.expiresNanos() < 0) {
      return known;
    }
    InetAddress address = literal(key.host());
    UserGroupInformation user;
    if (key.realUser() == null) {
      user = UserGroupInformation.createRemoteUser(key.user(), SaslRpcServer.AuthMethod.SIMPLE);
    } else {
      UserGroupInformation real = UserGroupInformation.createRemoteUser(key.realUser(), SaslRpcServer.AuthMethod.SIMPLE);
      user = UserGroupInformation.createProxyUser(key.user(), real);
      ProxyUsers.authorize(user, address.getHostAddress());
    }
    SluiceCalls.authorize(server, user, key.protocol(), address);
    if (authorized.size() >= MAX_ENTRIES) {
      authorized.clear();
    }
    Caller caller = new Caller(user, address, now + lifetimeNanos);
    authorized.put(key, caller);
    return caller;
  }

  /**
   * The caller's host as the call frame names it, which must be an IP address literal: a name a
   * peer claims is never looked up (a blocking DNS query on a handler thread, steered by the peer).
   * Clients send their transport's address as a literal ({@link ClientContext#callerHost}).
   *
   * @throws UnknownHostException if {@code host} is not an IPv4 or IPv6 address literal
   */
  static InetAddress literal(String host) throws UnknownHostException {
    if (host == null || !(IPV4.matcher(host).matches() || (host.indexOf(':') >= 0 && IPV6.matcher(host).matches()))) {
      throw new UnknownHostException("caller host " + host + " is not an IP address literal; names are not looked up");
    }
    // A literal is parsed, never looked up.
    return InetAddress.getByName(host);
  }

  private static final java.util.regex.Pattern IPV4 =
      java.util.regex.Pattern.compile("(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}");
  private static final java.util.regex.Pattern IPV6 = java.util.regex.Pattern.compile("[0-9A-Fa-f:.]{2,45}");

  /** Forgets every decision: after the server's ACLs were refreshed. */
  void clear() {
    authorized.clear();
  }
}
