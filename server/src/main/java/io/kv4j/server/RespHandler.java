package io.kv4j.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.timeout.IdleStateEvent;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * One connection: accumulates input, parses complete RESP (or inline) requests in place, runs them
 * and writes the replies to one output buffer per read. Argument views point into the input buffer,
 * so parsing allocates nothing per request.
 *
 * <p><b>Threads.</b> Netty calls this handler on the connection's event loop; everything that
 * touches the input buffer, the parser or the store runs as a task of the connection's {@link
 * Serial} executor, on the worker pool (or inline on the event loop with {@code --workers 0}). So a
 * command that blocks (an fsync of a SYNC store, a large KEYS) holds its own connection only.
 * Reading is pulled: auto-read is off, and the next read is requested only after the previous one
 * was processed, so at most one read's worth of input waits for a busy worker.
 *
 * <p><b>Backpressure.</b> When the channel stops being writable (the client does not read its
 * replies), parsing stops and no more input is read; both resume when the channel drains.
 *
 * <p><b>Memory.</b> A bulk header larger than the engine could store is refused before its payload
 * is read. The input a connection holds (its buffer beyond the first 16 KiB, plus input waiting for
 * a worker) is charged to one server-wide budget ({@code --total-query-buffer-limit}) and to the
 * per-client limit ({@code --client-query-buffer-limit}); the client whose input would pass either
 * gets an error and is closed.
 */
final class RespHandler extends ChannelInboundHandlerAdapter {
  private static final int FLUSH_CHUNK = 64 * 1024;
  private static final int MAX_HEADER_DIGITS = 20;

  private static final int NEED_MORE = 0;
  private static final int COMPLETE = 1;
  private static final int SKIP = 2;
  private static final int ERROR = 3;

  private static final int INITIAL_INPUT = 16 * 1024;
  private static final int KEEP_INPUT = 1024 * 1024;

  static final String MAX_CLIENTS_ERROR = "-ERR max number of clients reached\r\n";

  private final RespServer server;
  private final Commands commands;
  private final Request request = new Request();
  private final long maxBulk;
  private final Serial serial;
  private Session session;

  // Input bytes [r, w) of buf not yet consumed; copied out of Netty's buffers so the parser reads a
  // plain array (monomorphic, bounds-check friendly) instead of calling ByteBuf.getByte.
  private byte[] buf = new byte[INITIAL_INPUT];
  private int r;
  private int w;
  private long charged; // bytes of buf beyond INITIAL_INPUT charged to server.bufferedBytes
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
  private int authGraces;

  /** Whether commands may run on the event loop (see {@link Commands#execute}). */
  private final boolean loop;

  /** Reads waiting for the end of the read to go to a worker together; event loop only. */
  private final java.util.ArrayList<ByteBuf> arrived = new java.util.ArrayList<>(4);

  /** The event loop stopped at a request that must run on a worker; event loop only. */
  private boolean handedOff;

  /**
   * The connection's SETs are with the committer ({@link SetCommitter}): nothing more of it runs or
   * is answered, and nothing more is read, until they are written ({@link #committed}).
   */
  private volatile boolean waiting;

  /** A protocol error found while SETs before it wait for the committer: answered after them. */
  private String deferredError;

  /**
   * Requests one pass of an event loop runs for a connection before it lets the loop serve others
   * (Redis reads 16 KiB of a client per pass, a few hundred small commands): the rest runs in a
   * task queued behind the loop's other work ({@link #continueOnLoop}).
   */
  static final int LOOP_TURN = 1024;

  /** The event loop stopped after {@link #LOOP_TURN} requests; the rest is queued on the loop. */
  private boolean yielded;

  private final Runnable continueOnLoop = this::continueOnLoop;
  private final Runnable continueOnWorker = this::continueOnWorker;
  private final Runnable readDone = this::readDone;
  private boolean closing;

