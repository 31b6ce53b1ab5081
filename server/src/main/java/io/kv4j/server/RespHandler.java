package io.kv4j.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.io.IOException;

/**
 * One connection: accumulates input, parses complete RESP (or inline) requests in place, runs them
 * and writes the replies to one output buffer per read. Argument views point into the input buffer,
 * so parsing allocates nothing per request.
 *
 * <p>Backpressure: when the channel stops being writable (the client does not read its replies),
 * parsing stops and auto-read is switched off; both resume when the channel drains.
 */
final class RespHandler extends ChannelInboundHandlerAdapter {
  private static final int FLUSH_CHUNK = 64 * 1024;
  private static final int MAX_HEADER_DIGITS = 20;

  private static final int NEED_MORE = 0;
  private static final int COMPLETE = 1;
  private static final int SKIP = 2;
  private static final int ERROR = 3;

  private final RespServer server;
  private final Commands commands;
  private final Session session;
  private final Request request = new Request();
  private static final int INITIAL_INPUT = 16 * 1024;
  private static final int KEEP_INPUT = 1024 * 1024;

  // Input bytes [r, w) of buf not yet consumed; copied out of Netty's buffers so the parser reads a
  // plain array (monomorphic, bounds-check friendly) instead of calling ByteBuf.getByte.
  private byte[] buf = new byte[INITIAL_INPUT];
  private int r;
  private int w;
  private ByteBuf out;
  private ChannelHandlerContext ctx;
  private ByteBuf inline;

  // Parse state of the request being read, offsets relative to r.
  private int argc = -1;
  private int scan;
  private long declared;
  private long number;
  private int numberEnd;

  private boolean paused;
  private boolean closing;

