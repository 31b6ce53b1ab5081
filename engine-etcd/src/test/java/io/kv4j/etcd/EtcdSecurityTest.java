package io.kv4j.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.kv4j.KeyRange;
import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreIOException;
import io.kv4j.Stores;
import io.kv4j.WriteBatch;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * TLS and auth against real etcd members this test starts for itself ({@link EtcdMember}): one
 * serving TLS, one also requiring client certificates, one with auth enabled and simple tokens that
 * expire after 2 s idle. The certificates are throwaway ones ({@link Certificates}). Isolated: one
 * test checks that closing leaves no HTTP client thread of this JVM behind, which the stores of
 * test classes running beside it (see junit-platform.properties) would start and end meanwhile.
 */
@Isolated
class EtcdSecurityTest {
  private static final String ROOT_PASSWORD = "root-Secret-4711";
  private static final String APP_PASSWORD = "app-Secret-0815";
  private static final String WRONG_PASSWORD = "wrong-Secret-2342";
  private static final String APP_PREFIX = "apps/kv4j/";

  @TempDir static Path tmp;

  private static Certificates ca;
  private static Certificates otherCa;
  private static Certificates.Leaf client;
  private static EtcdMember tls;
  private static EtcdMember mutual;
  private static EtcdMember auth;
  private static EtcdMember mutualAuth;
  private static Certificates.Leaf clientWithoutCn;

  @BeforeAll
  static void members() throws Exception {
    EtcdMember.require();
    ca = Certificates.authority(tmp, "ca");
    otherCa = Certificates.authority(tmp, "other");
    Certificates.Leaf server = ca.issue("server");
    client = ca.issue("client");
    tls = EtcdMember.start(dir("tls"), ca, server, null);
    mutual =
        EtcdMember.start(
            dir("mutual"),
            ca,
            server,
            client,
            "--client-cert-auth",
            "--trusted-ca-file=" + ca.caPem);
    auth =
        EtcdMember.start(
            dir("auth"), ca, server, null, "--auth-token=simple", "--auth-token-ttl=2");
    enableAuth(auth);
    clientWithoutCn = ca.issue("client-no-cn", false);
    mutualAuth =
        EtcdMember.start(
            dir("mutual-auth"),
            ca,
            server,
            clientWithoutCn,
            "--client-cert-auth",
            "--trusted-ca-file=" + ca.caPem);
    enableAuth(mutualAuth);
  }

  @AfterAll
  static void stop() throws Exception {
    for (EtcdMember m : new EtcdMember[] {tls, mutual, auth, mutualAuth}) {
      if (m != null) {
        m.close();
      }
    }
  }

  private static Path dir(String name) throws IOException {
    return Files.createDirectories(tmp.resolve(name));
  }

  /**
   * User app may read and write {@link #APP_PREFIX} only, what an operator grants a tenant; root
   * administers.
   */
  private static void enableAuth(EtcdMember m) throws IOException {
    m.addUser("app", APP_PASSWORD, APP_PREFIX, null);
    m.enableAuth(ROOT_PASSWORD);
  }

