package io.kv4j.server;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.nio.ByteBuffer;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

/**
 * One TLS handshake in memory, between the server's context and a client that trusts any
 * certificate, made at startup. The JDK provider loads a certificate and a private key that do not
 * belong together without complaint, and then every client's handshake fails (the server's
 * signature does not verify against its certificate); this handshake fails the same way, so the
 * server can refuse to start instead. The client still checks the server's signature with the
 * certificate's public key: only the chain's trust is skipped.
 */
final class TlsHandshake {
  private static final int MAX_STEPS = 1000;

  private TlsHandshake() {}

  /**
   * Completes a handshake with {@code server}.
   *
   * @throws SSLException why the handshake failed (a key that does not match its certificate:
   *     typically a signature that does not verify)
   */
  static void check(SslContext server) throws SSLException {
    SslContext client =
        SslContextBuilder.forClient().trustManager(InsecureTrustManagerFactory.INSTANCE).build();
    SSLEngine s = server.newEngine(ByteBufAllocator.DEFAULT);
    SSLEngine c = client.newEngine(ByteBufAllocator.DEFAULT, "localhost", 443);
    try {
      int packet = Math.max(s.getSession().getPacketBufferSize(), 1 << 17);
      int app = Math.max(s.getSession().getApplicationBufferSize(), 1 << 17);
      ByteBuffer toServer = ByteBuffer.allocate(packet);
      ByteBuffer toClient = ByteBuffer.allocate(packet);
      ByteBuffer sink = ByteBuffer.allocate(app);
      c.beginHandshake();
      s.beginHandshake();
      for (int i = 0; i < MAX_STEPS; i++) {
        boolean moved = step(c, toClient, toServer, sink) | step(s, toServer, toClient, sink);
        if (done(c) && done(s)) {
          return;
        }
        if (!moved) {
          throw new SSLException("the TLS handshake with the server's own context stalled");
        }
      }
      throw new SSLException("the TLS handshake with the server's own context did not finish");
    } finally {
      c.closeOutbound();
      s.closeOutbound();
    }
  }

  private static boolean done(SSLEngine e) {
    SSLEngineResult.HandshakeStatus h = e.getHandshakeStatus();
    return h == SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING
        || h == SSLEngineResult.HandshakeStatus.FINISHED;
  }

  /** Advances one engine: reads what the peer sent, writes what it must send; true if it moved. */
  private static boolean step(SSLEngine e, ByteBuffer in, ByteBuffer out, ByteBuffer sink)
      throws SSLException {
    boolean moved = false;
    while (true) {
      switch (e.getHandshakeStatus()) {
        case NEED_TASK -> {
          Runnable t;
          while ((t = e.getDelegatedTask()) != null) {
            t.run();
          }
          moved = true;
        }
        case NEED_WRAP -> {
          SSLEngineResult r = e.wrap(ByteBuffer.allocate(0), out);
          if (r.bytesProduced() == 0) {
            return moved;
          }
          moved = true;
        }
        case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
          in.flip();
          SSLEngineResult r;
          try {
            r = e.unwrap(in, sink);
          } finally {
            in.compact();
          }
          sink.clear();
          if (r.bytesConsumed() == 0
              && r.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NEED_TASK) {
            return moved;
          }
          moved = true;
        }
        default -> {
          return moved;
        }
      }
    }
  }
}
