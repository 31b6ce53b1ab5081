package io.kv4j.server;

/** An error reply for the client; the message starts with the error code, e.g. "ERR ...". */
final class CommandException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  CommandException(String message) {
    super(message, null, false, false);
  }

  /** Redis's reply to options it does not understand. */
  static CommandException syntax() {
    return new CommandException("ERR syntax error");
  }
}
