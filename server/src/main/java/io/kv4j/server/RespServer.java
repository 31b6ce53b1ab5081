package io.kv4j.server;

import io.kv4j.Store;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.timeout.IdleStateHandler;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The listening server: event loops, worker pool, channel setup, limits and counters. Does not own
 * the store.
 *
 * <p><b>The accept loop survives running out of file descriptors.</b> When {@code accept} fails
 * (EMFILE, ENFILE, or anything else, including an {@code Error}) the server channel's first handler
 * swallows the failure, counts it ({@code kv4j_accept_errors}), switches accepting off and back on
 * after {@link #ACCEPT_BACKOFF_MILLIS}; pending connections stay in the kernel's backlog and are
 * accepted once descriptors are free again. The NIO server channel also catches {@code Throwable}
 * around {@code accept} itself (Netty would otherwise close the listening socket on an Error).
 * Everything that could load a class or a file on that path is loaded at startup: Netty logs
 * through {@link StderrLog}, and every class of this package is loaded before the port is bound.
 */
final class RespServer implements AutoCloseable {
  static final long ACCEPT_BACKOFF_MILLIS = 100;

  /** Descriptors kept free for the JVM, the store and the event loops when sizing maxclients. */
  static final int RESERVED_FDS = 64;

  static {
    StderrLog.install();
  }

  final ServerOptions options;
  final Commands commands;
  final String transport;
  final int threads;
  final int maxClients;
  final long startedMillis = System.currentTimeMillis();
  final AtomicInteger connectedClients = new AtomicInteger();
  final AtomicLong clientIds = new AtomicLong();
  final AtomicLong bufferedBytes = new AtomicLong();
  final LongAdder totalConnections = new LongAdder();
  final LongAdder rejectedConnections = new LongAdder();
  final LongAdder totalCommands = new LongAdder();
  final LongAdder protocolErrors = new LongAdder();
  final LongAdder backpressurePauses = new LongAdder();
  final LongAdder acceptErrors = new LongAdder();
  final LongAdder securityAttacks = new LongAdder();
  final LongAdder deniedConnections = new LongAdder();
  final LongAdder timedOutClients = new LongAdder();
  final LongAdder queryBufferRejections = new LongAdder();
  final LongAdder authTimeouts = new LongAdder();
  final LongAdder loopCommands = new LongAdder();
  final LongAdder loopHandoffs = new LongAdder();
  final ExecutorService workers;
  private final SslContext ssl;
  private final EventLoopGroup group;
  private final Channel channel;
  private volatile long lastAcceptWarning;

  private RespServer(
      Store store, ServerOptions options, Supplier<Store> reopener, Writers writers) {
    this.options = options;
    preload();
    this.ssl = tls(options);
    boolean epoll = options.nativeTransport() && Epoll.isAvailable();
    this.threads =
        options.threads() > 0 ? options.threads() : Runtime.getRuntime().availableProcessors();
    this.maxClients = fitMaxClients(options.maxClients(), threads);
    IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    io.netty.channel.ChannelFactory<ServerChannel> channelFactory =
        epoll ? EpollServerSocketChannel::new : GuardedNioServerSocketChannel::new;
    this.transport = epoll ? "epoll" : "nio";
    this.workers = options.workers() > 0 ? newWorkers(options.workers()) : null;
    this.commands = new Commands(store, this, reopener, writers);
    this.group = new MultiThreadIoEventLoopGroup(threads, factory);
    try {
      // Load the scheduling classes the accept back-off uses now, not while descriptors are out.
      group.next().schedule(() -> {}, 0, TimeUnit.MILLISECONDS).syncUninterruptibly();
      InetSocketAddress address = new InetSocketAddress(options.bind(), options.port());
      if (address.isUnresolved()) {
        throw new IllegalArgumentException("--bind: cannot resolve " + options.bind());
      }
      ServerBootstrap b =
          new ServerBootstrap()
              .group(group)
              .channelFactory(channelFactory)
              .option(ChannelOption.SO_BACKLOG, 1024)
              .option(ChannelOption.SO_REUSEADDR, true)
              .handler(new AcceptGuard())
              .childOption(ChannelOption.TCP_NODELAY, true)
              .childOption(ChannelOption.AUTO_READ, false)
              .childOption(
                  ChannelOption.WRITE_BUFFER_WATER_MARK,
                  new WriteBufferWaterMark(256 * 1024, 1024 * 1024))
              .childHandler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      if (ssl != null) {
                        ch.pipeline().addLast(ssl.newHandler(ch.alloc()));
                      }
                      int idle = idleCheckSeconds();
                      if (idle > 0) {
                        ch.pipeline().addLast(new IdleStateHandler(idle, 0, 0));
                      }
                      ch.pipeline().addLast(new RespHandler(RespServer.this));
                    }
                  });
      this.channel = bindOrFail(b, address);
    } catch (RuntimeException | Error e) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
      if (workers != null) {
        workers.shutdownNow();
      }
      commands.close();
      throw e;
    }
  }

  private static Channel bindOrFail(ServerBootstrap b, InetSocketAddress address) {
    io.netty.channel.ChannelFuture f = b.bind(address).awaitUninterruptibly();
    if (!f.isSuccess()) {
      Throwable c = f.cause();
      throw new IllegalStateException(
          "cannot listen on "
              + address.getHostString()
              + ":"
              + address.getPort()
              + ": "
              + (c == null ? "unknown error" : c.getMessage()),
          c);
    }
    return f.channel();
  }

  /**
   * Starts serving {@code store}.
   *
   * @throws IllegalArgumentException when an option cannot be used (TLS files, address)
   * @throws IllegalStateException when the port cannot be bound; nothing is left running
   */
  static RespServer start(Store store, ServerOptions options) {
    return new RespServer(store, options, null, Writers.SHARED);
  }

  /**
   * Starts serving {@code store}; after a write failure the store is closed and replaced by {@code
   * reopener.get()} (see {@link StoreHealth}).
   */
  static RespServer start(Store store, ServerOptions options, Supplier<Store> reopener) {
    return new RespServer(store, options, reopener, Writers.SHARED);
  }

  /**
   * Starts serving a store the caller has just opened from its URI (as {@code Main} does), whose
   * other writers {@code writers} says.
   */
  static RespServer start(
      Store store, ServerOptions options, Supplier<Store> reopener, Writers writers) {
    return new RespServer(store, options, reopener, writers);
  }

  /** The store served now: it changes when a failed store is reopened. */
  Store store() {
    return commands.store();
  }

  private int idleCheckSeconds() {
    int a = options.idleTimeoutSeconds();
    int b = options.requestTimeoutSeconds();
    if (a == 0) {
      return b;
    }
    return b == 0 ? a : Math.min(a, b);
  }

  private static SslContext tls(ServerOptions options) {
    if (options.tlsCertFile() == null && options.tlsKeyFile() == null) {
      return null;
    }
    if (options.tlsCertFile() == null || options.tlsKeyFile() == null) {
      throw new IllegalArgumentException("TLS needs both --tls-cert-file and --tls-key-file");
    }
    SslContext context;
    try {
      context =
          SslContextBuilder.forServer(options.tlsCertFile().toFile(), options.tlsKeyFile().toFile())
              .build();
    } catch (Exception e) {
      throw new IllegalArgumentException(
          "cannot load TLS certificate "
              + options.tlsCertFile()
              + " and key "
              + options.tlsKeyFile()
              + ": "
              + e.getMessage(),
          e);
    }
    try {
      TlsHandshake.check(context);
    } catch (Exception e) {
      throw new IllegalArgumentException(
          "TLS certificate "
              + options.tlsCertFile()
              + " and key "
              + options.tlsKeyFile()
              + " do not work together (does the key belong to the certificate?): a test"
              + " handshake failed: "
              + e.getMessage(),
          e);
    }
    return context;
  }

  private static ExecutorService newWorkers(int n) {
    AtomicInteger ids = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            n,
            n,
            60,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "kv4j-worker-" + ids.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /**
   * maxclients, lowered (as Redis does) so that the clients cannot use up the process's file
   * descriptors: the limit minus those open now minus a reserve.
   */
  private static int fitMaxClients(int wanted, int threads) {
    long limit = -1;
    long open = -1;
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
      limit = unix.getMaxFileDescriptorCount();
      open = unix.getOpenFileDescriptorCount();
    }
    if (limit <= 0 || open < 0) {
      return wanted;
    }
    long room = limit - open - RESERVED_FDS - 4L * threads;
    if (room >= wanted) {
      return wanted;
    }
    int fitted = (int) Math.max(1, room);
    StderrLog.print(
        "kv4j-server: maxclients "
            + wanted
            + " needs more file descriptors than the limit of "
            + limit
            + " allows ("
            + open
            + " open); maxclients lowered to "
            + fitted
            + ". Raise the limit with ulimit -n.");
    return fitted;
  }

  /**
   * Loads every class of this package, so that no class file needs to be opened later: a class
   * first needed on an error path while the process is out of file descriptors could not load.
   */
  private static void preload() {
    ClassLoader loader = RespServer.class.getClassLoader();
    List<String> names = new ArrayList<>();
    String pkg = RespServer.class.getPackageName().replace('.', '/');
    try {
      URL location = RespServer.class.getProtectionDomain().getCodeSource().getLocation();
      Path p = Path.of(location.toURI());
      if (Files.isDirectory(p)) {
        try (Stream<Path> files = Files.list(p.resolve(pkg))) {
          files.forEach(
              f -> {
                String n = f.getFileName().toString();
                if (n.endsWith(".class")) {
                  names.add(pkg.replace('/', '.') + "." + n.substring(0, n.length() - 6));
                }
              });
        }
      } else {
        try (JarFile jar = new JarFile(p.toFile())) {
          for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
            String n = e.nextElement().getName();
            if (n.startsWith(pkg + "/")
                && n.endsWith(".class")
                && n.indexOf('/', pkg.length() + 1) < 0) {
              names.add(n.substring(0, n.length() - 6).replace('/', '.'));
            }
          }
        }
      }
      for (String n : names) {
        if (!n.endsWith("package-info")) {
          Class.forName(n, false, loader);
        }
      }
    } catch (Exception | LinkageError e) {
      StderrLog.print("kv4j-server: could not preload the server's classes: " + e);
    }
  }

  int port() {
    return ((InetSocketAddress) channel.localAddress()).getPort();
  }

  /** The address as given to --bind, with the port bound. */
  String address() {
    String host = options.bind();
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port();
  }

  boolean tls() {
    return ssl != null;
  }

  /** Whether the listening address is reachable from other hosts. */
  boolean bindsBeyondLoopback() {
    InetAddress a = ((InetSocketAddress) channel.localAddress()).getAddress();
    return a == null || !a.isLoopbackAddress();
  }

  @Override
  public void close() {
    channel.close().syncUninterruptibly();
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    if (workers != null) {
      workers.shutdown();
      try {
        if (!workers.awaitTermination(10, TimeUnit.SECONDS)) {
          workers.shutdownNow();
        }
      } catch (InterruptedException e) {
        workers.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
    commands.close();
  }

  /**
   * The listening channel's first handler: an accept failure stops accepting for {@link
   * #ACCEPT_BACKOFF_MILLIS} and is then retried, forever. The failure is not passed on (Netty's
   * acceptor would log it through the tail of the pipeline and back off a whole second).
   */
  private final class AcceptGuard extends ChannelInboundHandlerAdapter {
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      acceptErrors.increment();
      long now = System.nanoTime();
      if (now - lastAcceptWarning > TimeUnit.SECONDS.toNanos(10)) {
        lastAcceptWarning = now;
        StderrLog.print(
            "kv4j-server: accept failed ("
                + cause
                + "); pausing accepts for "
                + ACCEPT_BACKOFF_MILLIS
                + " ms and retrying until it succeeds");
      }
      ChannelConfig config = ctx.channel().config();
      if (config.isAutoRead()) {
        config.setAutoRead(false);
        try {
          ctx.channel()
              .eventLoop()
              .schedule(
                  () -> config.setAutoRead(true), ACCEPT_BACKOFF_MILLIS, TimeUnit.MILLISECONDS);
        } catch (Throwable t) {
          config.setAutoRead(true); // could not schedule: retry at once rather than never
        }
      }
    }
  }

  /** NIO's server channel with a catch-all around accept (NIO closes the listener on an Error). */
  static final class GuardedNioServerSocketChannel extends NioServerSocketChannel {
    @Override
    protected int doReadMessages(List<Object> buf) {
      try {
        return super.doReadMessages(buf);
      } catch (Throwable t) {
        pipeline().fireExceptionCaught(t);
        return 0;
      }
    }
  }
}
