package io.kv4j.etcd;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A throwaway certificate authority for tests, made with the JDK's own {@code keytool} (always
 * there, unlike openssl): EC P-256 keys, a CA certificate as PEM, and leaf certificates it signs,
 * each as a PKCS#12 file (key and chain, what the engine's {@code key-store} takes) and as PEM
 * certificate chain and PKCS#8 key (what etcd's {@code --cert-file}/{@code --key-file} take).
 */
final class Certificates {
  /** The password of every PKCS#12 file made here. */
  static final String STORE_PASSWORD = "kv4j-test-store";

  private final Path dir;
  private final String name;
  private final Path caStore;

  /** The CA certificate, PEM. */
  final Path caPem;

  private Certificates(Path dir, String name) {
    this.dir = dir;
    this.name = name;
    this.caStore = dir.resolve(name + "-ca.p12");
    this.caPem = dir.resolve(name + "-ca.pem");
  }

  /** A leaf certificate signed by this CA. */
  record Leaf(Path pkcs12, Path certPem, Path keyPem) {}

  /**
   * Makes a new CA under {@code dir}.
   *
   * @param dir where its files go
   * @param name distinguishes its files and its subject
   * @return the CA
   */
  static Certificates authority(Path dir, String name) throws Exception {
    Certificates c = new Certificates(dir, name);
    keytool(
        "-genkeypair",
        "-alias",
        "ca",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=kv4j test CA " + name,
        "-ext",
        "bc:c",
        "-ext",
        "KU=keyCertSign,cRLSign",
        "-validity",
        "7",
        "-keystore",
        c.caStore.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        STORE_PASSWORD);
    keytool(
        "-exportcert",
        "-rfc",
        "-alias",
        "ca",
        "-keystore",
        c.caStore.toString(),
        "-storepass",
        STORE_PASSWORD,
        "-file",
        c.caPem.toString());
    return c;
  }

  /**
   * Issues a certificate valid for both server and client authentication, for 127.0.0.1 and
   * localhost (etcd's gateway dials its own gRPC port with its server certificate as a client
   * certificate when clients must present one, so the server's needs both).
   *
   * @param leaf distinguishes its files and is its common name
   * @return its files
   */
  Leaf issue(String leaf) throws Exception {
    return issue(leaf, true);
  }

  /**
   * Issues a certificate as {@link #issue(String)} does, with or without a common name (etcd's
   * gateway refuses client certificates that have one when auth and client certificates are both
   * required).
   *
   * @param leaf distinguishes its files; its common name when {@code commonName}, else its OU
   * @param commonName whether the subject has a CN
   * @return its files
   */
  Leaf issue(String leaf, boolean commonName) throws Exception {
    String base = name + "-" + leaf;
    Path p12 = dir.resolve(base + ".p12");
    Path csr = dir.resolve(base + ".csr");
    Path cert = dir.resolve(base + ".pem");
    Path key = dir.resolve(base + "-key.pem");
    keytool(
        "-genkeypair",
        "-alias",
        "leaf",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        commonName ? "CN=" + leaf : "OU=" + leaf + ", O=kv4j test",
        "-validity",
        "7",
        "-keystore",
        p12.toString(),
        "-storetype",
        "PKCS12",
        "-storepass",
        STORE_PASSWORD);
    keytool(
        "-certreq",
        "-alias",
        "leaf",
        "-keystore",
        p12.toString(),
        "-storepass",
        STORE_PASSWORD,
        "-file",
        csr.toString());
    keytool(
        "-gencert",
        "-rfc",
        "-alias",
        "ca",
        "-keystore",
        caStore.toString(),
        "-storepass",
        STORE_PASSWORD,
        "-infile",
        csr.toString(),
        "-outfile",
        cert.toString(),
        "-validity",
        "7",
        "-ext",
        "SAN=ip:127.0.0.1,dns:localhost",
        "-ext",
        "EKU=serverAuth,clientAuth",
        "-ext",
        "KU=digitalSignature,keyEncipherment");
    // The signed certificate and the CA's become the key's chain, in the PKCS#12 file and as PEM.
    char[] pw = STORE_PASSWORD.toCharArray();
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(p12)) {
      ks.load(in, pw);
    }
    Key privateKey = ks.getKey("leaf", pw);
    List<Certificate> chain = new ArrayList<>(read(cert));
    chain.addAll(read(caPem));
    ks.setKeyEntry("leaf", privateKey, pw, chain.toArray(new Certificate[0]));
    try (OutputStream out = Files.newOutputStream(p12)) {
      ks.store(out, pw);
    }
    Files.writeString(key, pem("PRIVATE KEY", ((PrivateKey) privateKey).getEncoded()));
    return new Leaf(p12, cert, key);
  }

  /**
   * An SSL context trusting this CA, presenting {@code client} when not null.
   *
   * @param client the client certificate, or null
   * @return the context
   */
  SSLContext context(Leaf client) throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("ca", read(caPem).get(0));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (client != null) {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(client.pkcs12())) {
        ks.load(in, STORE_PASSWORD.toCharArray());
      }
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(ks, STORE_PASSWORD.toCharArray());
    }
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return ctx;
  }

  private static List<Certificate> read(Path pem) throws IOException, GeneralSecurityException {
    try (InputStream in = Files.newInputStream(pem)) {
      return new ArrayList<>(CertificateFactory.getInstance("X.509").generateCertificates(in));
    }
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  /** Runs the keytool of the JVM running the tests; fails with its output when it fails. */
  private static void keytool(String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    // A short-lived JVM each: skip the optimising compiler, which only costs time here.
    cmd.add("-J-XX:TieredStopAtLevel=1");
    cmd.add("-J-XX:+UseSerialGC");
    cmd.addAll(List.of(args));
    cmd.add("-noprompt");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("keytool " + args[0] + " did not finish in 60 s: " + out);
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          "keytool " + String.join(" ", args) + " failed (" + p.exitValue() + "): " + out);
    }
  }
}
