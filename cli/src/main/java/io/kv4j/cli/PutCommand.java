package io.kv4j.cli;

import io.kv4j.Store;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
      "The value is the VALUE argument, the bytes of --value-file, or standard input."
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
      description = "Read the raw value bytes from FILE.")
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
        v = readStdin();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the value: " + e.getMessage(), e);
    }
    try (Store store = Uris.open(uri, Uris.Mode.CREATE)) {
      store.put(k, v);
    }
  }

  @SuppressWarnings("resource") // standard input stays open
  private static byte[] readStdin() throws IOException {
    InputStream in = System.in;
    return in.readAllBytes();
  }
}
