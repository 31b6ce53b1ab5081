package io.kv4j.cli;

import io.kv4j.Cursor;
import io.kv4j.Entry;
import io.kv4j.KeyRange;
import io.kv4j.Store;
import java.io.PrintWriter;
import java.util.Arrays;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Prints a range of entries. */
@Command(
    name = "scan",
    mixinStandardHelpOptions = true,
    description = {
      "Print entries in key order, one per line: KEY<TAB>VALUE.",
      "Keys and values print as UTF-8 text when printable, else as 0x-prefixed hex."
    })
final class ScanCommand implements Runnable {
  @Spec CommandSpec spec;

  @Mixin Codec codec;

  @Parameters(index = "0", paramLabel = "URI", description = "The store, e.g. hashlog:/data/app.")
  String uri;

  @Option(names = "--prefix", paramLabel = "P", description = "Only keys starting with P.")
  String prefix;

  @Option(names = "--from", paramLabel = "K", description = "Keys >= K.")
  String from;

  @Option(names = "--after", paramLabel = "K", description = "Keys > K.")
  String after;

  @Option(names = "--to", paramLabel = "K", description = "Keys < K.")
  String to;

  @Option(names = "--through", paramLabel = "K", description = "Keys <= K.")
  String through;

  @Option(
      names = {"-r", "--reverse"},
      description = "Descending key order.")
  boolean reverse;

  @Option(
      names = {"-n", "--limit"},
      paramLabel = "N",
      description = "At most N entries (with --reverse: the N highest).")
  Long limit;

  @Option(names = "--keys-only", description = "Print keys only.")
  boolean keysOnly;

  @Option(names = "--count", description = "Print only the number of entries in range.")
  boolean count;

  @Override
  public void run() {
    codec.check();
    KeyRange range = range();
    PrintWriter out = spec.commandLine().getOut();
    long n = 0;
    try (Store store = Uris.open(uri, Uris.Mode.READ);
        Cursor c = store.scan(range)) {
      while (c.hasNext()) {
        Entry e = c.next();
        n++;
        if (count) {
          continue;
        }
        if (keysOnly) {
          out.println(codec.format(e.key()));
        } else {
          out.println(codec.format(e.key()) + "\t" + codec.format(e.value()));
        }
      }
    }
    if (count) {
      out.println(n);
    }
    out.flush();
  }

  KeyRange range() {
    if (from != null && after != null) {
      throw new CliException(ExitCode.USAGE, "give --from or --after, not both");
    }
    if (to != null && through != null) {
      throw new CliException(ExitCode.USAGE, "give --to or --through, not both");
    }
    KeyRange r = prefix == null ? KeyRange.all() : KeyRange.prefix(codec.decode("prefix", prefix));
    if (from != null) {
      r = tighterLower(r, codec.decode("--from", from), true);
    }
    if (after != null) {
      r = tighterLower(r, codec.decode("--after", after), false);
    }
    if (to != null) {
      r = tighterUpper(r, codec.decode("--to", to), false);
    }
    if (through != null) {
      r = tighterUpper(r, codec.decode("--through", through), true);
    }
    if (reverse) {
      r = r.reverse();
    }
    if (limit != null) {
      if (limit < 0) {
        throw new CliException(ExitCode.USAGE, "--limit must be >= 0, got " + limit);
      }
      r = r.limit(limit);
    }
    return r;
  }

  private static KeyRange tighterLower(KeyRange r, byte[] k, boolean inclusive) {
    byte[] cur = r.lower();
    if (cur != null) {
      int c = Arrays.compareUnsigned(k, cur);
      if (c < 0 || (c == 0 && !r.lowerInclusive())) {
        return r;
      }
    }
    return inclusive ? r.gte(k) : r.gt(k);
  }

  private static KeyRange tighterUpper(KeyRange r, byte[] k, boolean inclusive) {
    byte[] cur = r.upper();
    if (cur != null) {
      int c = Arrays.compareUnsigned(k, cur);
      if (c > 0 || (c == 0 && !r.upperInclusive())) {
        return r;
      }
    }
    return inclusive ? r.lte(k) : r.lt(k);
  }
}
