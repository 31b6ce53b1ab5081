package io.kv4j.etcd;

import io.kv4j.StoreConfig;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A single etcd member with every security option on at once, for running the kit over it: TLS with
 * client certificates required ({@code --client-cert-auth}), auth enabled, and simple tokens that
 * expire after 3 s idle. The kit's stores connect as user {@code tck}, whose role covers the
 * prefixes stores derive from their paths ({@code kv4j/}), never as root. Skipped (failed in CI)
 * without {@code /usr/bin/etcd}, like {@link EtcdSecurityTest}.
 */
public final class SecureTestEtcd {
  private static final String USER = "tck";
  private static final String PASSWORD = "tck-Secret-9753";

  private static EtcdMember member;
  private static Certificates ca;
  private static Certificates.Leaf client;

  private SecureTestEtcd() {}

  /**
   * Starts the member (skips the test without an etcd binary).
   *
   * @param dir where the certificates and the member's data go; the caller deletes it
   */
  public static synchronized void start(Path dir) throws Exception {
    EtcdMember.require();
    Files.createDirectories(dir);
    ca = Certificates.authority(dir, "tck");
    Certificates.Leaf server = ca.issue("server");
    client = ca.issue("client", false); // a CN would be refused: see EtcdSecurityTest
    member =
        EtcdMember.start(
            dir,
            ca,
            server,
            client,
            "--client-cert-auth",
            "--trusted-ca-file=" + ca.caPem,
            "--auth-token=simple",
            "--auth-token-ttl=3");
    member.addUser(USER, PASSWORD, "kv4j/", null);
    member.enableAuth("root-" + PASSWORD);
  }

  /**
   * A config builder for the member: endpoint, CA, client certificate, user and password, and the
   * raised request limits.
   *
   * @return the builder
   */
  public static synchronized StoreConfig.Builder builder() {
    return StoreConfig.builder("etcd")
        .option("endpoints", member.endpoint())
        .option("ca-file", ca.caPem.toString())
        .option("key-store", client.pkcs12().toString())
        .option("key-store-password", Certificates.STORE_PASSWORD)
        .option("user", USER)
        .option("password", PASSWORD)
        .option("max-txn-ops", "10000")
        .option("max-request-bytes", Integer.toString(9 << 20));
  }

  /** Kills the member, if started. */
  public static synchronized void stop() {
    if (member != null) {
      member.close();
      member = null;
    }
  }
}