  RespHandler(RespServer server) {
    this.server = server;
    this.commands = server.commands;
    this.session = new Session(server.clientIds.incrementAndGet());
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    this.ctx = ctx;
    session.remote = String.valueOf(ctx.channel().remoteAddress());
    server.connectedClients.incrementAndGet();
    server.totalConnections.increment();
    super.channelActive(ctx);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    server.connectedClients.decrementAndGet();
    release();
    super.channelInactive(ctx);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ByteBuf data = (ByteBuf) msg;
    try {
      if (closing) {
        return;
      }
      int n = data.readableBytes();
      ensureRoom(n);
      data.readBytes(buf, w, n);
      w += n;
    } finally {
      data.release();
    }
    process();
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    ctx.flush();
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    if (paused && ctx.channel().isWritable()) {
      paused = false;
      ctx.channel().config().setAutoRead(true);
      process();
      ctx.flush();
    }
    super.channelWritabilityChanged(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (!(cause instanceof IOException)) {
      System.err.println("kv4j-server: closing connection " + session.id + ": " + cause);
    }
    ctx.close();
  }

  /** Makes room for n more bytes, keeping offsets relative to r valid. */
  private void ensureRoom(int n) {
    if (buf.length - w >= n) {
      return;
    }
    int pending = w - r;
    if (r > 0 && buf.length - pending >= n) {
      System.arraycopy(buf, r, buf, 0, pending);
    } else {
      long want = Math.max((long) buf.length * 2, (long) pending + n);
      byte[] bigger = new byte[(int) Math.min(want, Integer.MAX_VALUE - 8)];
      System.arraycopy(buf, r, bigger, 0, pending);
      buf = bigger;
    }
    r = 0;
    w = pending;
  }

  private void process() {
    try {
      while (!closing && r < w) {
        if (!ctx.channel().isWritable()) {
          paused = true;
          server.backpressurePauses.increment();
          ctx.channel().config().setAutoRead(false);
          break;
        }
        int state = parse();
        if (state == NEED_MORE) {
          break;
        }
        if (state == ERROR) {
          closing = true;
          break;
        }
        if (state == COMPLETE) {
          execute();
        }
        r += scan;
        argc = -1;
        scan = 0;
        declared = 0;
        if (out != null && out.readableBytes() >= FLUSH_CHUNK) {
          ctx.write(out);
          out = null;
        }
      }
    } finally {
      if (out != null) {
        if (out.isReadable()) {
          ctx.write(out);
        } else {
          out.release();
        }
        out = null;
      }
      if (r == w) {
        r = 0;
        w = 0;
        if (buf.length > KEEP_INPUT) {
          buf = new byte[INITIAL_INPUT]; // do not keep a huge request's buffer
        }
      }
    }
    if (closing) {
      release();
      ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    } else if (paused) {
      ctx.flush();
    }
  }

  private ByteBuf out() {
    if (out == null) {
      out = ctx.alloc().ioBuffer(4096);
    }
    return out;
  }

  private void execute() {
    server.totalCommands.increment();
    boolean quit = commands.execute(session, request, out());
    if (quit) {
      closing = true;
    }
  }

  private void protocolError(String message) {
    server.protocolErrors.increment();
    Reply.error(out(), "ERR Protocol error: " + message);
  }

  /** Parses one request at r; fills {@link #request} when COMPLETE. */
  private int parse() {
    final byte[] b = buf;
    int ri = r;
    int wi = w;
    if (argc < 0) {
      if (b[ri] != '*') {
        return parseInline(ri, wi);
      }
      int h = readNumber(ri + 1, wi);
      if (h == NEED_MORE) {
        return NEED_MORE;
      }
      if (h == ERROR || number > server.options.maxArgs()) {
        protocolError("invalid multibulk length");
        return ERROR;
      }
      scan = numberEnd - ri;
      if (number <= 0) {
        return SKIP; // "*0" and "*-1" are ignored, as Redis does
      }
      argc = (int) number;
      request.reset(b, ri);
    } else {
      request.reset(b, ri, request.count());
    }
    while (request.count() < argc) {
      int p = ri + scan;
      if (p >= wi) {
        return NEED_MORE;
      }
      byte c = b[p];
      if (c != '$') {
        protocolError("expected '$', got '" + printable(c) + "'");
        return ERROR;
      }
      int h = readNumber(p + 1, wi);
      if (h == NEED_MORE) {
        return NEED_MORE;
      }
      if (h == ERROR || number < 0 || number > server.options.maxBulkBytes()) {
        protocolError("invalid bulk length");
        return ERROR;
      }
      long len = number;
      if (declared + len > server.options.maxRequestBytes()) {
        protocolError(
            "request larger than the limit of " + server.options.maxRequestBytes() + " bytes");
        return ERROR;
      }
      int data = numberEnd;
      if ((long) wi - data < len + 2) {
        return NEED_MORE;
      }
      int end = data + (int) len;
      if (b[end] != '\r' || b[end + 1] != '\n') {
        protocolError("bulk string not terminated by CRLF");
        return ERROR;
      }
      request.add(data - ri, (int) len);
      declared += len;
      scan = end + 2 - ri;
    }
    return COMPLETE;
  }

  /**
   * Reads a decimal number ended by CRLF starting at p into {@link #number}/{@link #numberEnd} (the
   * index after the LF).
   */
  private int readNumber(int p, int wi) {
    long v = 0;
    boolean negative = false;
    int i = p;
    final byte[] b = buf;
    if (i < wi && b[i] == '-') {
      negative = true;
      i++;
    }
    int digitsStart = i;
    while (true) {
      if (i >= wi) {
        return i - p > MAX_HEADER_DIGITS ? ERROR : NEED_MORE;
      }
      byte c = b[i];
      if (c == '\r') {
        break;
      }
      if (c < '0' || c > '9' || i - digitsStart >= MAX_HEADER_DIGITS - 2) {
        return ERROR;
      }
      v = v * 10 + (c - '0');
      i++;
    }
    if (i == digitsStart) {
      return ERROR;
    }
    if (i + 1 >= wi) {
      return NEED_MORE;
    }
    if (b[i + 1] != '\n') {
      return ERROR;
    }
    number = negative ? -v : v;
    numberEnd = i + 2;
    return COMPLETE;
  }

  private int parseInline(int ri, int wi) {
    int limit = server.options.maxInlineBytes();
    int lf = -1;
    for (int i = ri, to = Math.min(wi, ri + limit + 1); i < to; i++) {
      if (buf[i] == '\n') {
        lf = i;
        break;
      }
    }
    if (lf < 0) {
      if (wi - ri > limit) {
        protocolError("too big inline request");
        return ERROR;
      }
      return NEED_MORE;
    }
    scan = lf + 1 - ri;
    int end = lf > ri && buf[lf - 1] == '\r' ? lf - 1 : lf;
    if (inline == null) {
      inline = Unpooled.buffer(256);
    }
    inline.clear();
    request.reset(null, 0);
    if (!InlineSplitter.split(buf, ri, end, inline, request)) {
      protocolError("unbalanced quotes in request");
      return ERROR;
    }
    request.reset(inline.array(), inline.arrayOffset(), request.count());
    return request.count() == 0 ? SKIP : COMPLETE;
  }

  private static String printable(byte b) {
    return b >= 32 && b < 127 ? String.valueOf((char) b) : String.format("\\x%02x", b & 0xFF);
  }

  private void release() {
    r = 0;
    w = 0;
    if (out != null) {
      out.release();
      out = null;
    }
    argc = -1;
  }
}
