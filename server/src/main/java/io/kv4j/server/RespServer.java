package io.kv4j.server;

import io.kv4j.Store;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
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
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** The listening server: event loops, channel setup, counters. Does not own the store. */
final class RespServer implements AutoCloseable {
  final ServerOptions options;
  final Commands commands;
  final String transport;
  final int threads;
  final long startedMillis = System.currentTimeMillis();
  final AtomicInteger connectedClients = new AtomicInteger();
  final AtomicLong clientIds = new AtomicLong();
  final LongAdder totalConnections = new LongAdder();
  final LongAdder totalCommands = new LongAdder();
  final LongAdder protocolErrors = new LongAdder();
  final LongAdder backpressurePauses = new LongAdder();
  private final EventLoopGroup group;
  private final Channel channel;

  private RespServer(Store store, ServerOptions options) throws InterruptedException {
    this.options = options;
    this.commands = new Commands(store, this);
    boolean epoll = options.nativeTransport() && Epoll.isAvailable();
    this.threads =
        options.threads() > 0 ? options.threads() : Runtime.getRuntime().availableProcessors();
    IoHandlerFactory factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    Class<? extends ServerChannel> channelClass =
        epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    this.transport = epoll ? "epoll" : "nio";
    this.group = new MultiThreadIoEventLoopGroup(threads, factory);
    try {
      ServerBootstrap b =
          new ServerBootstrap()
              .group(group)
              .channel(channelClass)
              .option(ChannelOption.SO_BACKLOG, 1024)
              .option(ChannelOption.SO_REUSEADDR, true)
              .childOption(ChannelOption.TCP_NODELAY, true)
              .childOption(
                  ChannelOption.WRITE_BUFFER_WATER_MARK,
                  new WriteBufferWaterMark(256 * 1024, 1024 * 1024))
              .childHandler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      ch.pipeline().addLast(new RespHandler(RespServer.this));
                    }
                  });
      this.channel = b.bind(new InetSocketAddress(options.bind(), options.port())).sync().channel();
    } catch (RuntimeException | InterruptedException e) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      throw e;
    }
  }

  static RespServer start(Store store, ServerOptions options) throws InterruptedException {
    return new RespServer(store, options);
  }

  int port() {
    return ((InetSocketAddress) channel.localAddress()).getPort();
  }

  String address() {
    InetSocketAddress a = (InetSocketAddress) channel.localAddress();
    return a.getHostString() + ":" + a.getPort();
  }

  @Override
  public void close() {
    channel.close().syncUninterruptibly();
    group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
  }
}
