package io.kv4j.cli;

import io.kv4j.Feature;
import io.kv4j.Stores;
import io.kv4j.spi.OptionSpec;
import io.kv4j.spi.StoreProvider;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** Lists the engines on the classpath. */
@Command(
    name = "engines",
    mixinStandardHelpOptions = true,
    description = "List the engines on the classpath with their features, limits and options.")
final class EnginesCommand implements Runnable {
  @Spec CommandSpec spec;

  @Override
  public void run() {
    PrintWriter out = spec.commandLine().getOut();
    List<StoreProvider> providers = Stores.providers();
    for (StoreProvider p : providers) {
      String aliases =
          p.aliases().isEmpty()
              ? ""
              : " (aliases: " + String.join(", ", new TreeSet<>(p.aliases())) + ")";
      out.println(p.id() + aliases + ": " + p.description());
      out.println(
          "  features: "
              + p.features().stream()
                  .map(f -> f.name().toLowerCase(Locale.ROOT).replace('_', '-'))
                  .collect(Collectors.joining(", ")));
      out.println(
          "  limits:   keys 1.."
              + p.limits().maxKeySize()
              + " B, values 0.."
              + Format.bytes(p.limits().maxValueSize())
              + (p.features().contains(Feature.PERSISTENT) ? "" : "; not persistent"));
      if (p.options().isEmpty()) {
        out.println("  options:  none");
      } else {
        out.println("  options:");
        for (OptionSpec<?> o : p.options()) {
          out.println(
              "    "
                  + o.name()
                  + " ("
                  + o.type()
                  + ", default "
                  + defaultText(o)
                  + "): "
                  + o.description());
        }
      }
      out.println();
    }
    out.println(
        providers.size()
            + " engine(s). Common URI settings for every engine: durability=sync|buffered,"
            + " create-if-missing=true|false, read-only=true|false.");
  }

  private static String defaultText(OptionSpec<?> o) {
    Object d = o.defaultValue();
    if ("size".equals(o.type()) && d instanceof Number n) {
      return Format.bytes(n.doubleValue()) + " (" + n + " bytes)";
    }
    if (d == null || "".equals(d)) {
      return "''";
    }
    String unit = o.unit() == null || o.unit().isEmpty() ? "" : " " + o.unit();
    return d + unit;
  }
}
