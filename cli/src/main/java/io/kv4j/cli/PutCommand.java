package io.kv4j.cli;

import io.kv4j.Store;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** Stores one value. */
@Command(
    name = "put",
    mixinStandardHelpOptions = true,
    description = {
      "Store a value under a key, creating the store if missing.",
      "The value is the VALUE argument, the bytes of --value-file, or standard input.",
      "From standard input one trailing newline (\\n or \\r\\n) is dropped, as `echo v |` adds it;",
      "for the exact bytes of standard input use --value-file /dev/stdin."
    })
final class PutCommand implements Runnable {
  @Mixin Codec codec;

  @Parameters(index = "0", paramLabel = "URI", description = "The store, e.g. hashlog:/data/app.")
  String uri;

  @Parameters(index = "1", paramLabel = "KEY", description = "The key.")
  String key;

  @Parameters(
      index = "2",
      arity = "0..1",
      paramLabel = "VALUE",
      description = "The value; omit it to read --value-file or standard input.")
  String value;

  @Option(
      names = {"-f", "--value-file"},
      paramLabel = "FILE",
      description = "Read the value's exact bytes from FILE (/dev/stdin: standard input, as is).")
  Path valueFile;

  @Override
  public void run() {
    byte[] k = codec.decode("key", key);
    byte[] v;
    if (value != null && valueFile != null) {
      throw new CliException(ExitCode.USAGE, "give the value or --value-file, not both");
    }
    try {
      if (value != null) {
        v = codec.decode("value", value);
      } else if (valueFile != null) {
        v = Files.readAllBytes(valueFile);
      } else {
        v = dropOneNewline(readStdin());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the value: " + e.getMessage(), e);
    }
    try (Store store = Uris.open(uri, Uris.Mode.CREATE)) {
      store.put(k, v);
    }
  }

  /**
   * Standard input as {@code echo v |} or a heredoc gives it ends in a newline the user did not
   * mean as part of the value; one is dropped ({@code \n}, or {@code \r\n}), never more, so a value
   * that ends in a blank line keeps it.
   */
  static byte[] dropOneNewline(byte[] in) {
    int n = in.length;
    if (n > 0 && in[n - 1] == '\n') {
      n--;
      if (n > 0 && in[n - 1] == '\r') {
        n--;
      }
    }
    return n == in.length ? in : Arrays.copyOf(in, n);
  }

  @SuppressWarnings("resource") // standard input stays open
  private static byte[] readStdin() throws IOException {
    InputStream in = System.in;
    return in.readAllBytes();
  }
}
