package io.kv4j.etcd;

import io.kv4j.StoreIOException;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.UnrecoverableKeyException;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.Locale;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * The TLS side of the connections to etcd: the SSL context the options {@code ca-file} and {@code
 * key-store} describe, and what a failed connection says about them. A failed certificate check
 * never heals by retrying, so {@link #explain} turns it into a message naming the option to fix.
 */
final class Tls {
  private final EtcdSettings settings;
  private final SSLContext context;

  /**
   * Whether a member asked for a client certificate while option {@code key-store} is empty. Under
   * TLS 1.3 a member requiring one (etcd's {@code --client-cert-auth}) refuses the missing
   * certificate after the client's side of the handshake completed, so the client only sees a
   * connection closed without an answer; this is how that case is told from a network failure.
   */
  private volatile boolean certificateRequested;

  Tls(EtcdSettings settings, String who) {
    this.settings = settings;
    this.context = build(who);
  }

  /** The SSL context (the JVM's default trust when {@code ca-file} is empty). */
  SSLContext context() {
    return context;
  }

  private SSLContext build(String who) {
    try {
      TrustManagerFactory tmf = null;
      if (!settings.caFile().isEmpty()) {
        KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
        trust.load(null, null);
        int n = 0;
        for (Certificate c : certificates(who)) {
          trust.setCertificateEntry("ca-" + n++, c);
        }
        tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
      }
      KeyManager[] keys;
      if (settings.keyStore().isEmpty()) {
        keys = new KeyManager[] {new NoCertificate()};
      } else {
        keys = keyManagers(who);
      }
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(keys, tmf == null ? null : tmf.getTrustManagers(), null);
      return ctx;
    } catch (IOException | GeneralSecurityException e) {
      throw new StoreIOException(who + ": cannot set up TLS: " + e, e);
    }
  }

  private Collection<? extends Certificate> certificates(String who)
      throws IOException, CertificateException {
    Path file = Path.of(settings.caFile());
    Collection<? extends Certificate> certs;
    try (InputStream in = Files.newInputStream(file)) {
      certs = CertificateFactory.getInstance("X.509").generateCertificates(in);
    } catch (NoSuchFileException e) {
      throw new StoreIOException(
          who + ": option 'ca-file' names " + file + ", which does not exist", e);
    } catch (CertificateException e) {
      throw new IllegalArgumentException(
          "option 'ca-file' names " + file + ", which holds no PEM certificate: " + e.getMessage(),
          e);
    }
    if (certs.isEmpty()) {
      throw new IllegalArgumentException(
          "option 'ca-file' names " + file + ", which holds no PEM certificate");
    }
    return certs;
  }

  private KeyManager[] keyManagers(String who) throws IOException, GeneralSecurityException {
    Path file = Path.of(settings.keyStore());
    char[] pw = settings.keyStorePassword().toCharArray();
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(file)) {
      ks.load(in, pw);
    } catch (NoSuchFileException e) {
      throw new StoreIOException(
          who + ": option 'key-store' names " + file + ", which does not exist", e);
    } catch (IOException e) {
      // PKCS12 reports a wrong password as an IOException caused by UnrecoverableKeyException.
      String why =
          e.getCause() instanceof UnrecoverableKeyException
              ? "its password (option 'key-store-password') is wrong"
              : "it is not a PKCS#12 file (" + e.getMessage() + ")";
      throw new StoreIOException(
          who + ": cannot read option 'key-store' " + file + ": " + why, (Throwable) null);
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, pw);
    return kmf.getKeyManagers();
  }

  /**
   * What a failed connection to {@code endpoint} says about the TLS options, or null when it is no
   * TLS failure (a network failure, worth retrying).
   */
  String explain(IOException e, URI endpoint) {
    SSLException ssl = null;
    for (Throwable c = e; c != null && ssl == null; c = c.getCause()) {
      if (c instanceof SSLException s) {
        ssl = s;
      }
    }
    boolean https = "https".equals(endpoint.getScheme());
    if (ssl == null) {
      if (https && certificateRequested && settings.keyStore().isEmpty()) {
        return "TLS: "
            + endpoint
            + " asked for a client certificate and closed the connection without an answer: the"
            + " member requires client certificates (mutual TLS, etcd's --client-cert-auth) and"
            + " option 'key-store' is empty; set 'key-store' and 'key-store-password' to a"
            + " PKCS#12 file with a certificate issued by a CA the member trusts ("
            + e
            + ")";
      }
      return null;
    }
    String m = String.valueOf(ssl.getMessage());
    String lower = m.toLowerCase(Locale.ROOT);
    String why;
    if (lower.contains("pkix") || lower.contains("certification path")) {
      why =
          "the member's certificate is not issued by a CA this client trusts (option 'ca-file' "
              + (settings.caFile().isEmpty()
                  ? "is empty, so only the JVM's default CAs are trusted"
                  : "= " + settings.caFile())
              + "): set 'ca-file' to a PEM file with the CA certificate that issued the member's";
    } else if (lower.contains("subject alternative") || lower.contains("no name matching")) {
      why =
          "the member's certificate does not name host '"
              + endpoint.getHost()
              + "' among its subject alternative names: use an endpoint it names";
    } else if (lower.contains("certificate_required")
        || lower.contains("bad_certificate")
        || lower.contains("unknown_ca")
        || lower.contains("certificate_unknown")) {
      why =
          settings.keyStore().isEmpty()
              ? "the member requires a client certificate (mutual TLS, etcd's --client-cert-auth)"
                  + " and option 'key-store' is empty; set 'key-store' and 'key-store-password'"
              : "the member refused the client certificate of option 'key-store' = "
                  + settings.keyStore()
                  + ": it must be issued by a CA in the member's --trusted-ca-file";
    } else if (lower.contains("unrecognized ssl message") || lower.contains("plaintext")) {
      why = "the member does not speak TLS on this port: use an http:// endpoint";
    } else {
      why = "the TLS handshake failed (check the certificate options 'ca-file' and 'key-store')";
    }
    return "TLS with " + endpoint + " failed: " + why + " (" + ssl + ")";
  }

  /**
   * The key manager when option {@code key-store} is empty: presents no certificate, as the default
   * would, but notes that a member asked for one.
   */
  private final class NoCertificate extends X509ExtendedKeyManager {
    @Override
    public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
      certificateRequested = true;
      return null;
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
      certificateRequested = true;
      return null;
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
      return null;
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
      return null;
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
      return null;
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
      return null;
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
      return null;
    }
  }
}