  private static StoreConfig.Builder config(EtcdMember m, String name) {
    return StoreConfig.builder("etcd")
        .path(tmp.resolve("stores").resolve(name))
        .option("endpoints", m.endpoint())
        .option("max-txn-ops", "10000")
        .option("max-request-bytes", Integer.toString(9 << 20));
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String s(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  /** Put, get, scan, batch and a conditional batch, each checked. */
  private static void exercise(Store store) {
    store.put(b("a"), b("1"));
    store.put(b("b"), b("2"));
    assertThat(s(store.get(b("a")))).isEqualTo("1");
    store.write(new WriteBatch().put(b("c"), b("3")).delete(b("b")));
    assertThat(store.writeIf(new WriteBatch().expect(b("a"), b("0")).put(b("d"), b("4"))))
        .as("a condition that does not hold")
        .isFalse();
    assertThat(store.writeIf(new WriteBatch().expect(b("a"), b("1")).put(b("a"), b("5"))))
        .as("a condition that holds")
        .isTrue();
    List<String> seen = new ArrayList<>();
    try (var c = store.scan(KeyRange.all())) {
      c.forEachRemaining(e -> seen.add(s(e.key()) + "=" + s(e.value())));
    }
    assertThat(seen).containsExactly("a=5", "c=3");
    assertThat(store.stats().keyCount()).isEqualTo(2);
  }

  @Test
  void tlsWithCaFile_servesTheBasicOperations() {
    try (Store store =
        Stores.open(config(tls, "tls").option("ca-file", ca.caPem.toString()).build())) {
      exercise(store);
    }
  }

  @Test
  void tlsWithTheWrongCa_failsAtOnceNamingTlsTheCertificateTheEngineAndTheEndpoint() {
    for (String caFile : new String[] {otherCa.caPem.toString(), ""}) {
      StoreConfig c =
          config(tls, "wrong-ca")
              .option("ca-file", caFile)
              .option("retry-timeout", "60000")
              .build();
      long start = System.nanoTime();
      Throwable t = catchThrowable(() -> Stores.open(c));
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertThat(t)
          .as("ca-file '%s'", caFile)
          .isInstanceOf(StoreIOException.class)
          .hasMessageContaining("TLS")
          .hasMessageContaining("certificate")
          .hasMessageContaining("ca-file")
          .hasMessageContaining("etcd")
          .hasMessageContaining(tls.endpoint());
      // A certificate does not become trusted by waiting: no retrying until retry-timeout (60 s).
      assertThat(millis).as("ms until the failure, ca-file '%s'", caFile).isLessThan(20_000);
    }
  }

  @Test
  void tlsOptionsNamingBadFiles_areRefusedNamingTheOption() throws IOException {
    Path notPem = Files.writeString(tmp.resolve("not.pem"), "not a certificate");
    assertThatThrownBy(
            () -> Stores.open(config(tls, "bad").option("ca-file", notPem.toString()).build()))
        .hasMessageContaining("ca-file")
        .hasMessageContaining(notPem.toString());
    Path missing = tmp.resolve("missing.pem");
    assertThatThrownBy(
            () -> Stores.open(config(tls, "bad").option("ca-file", missing.toString()).build()))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("ca-file")
        .hasMessageContaining(missing.toString());
    StoreConfig wrongKeyStorePassword =
        config(mutual, "bad")
            .option("ca-file", ca.caPem.toString())
            .option("key-store", client.pkcs12().toString())
            .option("key-store-password", WRONG_PASSWORD)
            .build();
    Throwable t = catchThrowable(() -> Stores.open(wrongKeyStorePassword));
    assertThat(t)
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("key-store")
        .hasMessageContaining(client.pkcs12().toString());
    assertThat(messages(t)).doesNotContain(WRONG_PASSWORD);
  }

  @Test
  void mutualTls_withoutAClientCertificate_isRefusedClearly_andWithOneWorks() {
    StoreConfig.Builder base = config(mutual, "mutual").option("ca-file", ca.caPem.toString());
    long start = System.nanoTime();
    Throwable t = catchThrowable(() -> Stores.open(base.option("retry-timeout", "60000").build()));
    assertThat(t)
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("TLS")
        .hasMessageContaining("key-store")
        .hasMessageContaining(mutual.endpoint());
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(20_000);
    try (Store store =
        Stores.open(
            base.option("key-store", client.pkcs12().toString())
                .option("key-store-password", Certificates.STORE_PASSWORD)
                .build())) {
      exercise(store);
    }
  }

  @Test
  void mutualTlsAndAuth_aCertificateWithACommonNameIsRefusedClearly_oneWithoutWorks() {
    StoreConfig.Builder base =
        config(mutualAuth, "mutual-auth")
            .option("ca-file", ca.caPem.toString())
            .option("prefix", APP_PREFIX + "mutual-auth")
            .option("user", "app")
            .option("password", APP_PASSWORD)
            .option("key-store-password", Certificates.STORE_PASSWORD);
    // etcd's gateway cannot pass a certificate's CN on as the identity, so it refuses it.
    assertThatThrownBy(
            () -> Stores.open(base.option("key-store", client.pkcs12().toString()).build()))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("CommonName")
        .hasMessageContaining("without a CN")
        .hasMessageContaining("'key-store'")
        .hasMessageContaining(mutualAuth.endpoint());
    try (Store store =
        Stores.open(base.option("key-store", clientWithoutCn.pkcs12().toString()).build())) {
      exercise(store);
    }
  }

  private StoreConfig.Builder app(String name, String user, String password) {
    return config(auth, name)
        .option("ca-file", ca.caPem.toString())
        .option("prefix", APP_PREFIX + name)
        .option("user", user)
        .option("password", password);
  }

  @Test
  void auth_theRightUserWorks_onThePrefixItsRoleCovers_alsoAfterAnOperatorChangesUsers()
      throws IOException {
    try (Store store = Stores.open(app("right", "app", APP_PASSWORD).build())) {
      exercise(store);
      store.keyspace("ks").put(b("k"), b("v"));
      assertThat(s(store.keyspace("ks").get(b("k")))).isEqualTo("v");
      // etcd refuses tokens issued before a change of users or roles ("revision of auth store is
      // old"): the store gets a new one and goes on.
      String root = auth.token("root", ROOT_PASSWORD);
      auth.post("/v3/auth/user/add", "{\"name\":\"someone\",\"password\":\"x\"}", root);
      store.put(b("after"), b("change"));
      assertThat(s(store.get(b("after")))).isEqualTo("change");
      assertThat(store.writeIf(new WriteBatch().expect(b("after"), b("change")).delete(b("after"))))
          .isTrue();
      auth.post("/v3/auth/user/delete", "{\"name\":\"someone\"}", root);
    }
  }

  @Test
  void auth_aWrongPassword_failsNamingTheOptions_neverThePassword() {
    StoreConfig c = app("wrong", "app", WRONG_PASSWORD).build();
    Throwable t = catchThrowable(() -> Stores.open(c));
    assertThat(t)
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("'user'")
        .hasMessageContaining("'password'")
        .hasMessageContaining("app")
        .hasMessageContaining(auth.endpoint());
    assertThat(messages(t)).doesNotContain(WRONG_PASSWORD);
    assertThat(EtcdSettings.of(c).toString()).doesNotContain(WRONG_PASSWORD);
    assertThat(c.toString()).doesNotContain(WRONG_PASSWORD);
  }

  @Test
  void auth_noCredentials_failsNamingTheOptions() {
    StoreConfig c = config(auth, "anonymous").option("ca-file", ca.caPem.toString()).build();
    assertThatThrownBy(() -> Stores.open(c))
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("'user'")
        .hasMessageContaining("'password'");
  }

  @Test
  void auth_aUserWhoseRoleLacksThePrefix_getsAPermissionError() {
    StoreConfig c = app("outside", "app", APP_PASSWORD).option("prefix", "elsewhere/kv4j/").build();
    Throwable t = catchThrowable(() -> Stores.open(c));
    assertThat(t)
        .isInstanceOf(StoreIOException.class)
        .hasMessageContaining("permission denied")
        .hasMessageContaining("'app'")
        .hasMessageContaining("elsewhere/kv4j/");
    assertThat(messages(t)).doesNotContain(APP_PASSWORD);
  }

  @Test
  void auth_operationsGoOnAfterTheTokenExpired_andCloseLeavesNoThreadOrConnection()
      throws Exception {
    Set<String> threadsBefore = httpThreads();
    useWhileTheTokenExpires();
    // Closed: the engine's HTTP client, its selector thread and its connections go (on Java 17
    // once the client is collected: it has no shutdown before 21).
    // (TestEtcd.waitFor would start TestEtcd's own HTTP client, whose thread would count here.)
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    boolean gone = false;
    while (!gone && System.nanoTime() - deadline < 0) {
      System.gc();
      gone = connections(auth.port) == 0 && threadsBefore.containsAll(httpThreads());
      TimeUnit.MILLISECONDS.sleep(100);
    }
    assertThat(gone)
        .as(
            "connections to %s: %s, HTTP threads %s (before: %s)",
            auth.endpoint(), connections(auth.port), httpThreads(), threadsBefore)
        .isTrue();
  }

  /** In a method of its own: no frame of the test's keeps a reference to the store. */
  private void useWhileTheTokenExpires() throws InterruptedException {
    // lock-ttl 300 s: the lease keeper calls every 100 s, so nothing refreshes the token while the
    // store idles. etcd removes an expired simple token on a 1 s ticker, so an idle of 5 s
    // (--auth-token-ttl=2) outlives it by 2 s; a late ticker may still miss one: idle again until
    // two expired.
    StoreConfig c = app("expiry", "app", APP_PASSWORD).option("lock-ttl", "300").build();
    try (Store store = Stores.open(c)) {
      EtcdClient client = ((EtcdStore) store).client;
      store.put(b("k0"), b("v0"));
      long authenticated = client.authentications();
      long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      int i = 0;
      while (client.authentications() < authenticated + 2 && System.nanoTime() - deadline < 0) {
        i++;
        TimeUnit.MILLISECONDS.sleep(5_000); // idle longer than --auth-token-ttl=2
        store.put(b("k" + i), b("v" + i));
        assertThat(s(store.get(b("k" + (i - 1))))).isEqualTo("v" + (i - 1));
      }
      assertThat(client.authentications())
          .as("authentications after %d idles of 5 s (first: %s)", i, authenticated)
          .isGreaterThanOrEqualTo(authenticated + 2);
      assertThat(connections(auth.port)).as("the engine's connections while open").isPositive();
    }
  }

  @Test
  void auth_aMemberRestartDropsTheToken_andTheStoreGoesOn() throws Exception {
    StoreConfig c =
        app("restart", "app", APP_PASSWORD)
            .option("lock-ttl", "30")
            .option("retry-timeout", "60000")
            .build();
    try (Store store = Stores.open(c)) {
      EtcdClient client = ((EtcdStore) store).client;
      store.put(b("before"), b("1"));
      long authenticated = client.authentications();
      auth.restart(); // simple tokens live in the member's memory: ours is unknown afterwards
      store.put(b("after"), b("2"));
      assertThat(s(store.get(b("before")))).isEqualTo("1");
      assertThat(store.writeIf(new WriteBatch().expect(b("after"), b("2")).put(b("c"), b("3"))))
          .isTrue();
      assertThat(client.authentications()).isGreaterThan(authenticated);
    }
  }

  /** Every message in a throwable's chain, and its causes' toString. */
  private static String messages(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      b.append(c).append('\n');
      for (Throwable s : c.getSuppressed()) {
        b.append(messages(s));
      }
    }
    return b.toString();
  }

  private static Set<String> httpThreads() {
    Set<String> names = new HashSet<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.isAlive() && t.getName().startsWith("HttpClient-")) {
        names.add(t.getName());
      }
    }
    return names;
  }

  /**
   * This JVM's established TCP connections to a local port: its socket inodes ({@code
   * /proc/self/fd}) matched against {@code /proc/net/tcp}'s rows whose remote port it is.
   */
  private static long connections(int port) {
    try {
      Set<String> inodes = new HashSet<>();
      try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
        for (Path fd : (Iterable<Path>) fds::iterator) {
          try {
            String target = Files.readSymbolicLink(fd).toString();
            if (target.startsWith("socket:[")) {
              inodes.add(target.substring(8, target.length() - 1));
            }
          } catch (IOException e) {
            // Closed while listing.
          }
        }
      }
      String remote = String.format(":%04X", port);
      long n = 0;
      for (String table : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
        Path p = Path.of(table);
        if (!Files.exists(p)) {
          continue;
        }
        for (String line : Files.readAllLines(p)) {
          String[] f = line.trim().split("\\s+");
          // sl local rem st ... inode(9): state 01 is ESTABLISHED
          if (f.length > 9 && f[2].endsWith(remote) && f[3].equals("01") && inodes.contains(f[9])) {
            n++;
          }
        }
      }
      return n;
    } catch (IOException e) {
      throw new IllegalStateException("cannot read /proc: " + e, e);
    }
  }
}
