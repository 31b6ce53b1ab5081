package io.kv4j.cli;

import io.kv4j.StoreCorruptedException;
import io.kv4j.StoreException;
import io.kv4j.StoreLockedException;
import io.kv4j.spi.StoreDirectory;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code kv4j} command: {@code java -jar kv4j.jar <command> [options]}. Run {@code kv4j --help}
 * for the commands and the exit codes.
 */
@Command(
    name = "kv4j",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Inspect, verify, compact and copy kv4j stores; run the kv4j TCK and benchmarks.",
    synopsisSubcommandLabel = "COMMAND",
    footer = {
      "%nA store is given as a URI: engine:path?option=value&...,"
          + " e.g. hashlog:/data/app?durability=buffered. 'kv4j engines' lists engines and options.",
      ExitCode.HELP
    },
    subcommands = {
      EnginesCommand.class,
      GetCommand.class,
      PutCommand.class,
      DeleteCommand.class,
      ScanCommand.class,
      StatsCommand.class,
      CompactCommand.class,
      VerifyCommand.class,
      CopyCommand.class,
      SalvageCommand.class,
      BackupCommand.class,
      BenchCommand.class,
      TckCommand.class
    })
public final class Main implements Runnable {
  @Spec CommandSpec spec;

  Main() {}

  /**
   * Runs {@code kv4j} and exits with its exit code.
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
    PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
    int code = run(out, err, args);
    out.flush();
    err.flush();
    System.exit(code);
  }

  /**
   * Runs {@code kv4j} without exiting.
   *
   * @param out standard output
   * @param err standard error: messages, progress
   * @param args the command line
   * @return the exit code
   */
  public static int run(PrintWriter out, PrintWriter err, String... args) {
    CommandLine cl = commandLine();
    cl.setOut(out);
    cl.setErr(err);
    return cl.execute(args);
  }

  static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new Main());
    cl.setParameterExceptionHandler(Main::usageError);
    cl.setExecutionExceptionHandler((e, c, parsed) -> failure(e, c));
    cl.setExitCodeExceptionMapper(e -> ExitCode.INTERNAL);
    return cl;
  }

  @Override
  public void run() {
    throw new ParameterException(spec.commandLine(), "missing command");
  }

  private static int usageError(ParameterException e, String[] args) {
    CommandLine c = e.getCommandLine();
    c.getErr()
        .println(
            "kv4j: error: "
                + e.getMessage()
                + " (see '"
                + c.getCommandSpec().qualifiedName()
                + " --help')");
    return ExitCode.USAGE;
  }

  /** Turns an exception into one line on stderr and an exit code. */
  static int failure(Exception e, CommandLine c) {
    PrintWriter err = c.getErr();
    int code;
    String msg;
    if (e instanceof CliException x) {
      code = x.exitCode();
      msg = x.getMessage();
    } else if (e instanceof StoreLockedException x) {
      code = ExitCode.LOCKED;
      msg = mention(x.getMessage(), x.directory() == null ? null : x.directory().toString());
      msg = "store is locked: " + msg;
    } else if (e instanceof StoreCorruptedException x
        && StoreDirectory.foreignEngine(x).isPresent()) {
      code = ExitCode.WRONG_ENGINE;
      msg = "another engine's store: " + x.getMessage();
    } else if (e instanceof StoreCorruptedException x) {
      code = ExitCode.CORRUPT;
      msg = "corrupt data: " + x.getMessage() + location(x);
    } else if (e instanceof StoreException || e instanceof java.io.UncheckedIOException) {
      code = ExitCode.IO;
      msg = e.getMessage();
    } else if (e instanceof IllegalArgumentException
        || e instanceof UnsupportedOperationException
        || e instanceof IllegalStateException) {
      code = ExitCode.USAGE;
      msg = e.getMessage();
    } else {
      code = ExitCode.INTERNAL;
      msg = "internal error: " + e;
    }
    err.println("kv4j: error: " + oneLine(msg));
    if (System.getenv("KV4J_DEBUG") != null) {
      e.printStackTrace(err);
    }
    err.flush();
    return code;
  }

  static String location(StoreCorruptedException x) {
    if (x.file() == null) {
      return "";
    }
    String where = " [file " + x.file() + (x.offset() >= 0 ? ", offset " + x.offset() : "") + "]";
    return where;
  }

  private static String mention(String msg, String dir) {
    if (dir == null || (msg != null && msg.contains(dir))) {
      return msg;
    }
    return msg + " (directory " + dir + ")";
  }

  static String oneLine(String msg) {
    if (msg == null) {
      return "(no message)";
    }
    return msg.replace("\r", "").replace('\n', ' ').trim();
  }

  /** The version from the jar manifest. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Main.class.getPackage().getImplementationVersion();
      return new String[] {
        "kv4j " + (v == null ? "(development build)" : v),
        "Java " + System.getProperty("java.version") + " " + System.getProperty("java.vm.name")
      };
    }
  }
}
