package io.kv4j.cli;

import io.kv4j.Store;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Prints one value. */
@Command(
    name = "get",
    mixinStandardHelpOptions = true,
    description = {
      "Print the value of a key. Exit code 2 if the key is absent.",
      "Values print as UTF-8 text when printable, else as 0x-prefixed hex."
    })
final class GetCommand implements Runnable {
  @Spec CommandSpec spec;

  @Mixin Codec codec;

  @Parameters(index = "0", paramLabel = "URI", description = "The store, e.g. hashlog:/data/app.")
  String uri;

  @Parameters(index = "1", paramLabel = "KEY", description = "The key.")
  String key;

  @Option(
      names = {"-o", "--output"},
      paramLabel = "FILE",
      description = "Write the raw value bytes to FILE instead of printing it.")
  Path output;

  @Override
  public void run() {
    byte[] k = codec.decode("key", key);
    byte[] v;
    try (Store store = Uris.open(uri, Uris.Mode.READ)) {
      v = store.get(k);
    }
    if (v == null) {
      throw new CliException(ExitCode.NOT_FOUND, "key not found: " + codec.format(k));
    }
    if (output != null) {
      try {
        Files.write(output, v);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write " + output, e);
      }
    } else {
      spec.commandLine().getOut().println(codec.format(v));
    }
  }
}
