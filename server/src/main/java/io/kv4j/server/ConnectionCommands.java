package io.kv4j.server;

import io.netty.buffer.ByteBuf;

/**
 * The connection commands: PING, SELECT, HELLO, AUTH, ACL, CLIENT and RESET (ECHO and QUIT are
 * one-liners in the table). Authentication follows Redis: the {@code default} user with {@code
 * --requirepass}, or Redis's "nopass" default user without it, and the {@code --user} users.
 */
final class ConnectionCommands {
  /** The refusal a non-loopback client gets in protected mode (Redis's text). */
  static final String DENIED =
      "-DENIED kv4j-server is running in protected mode because protected mode is enabled and no"
          + " password is set for the default user. In this mode connections are only accepted"
          + " from the loopback interface. If you want to connect from external computers to"
          + " kv4j-server you may adopt one of the following solutions: 1) Set up an authentication"
          + " password for the default user with --requirepass (and use TLS with --tls-cert-file"
          + " and --tls-key-file). 2) If you started the server manually just for testing, restart"
          + " it with the '--protected-mode no' option, however MAKE SURE kv4j-server is not"
          + " publicly accessible from internet if you do so. NOTE: You only need to do one of the"
          + " above things in order for the server to start accepting connections from the"
          + " outside.\r\n";

  private final Dataset data;
  private final ServerOptions options;
  final AuthFailures authFailures = new AuthFailures();

  ConnectionCommands(Dataset data, ServerOptions options) {
    this.data = data;
    this.options = options;
  }

  boolean defaultUserNeedsPassword() {
    return options.requirePassHash() != null;
  }

  void ping(Session s, Request r, ByteBuf out) {
    if (r.count() > 2) {
      throw new CommandException("ERR wrong number of arguments for 'ping' command");
    }
    if (r.count() == 2) {
      r.writeBulk(1, out);
    } else {
      out.writeBytes(Reply.PONG);
    }
  }

  void select(Session s, Request r, ByteBuf out) {
    long db;
    try {
      db = r.longValue(1);
    } catch (CommandException e) {
      throw new CommandException("ERR value is not an integer or out of range");
    }
    if (db != 0 && !data.keyspaces) {
      throw new CommandException(
          "ERR DB index is out of range (kv4j-server has one database: engine '"
              + data.info.engine()
              + "' does not support KEYSPACES)");
    }
    if (db < 0 || db >= Dataset.DATABASES) {
      throw new CommandException(
          "ERR DB index is out of range (kv4j-server has databases 0 to "
              + (Dataset.DATABASES - 1)
              + ")");
    }
    if (db != 0) {
      data.database((int) db); // opens (creates) the keyspace now, so errors show here
    }
    s.db = (int) db;
    Reply.ok(out);
  }

  void hello(Session s, Request r, ByteBuf out) {
    int proto = s.resp3 ? 3 : 2;
    int i = 1;
    if (r.count() > 1) {
      long v;
      try {
        v = r.longValue(1);
      } catch (CommandException e) {
        throw new CommandException("ERR Protocol version is not an integer or out of range");
      }
      if (v != 2 && v != 3) {
        throw new CommandException("NOPROTO unsupported protocol version");
      }
      proto = (int) v;
      i = 2;
    }
    String name = null;
    boolean authenticated = s.authenticated;
    ServerOptions.User user = s.user;
    for (; i < r.count(); i++) {
      if (r.is(i, "AUTH") && i + 2 < r.count()) {
        ServerOptions.User u = login(s, r.string(i + 1), r.bytes(i + 2));
        authenticated = true;
        user = u;
        i += 2;
      } else if (r.is(i, "SETNAME") && i + 1 < r.count()) {
        name = r.string(++i);
      } else {
        throw new CommandException("ERR Syntax error in HELLO option '" + r.string(i) + "'");
      }
    }
    if (!authenticated) {
      throw new CommandException(
          "NOAUTH HELLO must be called with the client already authenticated, otherwise the"
              + " HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client"
              + " and select the RESP protocol version at the same time");
    }
    s.authenticated = true;
    s.user = user;
    if (name != null) {
      s.name = name.isEmpty() ? null : name;
    }
    s.resp3 = proto == 3;
    helloReply(s, proto, out);
  }

  private static void helloReply(Session s, int proto, ByteBuf out) {
    Reply.mapHeader(out, 7, s.resp3);
    Reply.bulk(out, "server");
    Reply.bulk(out, "redis");
    Reply.bulk(out, "version");
    Reply.bulk(out, ServerCommands.REDIS_VERSION);
    Reply.bulk(out, "proto");
    Reply.integer(out, proto);
    Reply.bulk(out, "id");
    Reply.integer(out, s.id);
    Reply.bulk(out, "mode");
    Reply.bulk(out, "standalone");
    Reply.bulk(out, "role");
    Reply.bulk(out, "master");
    Reply.bulk(out, "modules");
    Reply.arrayHeader(out, 0);
  }