  /**
   * How long, and for how many bytes, a connection the server closes after a reply keeps reading
   * (and dropping) what the client still sends. Closing a socket with unread input makes the close
   * a reset, and a reset can reach the client before it read the reply that said why: a client in
   * the middle of sending a request over the query-buffer limit would see "connection reset"
   * instead of the error. So the server answers, shuts its output (the client reads the answer and
   * then end of stream), drains the input until the client closes, and closes at the latest after
   * these bounds (a client that goes on sending costs reads, never memory).
   */
  static final long LINGER_MILLIS = 5_000;

  static final long LINGER_BYTES = 256L << 20;

  /** Set on the event loop once the replies are out and the output is shut; see LINGER_MILLIS. */
  private boolean lingering;

  private long lingered;
  private boolean counted;
  private volatile boolean inactive;
  private volatile boolean partial;
  private volatile long lastReadNanos = System.nanoTime();

  RespHandler(RespServer server) {
    this.server = server;
    this.commands = server.commands;
    this.maxBulk = Math.min(server.options.maxBulkBytes(), commands.maxArgumentBytes());
    this.serial = new Serial(server.workers, this::failed);
    this.loop = commands.loopEnabled();
  }

  // ---- Netty callbacks, on the event loop ----

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    this.ctx = ctx;
    SocketAddress remote = ctx.channel().remoteAddress();
    boolean local =
        !(remote instanceof InetSocketAddress a)
            || a.getAddress() == null
            || a.getAddress().isLoopbackAddress();
    session = new Session(server.clientIds.incrementAndGet(), local, server.bufferedBytes);
    session.remote = String.valueOf(remote);
    session.authenticated = !commands.defaultUserNeedsPassword();
    session.inputBytes = buf.length;
    server.totalConnections.increment();
    counted = true;
    if (server.connectedClients.incrementAndGet() > server.maxClients) {
      server.rejectedConnections.increment();
      refuse(MAX_CLIENTS_ERROR);
      return;
    }
    if (!local && server.options.protectedMode() && !commands.defaultUserNeedsPassword()) {
      server.deniedConnections.increment();
      refuse(ConnectionCommands.DENIED);
      return;
    }
    super.channelActive(ctx);
    int authTimeout = server.options.authTimeoutSeconds();
    if (!session.authenticated && authTimeout > 0) {
      ctx.executor().schedule(this::authDeadline, authTimeout, TimeUnit.SECONDS);
    }
    ctx.read();
  }

  /**
   * A client that had to authenticate and has not within {@code --auth-timeout} is closed, so
   * strangers cannot hold connections and their buffers (a trickle of bytes keeps a partial request
   * alive for --request-timeout each time). A request of this client still being processed (its
   * AUTH, perhaps) gets a second more, at most five times.
   */
  private void authDeadline() {
    if (session.authenticated || inactive || closing) {
      return;
    }
    if (serial.busy() && authGraces++ < 5) {
      ctx.executor().schedule(this::authDeadline, 1, TimeUnit.SECONDS);
      return;
    }
    server.authTimeouts.increment();
    ctx.close();
  }

  private void refuse(String text) {
    closing = true;
    ctx.writeAndFlush(Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII))
        .addListener(ChannelFutureListener.CLOSE);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    inactive = true;
    if (counted) {
      counted = false;
      server.connectedClients.decrementAndGet();
    }
    for (ByteBuf data : arrived) { // a read cut short by the close
      server.bufferedBytes.addAndGet(-data.readableBytes());
      data.release();
    }
    arrived.clear();
    serial.execute(this::release);
    super.channelInactive(ctx);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ByteBuf data = (ByteBuf) msg;
    if (lingering) {
      lingered += data.readableBytes();
      data.release();
      if (lingered > LINGER_BYTES) {
        ctx.close();
      }
      return;
    }
    lastReadNanos = System.nanoTime();
    int n = data.readableBytes();
    if (server.bufferedBytes.addAndGet(n) > server.options.totalQueryBufferLimit()) {
      server.bufferedBytes.addAndGet(-n);
      data.release();
      serial.execute(this::overTotalLimit);
      return;
    }
    if (loop && arrived.isEmpty() && serial.enter()) {
      // Nothing of this connection is queued or running: parse and run here, on the event loop,
      // as far as the requests allow (see Commands.execute).
      try {
        consume(data, n, true);
        if (handedOff) {
          handedOff = false;
          serial.execute(continueOnWorker);
        }
      } catch (Throwable t) {
        failed(t);
      } finally {
        serial.leave();
      }
      return;
    }
    // For a worker: kept until the read is complete, then all of it goes in one task.
    arrived.add(data);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    if (lingering) {
      ctx.read();
    } else if (!arrived.isEmpty()) {
      ByteBuf[] batch = arrived.toArray(new ByteBuf[0]);
      arrived.clear();
      serial.execute(() -> consumeAll(batch));
    } else if (loop && serial.enter()) {
      try {
        readDone();
      } catch (Throwable t) {
        failed(t);
      } finally {
        serial.leave();
      }
    } else {
      serial.execute(readDone);
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    if (ctx.channel().isWritable()) {
      serial.execute(this::resume);
    }
    super.channelWritabilityChanged(ctx);
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent) {
      // Not idle while a worker runs this client's commands or while the server stopped reading
      // because the client does not take its replies.
      if (!serial.busy() && !inactive && !writePaused && !waiting) {
        long idle = System.nanoTime() - lastReadNanos;
        int limit =
            partial ? server.options.requestTimeoutSeconds() : server.options.idleTimeoutSeconds();
        if (limit > 0 && idle >= TimeUnit.SECONDS.toNanos(limit)) {
          server.timedOutClients.increment();
          ctx.close();
        }
      }
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (!(cause instanceof IOException)) {
      StderrLog.print(
          "kv4j-server: closing connection " + (session == null ? "?" : session.id) + ": " + cause);
    }
    ctx.close();
  }

  /** Whatever a task of this connection threw (an Error included) closes this connection only. */
  private void failed(Throwable cause) {
    StderrLog.print(
        "kv4j-server: closing connection " + (session == null ? "?" : session.id) + ": " + cause);
    closing = true;
    releaseOut();
    if (ctx != null) {
      ctx.close();
    }
  }

  // ---- tasks, on the connection's Serial executor ----

  private volatile boolean writePaused;

  /**
   * A worker's task: the input of one read, processed together (so the read's plain SETs make one
   * batch, see {@link Commands#flushPending}), then what follows a read (see {@link #readDone}).
   */
  private void consumeAll(ByteBuf[] batch) {
    boolean added = false;
    try {
      for (int i = 0; i < batch.length; i++) {
        ByteBuf data = batch[i];
        batch[i] = null;
        added |= append(data, data.readableBytes());
      }
    } finally {
      for (ByteBuf data : batch) {
        if (data != null) { // not consumed: the connection closed part way
          server.bufferedBytes.addAndGet(-data.readableBytes());
          data.release();
        }
      }
    }
    if (added) {
      process(false);
    }
    readDone();
  }

  private void consume(ByteBuf data, int n, boolean onLoop) {
    if (append(data, n)) {
      process(onLoop);
    }
  }

  /**
   * Appends {@code data} to the input buffer and releases it; false when closing or over a limit.
   */
  private boolean append(ByteBuf data, int n) {
    try {
      if (closing || inactive) {
        return false;
      }
      if (!ensureRoom(n)) {
        return false;
      }
      data.readBytes(buf, w, n);
      w += n;
      return true;
    } finally {
      data.release();
      server.bufferedBytes.addAndGet(-n);
    }
  }

  /**
   * After a read was processed: writes what is left of the replies, flushes, and asks for the next
   * read unless paused. From a worker this is one task for the event loop, not one per step.
   */
  private void readDone() {
    if (closing || inactive) {
      return;
    }
    ByteBuf o = out;
    out = null;
    if (o != null && !o.isReadable()) {
      o.release();
      o = null;
    }
    boolean again = !paused && !waiting && !yielded;
    if (ctx.executor().inEventLoop()) {
      flushAndRead(o, again);
    } else {
      ByteBuf replies = o;
      ctx.executor().execute(() -> flushAndRead(replies, again));
    }
  }

  private void flushAndRead(ByteBuf replies, boolean again) {
    if (replies != null) {
      ctx.write(replies);
    }
    ctx.flush();
    if (again) {
      ctx.read();
    }
  }

  /** On the event loop, after its other work: the rest of a read it stopped after a turn. */
  private void continueOnLoop() {
    yielded = false;
    if (serial.enter()) {
      try {
        if (closing || inactive) {
          return;
        }
        process(true);
        if (handedOff) {
          handedOff = false;
          serial.execute(continueOnWorker);
          serial.execute(readDone);
        } else {
          readDone();
        }
      } catch (Throwable t) {
        failed(t);
      } finally {
        serial.leave();
      }
    } else {
      serial.execute(
          () -> {
            process(false);
            readDone();
          });
    }
  }

  /** A worker's task: the rest of a read that an event loop handed over (its replies flushed). */
  private void continueOnWorker() {
    if (closing || inactive) {
      return;
    }
    process(false);
    ByteBuf o = out;
    out = null;
    if (o != null) {
      ctx.writeAndFlush(o);
    }
  }

  private void resume() {
    if (paused && !waiting && !closing && !inactive && ctx.channel().isWritable()) {
      paused = false;
      writePaused = false;
      process(false);
      if (!closing) {
        readDone();
      }
    }
  }

  private void overTotalLimit() {
    if (closing || inactive) {
      return;
    }
    server.queryBufferRejections.increment();
    protocolError(
        "the query buffers of all clients would pass the server's limit of "
            + server.options.totalQueryBufferLimit()
            + " bytes (total-query-buffer-limit)");
    closing = true;
    finish();
  }

  /** Makes room for n more bytes, keeping offsets relative to r valid; false when over a limit. */
  private boolean ensureRoom(int n) {
    if (buf.length - w >= n) {
      return true;
    }
    int pending = w - r;
    if (r > 0 && buf.length - pending >= n) {
      System.arraycopy(buf, r, buf, 0, pending);
    } else {
      long need = (long) pending + n;
      long limit = Math.min(server.options.clientQueryBufferLimit(), Integer.MAX_VALUE - 8);
      if (need + session.queuedBytes > limit) {
        server.queryBufferRejections.increment();
        protocolError(
            "client query buffer over the limit of "
                + server.options.clientQueryBufferLimit()
                + " bytes (client-query-buffer-limit)");
        closing = true;
        finish();
        return false;
      }
      long want = Math.min(Math.max((long) buf.length * 2, need), limit);
      long delta = want - buf.length;
      if (server.bufferedBytes.addAndGet(delta) > server.options.totalQueryBufferLimit()) {
        server.bufferedBytes.addAndGet(-delta);
        overTotalLimit();
        return false;
      }
      charged += delta;
      byte[] bigger = new byte[(int) want];
      System.arraycopy(buf, r, bigger, 0, pending);
      buf = bigger;
      session.inputBytes = want;
    }
    r = 0;
    w = pending;
    return true;
  }

  /**
   * Parses and runs the complete requests in the buffer, in order. On an event loop ({@code
   * onLoop}) it stops at the first request that must run on a worker and sets {@link #handedOff}:
   * that request and the rest are left in the buffer for {@link #continueOnWorker}. Replies collect
   * in {@link #out}: written here on an event loop, left for {@link #readDone} on a worker (so a
   * worker's read costs the event loop one task).
   */
  private void process(boolean onLoop) {
    int ran = 0;
    try {
      while (!closing && !waiting && r < w) {
        if (onLoop && ran++ == LOOP_TURN) {
          yielded = true;
          ctx.executor().execute(continueOnLoop);
          break;
        }
        if (!ctx.channel().isWritable()) {
          paused = true;
          writePaused = true;
          server.backpressurePauses.increment();
          break;
        }
        int state = parse();
        if (state == NEED_MORE) {
          break;
        }
        if (state == ERROR) {
          if (deferredError == null) {
            closing = true;
          }
          break; // else closed once the SETs before it are answered
        }
        int done = state == COMPLETE ? execute(onLoop) : Commands.DONE;
        if (done != Commands.DONE) {
          // Parsed again later: parsing is cheap and the views are only valid now.
          argc = -1;
          scan = 0;
          declared = 0;
          handedOff = done == Commands.ELSEWHERE;
          break; // WAIT: the kept SETs go to the committer below, this request runs after them
        }
        r += scan;
        argc = -1;
        scan = 0;
        declared = 0;
        if (onLoop && session.pending != null && session.pending.full()) {
          break;
        }
        if (out != null && out.readableBytes() >= FLUSH_CHUNK) {
          ctx.write(out);
          out = null;
        }
      }
    } finally {
      settlePending(onLoop);
      if (out != null && (onLoop || closing || paused)) {
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
          shrink(); // do not keep a huge request's buffer
        }
      }
      partial = r < w;
    }
    finish();
  }

  /** After processing: closes the connection when asked to, else flushes when paused. */
  private void finish() {
    if (waiting) {
      return; // closed or flushed once the committer answered (see committed)
    }
    if (closing) {
      if (out != null) {
        ctx.write(out);
        out = null;
      }
      releaseInput();
      ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener((ChannelFutureListener) this::linger);
    } else if (paused) {
      ctx.flush();
    }
  }

  /** On the event loop, once the last replies are written: see {@link #LINGER_MILLIS}. */
  private void linger(ChannelFuture written) {
    Channel channel = written.channel();
    if (!written.isSuccess() || !channel.isActive() || !(channel instanceof DuplexChannel d)) {
      channel.close();
      return;
    }
    lingering = true;
    d.shutdownOutput()
        .addListener(
            shut -> {
              if (!shut.isSuccess()) {
                channel.close();
              }
            });
    channel.eventLoop().schedule(() -> channel.close(), LINGER_MILLIS, TimeUnit.MILLISECONDS);
    ctx.read();
  }

  private ByteBuf out() {
    if (out == null) {
      out = ctx.alloc().ioBuffer(4096);
    }
    return out;
  }

  /**
   * Runs the parsed request: {@link Commands#DONE}, or {@link Commands#ELSEWHERE} / {@link
   * Commands#WAIT} when nothing was done (run it on a worker / after the committer).
   */
  private int execute(boolean onLoop) {
    if (request.count() > 0
        && (request.is(0, "POST") || request.is(0, "HOST:") || request.is(0, "PRI"))) {
      // A browser's HTTP request to this port (cross-protocol scripting): Redis aborts the
      // connection without a reply, and so do we, before anything later in the input runs. PRI
      // is the first word of the HTTP/2 connection preface ("PRI * HTTP/2.0"); no command has
      // that name.
      server.securityAttacks.increment();
      StderrLog.print(
          "kv4j-server: possible SECURITY ATTACK detected: an HTTP '"
              + request.string(0)
              + "' line from "
              + session.remote
              + "; connection aborted");
      // What came before this line runs, as in Redis; no reply is sent.
      if (onLoop && session.pending != null && !session.pending.keys.isEmpty()) {
        commands.submitPending(session, ctx.executor(), error -> {});
      } else {
        flushPending();
      }
      releaseOut();
      closing = true;
      return Commands.DONE;
    }
    int done = commands.execute(session, request, out(), onLoop);
    if (done == Commands.ELSEWHERE) {
      server.loopHandoffs.increment();
      return done;
    }
    if (done == Commands.WAIT) {
      return done;
    }
    server.totalCommands.increment();
    if (onLoop) {
      server.loopCommands.increment();
    }
    if (done == Commands.QUIT) {
      closing = true;
    }
    return Commands.DONE;
  }

  /** Whether SETs kept on this event loop are to go to the committer. */
  private boolean committing() {
    return session.pending != null
        && !session.pending.keys.isEmpty()
        && commands.commitsOnLoop()
        && ctx.executor().inEventLoop();
  }

  /**
   * At the end of processing: SETs kept on an event loop go to the committer (the connection waits
   * for them), those kept on a worker are written here.
   */
  private void settlePending(boolean onLoop) {
    PendingSets p = session.pending;
    if (p == null || p.keys.isEmpty()) {
      return;
    }
    if (onLoop && commands.commitsOnLoop()) {
      int n = p.keys.size();
      waiting = true;
      commands.submitPending(
          session, ctx.executor(), error -> ctx.executor().execute(() -> onCommitted(error, n)));
    } else {
      flushPending();
    }
  }

  /** On the event loop: the committer wrote (or failed) this connection's {@code n} SETs. */
  private void onCommitted(String error, int n) {
    if (serial.enter()) {
      try {
        committed(error, n);
      } catch (Throwable t) {
        failed(t);
      } finally {
        serial.leave();
      }
    } else {
      serial.execute(() -> committed(error, n));
    }
  }

  /** Answers the committed SETs, then goes on with the connection's input. */
  private void committed(String error, int n) {
    waiting = false;
    if (inactive) {
      return;
    }
    ByteBuf o = out();
    for (int i = 0; i < n; i++) {
      if (error == null) {
        Reply.ok(o);
      } else {
        Reply.error(o, error);
      }
    }
    if (deferredError != null) {
      String message = deferredError;
      deferredError = null;
      protocolError(message);
      closing = true;
      finish();
      return;
    }
    if (closing) {
      finish();
      return;
    }
    boolean here = loop && ctx.executor().inEventLoop();
    process(here);
    if (handedOff) {
      handedOff = false;
      serial.execute(continueOnWorker);
      serial.execute(readDone);
      return;
    }
    readDone();
  }

  /** Writes the SETs the commands kept back (see {@link Commands#flushPending}), answering them. */
  private void flushPending() {
    if (session.pending != null && !session.pending.keys.isEmpty()) {
      commands.flushPending(session, out());
    }
  }

  private void protocolError(String message) {
    if (waiting || committing()) {
      // SETs before it are (or go) to the committer: their answers come first, then this one.
      if (deferredError == null) {
        deferredError = message;
      }
      return;
    }
    flushPending(); // requests before the bad one are answered first
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
      if (number > ServerOptions.UNAUTHENTICATED_MAX_ARGS && !session.authenticated) {
        protocolError("unauthenticated multibulk length");
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
      if (number > ServerOptions.UNAUTHENTICATED_MAX_BULK && !session.authenticated) {
        // Redis's limit for strangers: they cannot make the server buffer big requests.
        protocolError("unauthenticated bulk length");
        return ERROR;
      }
      if (number > maxBulk) {
        // Refused at the header: the payload would be buffered only for the engine to reject it.
        protocolError(
            "bulk length " + number + " is over the engine's value limit of " + maxBulk + " bytes");
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

  private void releaseOut() {
    if (out != null) {
      out.release();
      out = null;
    }
  }

  private void shrink() {
    server.bufferedBytes.addAndGet(-charged);
    charged = 0;
    buf = new byte[INITIAL_INPUT];
    if (session != null) {
      session.inputBytes = INITIAL_INPUT;
    }
  }

  private void releaseInput() {
    r = 0;
    w = 0;
    argc = -1;
    if (charged > 0) {
      shrink();
    }
  }

  private void release() {
    releaseOut();
    releaseInput();
    if (inline != null) {
      inline.release();
      inline = null;
    }
    if (session != null) {
      commands.disconnected(session);
    }
  }
}
