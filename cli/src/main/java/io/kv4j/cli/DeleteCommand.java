package io.kv4j.cli;

import io.kv4j.Store;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/** Removes keys. */
@Command(
    name = "delete",
    mixinStandardHelpOptions = true,
    description = "Remove keys. Removing an absent key is not an error.")
final class DeleteCommand implements Runnable {
  @Mixin Codec codec;

  @Parameters(index = "0", paramLabel = "URI", description = "The store, e.g. hashlog:/data/app.")
  String uri;

  @Parameters(index = "1..*", arity = "1..*", paramLabel = "KEY", description = "The keys.")
  List<String> keys;

  @Override
  public void run() {
    List<byte[]> ks = keys.stream().map(k -> codec.decode("key", k)).toList();
    try (Store store = Uris.open(uri, Uris.Mode.WRITE)) {
      for (byte[] k : ks) {
        store.delete(k);
      }
    }
  }
}