  /**
   * Checks a user name and password; returns the named user, or null for the default user. The
   * default user without --requirepass is Redis's "nopass" user: any password is accepted.
   */
  private ServerOptions.User login(Session s, String name, byte[] password) {
    if (name.equals("default")) {
      byte[] hash = options.requirePassHash();
      if (hash == null
          || new ServerOptions.User("default", hash, false).passwordMatches(password)) {
        return null;
      }
    } else {
      for (ServerOptions.User u : options.users()) {
        if (u.name().equals(name) && u.passwordMatches(password)) {
          return u;
        }
      }
    }
    authFailures.failed(name, s.remote);
    throw new CommandException("WRONGPASS invalid username-password pair or user is disabled.");
  }

  void auth(Session s, Request r, ByteBuf out) {
    if (r.count() > 3) {
      throw CommandException.syntax();
    }
    if (r.count() == 2) {
      if (!defaultUserNeedsPassword()) {
        throw new CommandException(
            "ERR AUTH <password> called without any password configured for the default user."
                + " Are you sure your configuration is correct?");
      }
      s.user = login(s, "default", r.bytes(1));
    } else {
      s.user = login(s, r.string(1), r.bytes(2));
    }
    s.authenticated = true;
    Reply.ok(out);
  }

  void acl(Session s, Request r, ByteBuf out) {
    if (r.is(1, "WHOAMI") && r.count() == 2) {
      Reply.bulk(out, s.user == null ? "default" : s.user.name());
    } else if (r.is(1, "USERS") && r.count() == 2) {
      Reply.arrayHeader(out, 1 + options.users().size());
      Reply.bulk(out, "default");
      for (ServerOptions.User u : options.users()) {
        Reply.bulk(out, u.name());
      }
    } else {
      throw new CommandException(
          "ERR unknown subcommand '"
              + r.string(1)
              + "'. kv4j-server supports ACL WHOAMI and ACL USERS; users come from --user.");
    }
  }

  void client(Session s, Request r, ByteBuf out) {
    if (r.is(1, "SETNAME") && r.count() == 3) {
      String name = r.string(2);
      for (int i = 0; i < name.length(); i++) {
        char c = name.charAt(i);
        if (c < '!' || c > '~') {
          throw new CommandException(
              "ERR Client names cannot contain spaces, newlines or special characters.");
        }
      }
      s.name = name.isEmpty() ? null : name;
      Reply.ok(out);
    } else if (r.is(1, "GETNAME") && r.count() == 2) {
      if (s.name == null) {
        Reply.nil(out, s.resp3);
      } else {
        Reply.bulk(out, s.name);
      }
    } else if (r.is(1, "ID") && r.count() == 2) {
      Reply.integer(out, s.id);
    } else if (r.is(1, "SETINFO") && r.count() == 4) {
      String value = r.string(3);
      for (int i = 0; i < value.length(); i++) {
        char c = value.charAt(i);
        if (c < '!' || c > '~') {
          // Redis's rule: the value is printed in CLIENT LIST and INFO lines; no CR/LF there.
          throw new CommandException(
              "ERR " + r.string(2) + " cannot contain spaces, newlines or special characters.");
        }
      }
      if (r.is(2, "LIB-NAME")) {
        s.libName = value;
      } else if (r.is(2, "LIB-VER")) {
        s.libVersion = value;
      } else {
        throw new CommandException("ERR Unrecognized option '" + r.string(2) + "'");
      }
      Reply.ok(out);
    } else if ((r.is(1, "INFO") && r.count() == 2) || (r.is(1, "LIST") && r.count() == 2)) {
      Reply.bulk(out, clientLine(s) + "\n");
    } else if (r.is(1, "NO-EVICT") || r.is(1, "NO-TOUCH")) {
      Reply.ok(out);
    } else {
      throw new CommandException(
          "ERR unknown subcommand or wrong number of arguments for '"
              + r.string(1)
              + "'. Try CLIENT HELP.");
    }
  }

  private static String clientLine(Session s) {
    long age = (System.currentTimeMillis() - s.createdMillis) / 1000;
    return "id="
        + s.id
        + " addr="
        + s.remote.replace("/", "")
        + " name="
        + (s.name == null ? "" : s.name)
        + " age="
        + age
        + " db="
        + s.db
        + " resp="
        + (s.resp3 ? 3 : 2)
        + " lib-name="
        + (s.libName == null ? "" : s.libName)
        + " lib-ver="
        + (s.libVersion == null ? "" : s.libVersion)
        + " user="
        + (s.user == null ? "default" : s.user.name())
        + " multi="
        + (s.queued == null ? -1 : s.queued.size());
  }

  void reset(Session s, Request r, ByteBuf out) {
    s.endMulti();
    s.db = 0;
    s.resp3 = false;
    s.name = null;
    s.user = null;
    s.authenticated = !defaultUserNeedsPassword();
    Reply.simple(out, "RESET");
  }
}
