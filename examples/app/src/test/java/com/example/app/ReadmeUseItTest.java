package com.example.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kv4j.Stores;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * README.md's "Use it" section — a {@code pom.xml} and a {@code Main.java}, each between {@code
 * <!-- use-it:begin PATH -->} and {@code <!-- use-it:end -->} — is written, unmodified, into an
 * empty directory and built and run with the Maven on the PATH, as a new user would, with the
 * README's run line ({@code mvn -q compile exec:java -Dexec.args=URI}).
 *
 * <p>It must not depend on {@code mvn install} having run: kv4j's own artifacts come from this
 * build (the jars or classes on this test's class path, the poms of the checkout), written into a
 * fresh local repository of the child Maven; everything else (plugins, their dependencies) comes
 * from this build's local repository, read as a {@code file:} repository. The child runs offline
 * first; only when that fails for an artifact this build never downloaded (a clean CI machine has
 * no reason to hold Maven 3.8's default resources plugin or the exec plugin) does it run again
 * online, and the failure message then shows both runs.
 */
class ReadmeUseItTest {
  private static final Path CHECKOUT = Path.of("../..");
  private static final Path README = CHECKOUT.resolve("README.md");
  private static final Pattern BLOCK =
      Pattern.compile(
          "<!-- use-it:begin (\\S+) -->\\n```[a-z]*\\n(.*?)```\\n<!-- use-it:end -->",
          Pattern.DOTALL);

  @TempDir Path dir;

  /** The child Mavens' local repository, shared by the tests so that it is filled once. */
  @TempDir static Path shared;

  /** The files of the README's project, by path, as the README shows them. */
  static Map<String, String> project() throws IOException {
    Map<String, String> files = new LinkedHashMap<>();
    Matcher m = BLOCK.matcher(Files.readString(README, StandardCharsets.UTF_8));
    while (m.find()) {
      assertEquals(null, files.put(m.group(1), m.group(2)), m.group(1) + " shown twice");
    }
    return files;
  }

  @Test
  void readme_showsAPomAndThisExamplesMainVerbatim() throws IOException {
    assumeCheckout();
    Map<String, String> files = project();
    assertEquals(
        List.of("pom.xml", "src/main/java/com/example/app/Main.java"),
        List.copyOf(files.keySet()),
        "README.md's 'Use it' files");
    assertEquals(
        Files.readString(
            Path.of("src/main/java/com/example/app/Main.java"), StandardCharsets.UTF_8),
        files.get("src/main/java/com/example/app/Main.java"),
        "README.md's 'Use it' Main.java must be examples/app's Main.java, whole");
  }

  @Test
  void readmeProject_buildsAndRunsWithMavenOnThePath_unmodified() throws Exception {
    Path data = dir.resolve("data");
    ChildRun r =
        maven(
            project(),
            // The README's run line, word for word after the options maven() adds.
            "-q",
            "compile",
            "exec:java",
            "-Dexec.args=hashlog:" + data);
    assertTrue(
        r.stdout().contains("user:1 = Ada\nuser:2\nuser:3\nreverse: user:3\nreverse: user:2\n"),
        "the program's output: " + r);
    assertTrue(Files.isDirectory(data), "the store at " + data);
  }

  /**
   * The README's pom with the lmdb engine added, as its comment invites: {@code exec:java} ends
   * without waiting for jnr-ffi's finalizer thread (which ignores interrupts), because the pom sets
   * {@code cleanupDaemonThreads} to false. Without it exec:java warns that the thread "will linger"
   * after waiting 15 s for it.
   */
  @Test
  void readmePom_withLmdbAdded_execJavaDoesNotWaitForJnrFfisThread() throws Exception {
    Map<String, String> files = new LinkedHashMap<>(project());
    String hashlog =
        "<dependency><groupId>io.kv4j</groupId><artifactId>kv4j-engine-hashlog</artifactId>"
            + "</dependency>";
    String pom = files.get("pom.xml");
    assertTrue(pom.contains(hashlog), "the README's pom adds hashlog as: " + hashlog);
    files.put(
        "pom.xml",
        pom.replace(
            hashlog, hashlog + "\n    " + hashlog.replace("engine-hashlog", "engine-btree")));
    Path data = dir.resolve("lmdb-data");
    ChildRun r = maven(files, "compile", "exec:java", "-Dexec.args=lmdb:" + data);
    assertTrue(r.stdout().contains("user:1 = Ada\n"), "the program's output: " + r);
    assertFalse(
        r.stdout().contains("will linger") || r.stdout().contains("was interrupted but is still"),
        "exec:java waited for a thread of the program (cleanupDaemonThreads): " + r.stdout());
  }

  /**
   * Writes {@code files} into a fresh project directory and runs the Maven on the PATH there with
   * {@code args}, against this build's kv4j artifacts; fails with Maven's whole output unless it
   * exits 0.
   */
  private ChildRun maven(Map<String, String> files, String... args) throws Exception {
    assumeCheckout();
    String mvn = onPath("mvn");
    Assumptions.assumeTrue(mvn != null, "no mvn on the PATH to build the README's project with");
    Path project = Files.createTempDirectory(dir, "my-app-");
    for (Map.Entry<String, String> e : files.entrySet()) {
      Path p = project.resolve(e.getKey());
      Files.createDirectories(p.getParent());
      Files.writeString(p, e.getValue(), StandardCharsets.UTF_8);
    }
    Path repo = shared.resolve("repo");
    Path settings = shared.resolve("settings.xml");
    if (!Files.isDirectory(repo)) {
      installThisBuild(repo);
      Files.writeString(settings, settings(buildRepository()), StandardCharsets.UTF_8);
    }
    List<String> command =
        new ArrayList<>(
            List.of(mvn, "-B", "-s", settings.toString(), "-Dmaven.repo.local=" + repo));
    command.addAll(List.of(args));
    List<String> offline = new ArrayList<>(command);
    offline.addAll(1, List.of("-o", "-Daether.offline.protocols=file"));
    ChildRun r = ChildRun.run(offline, dir, project, Duration.ofSeconds(300));
    String before = "";
    if (r.exit() != 0 && r.stdout().contains("in offline mode")) {
      before = "offline run first: " + r + "\n--- then online:\n";
      r = ChildRun.run(command, dir, project, Duration.ofSeconds(300));
    }
    assertEquals(
        0,
        r.exit(),
        "Maven on the README's project in "
            + project
            + ": "
            + before
            + r
            + "\n--- its whole output:\n"
            + r.stdout());
    return r;
  }

  private static void assumeCheckout() {
    Assumptions.assumeTrue(
        Files.exists(README), "copied out of the kv4j checkout: no README.md to build from");
  }

  private static String onPath(String program) {
    for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path p = Path.of(d, program);
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    return null;
  }

  /** This build's local repository: where its JUnit came from. */
  private static Path buildRepository() {
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      int i = e.replace(File.separatorChar, '/').indexOf("/org/junit/jupiter/junit-jupiter-api/");
      if (i > 0) {
        return Path.of(e.substring(0, i));
      }
    }
    throw new AssertionError(
        "no junit-jupiter-api jar on the class path to find the local repository by: "
            + System.getProperty("java.class.path"));
  }

  /**
   * Settings that read this build's local repository as a remote one (releases only, so that an old
   * installed kv4j snapshot there can never stand in for this build's).
   */
  private static String settings(Path buildRepository) {
    String url = buildRepository.toUri().toString();
    String repo =
        "<id>this-build</id><url>"
            + url
            + "</url><releases><checksumPolicy>ignore</checksumPolicy></releases>"
            + "<snapshots><enabled>false</enabled></snapshots>";
    return "<settings><profiles><profile><id>this-build</id>"
        + "<repositories><repository>"
        + repo
        + "</repository></repositories>"
        + "<pluginRepositories><pluginRepository>"
        + repo
        + "</pluginRepository></pluginRepositories>"
        + "</profile></profiles>"
        + "<activeProfiles><activeProfile>this-build</activeProfile></activeProfiles></settings>\n";
  }

  /**
   * Writes kv4j's artifacts that the README's pom needs into {@code repo} as a {@code mvn install}
   * would (an installed artifact has no {@code _remote.repositories}): the parent and BOM poms, and
   * the API and hashlog jars, from this build.
   */
  private static void installThisBuild(Path repo) throws IOException, URISyntaxException {
    String version = version();
    install(repo, "kv4j-parent", version, CHECKOUT.resolve("pom.xml"), null);
    install(repo, "kv4j-bom", version, CHECKOUT.resolve("bom/pom.xml"), null);
    install(
        repo,
        "kv4j-api",
        version,
        CHECKOUT.resolve("api/pom.xml"),
        Path.of(Stores.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
    for (String[] engine :
        new String[][] {{"hashlog", "engine-hashlog"}, {"lmdb", "engine-btree"}}) {
      Class<?> provider = Stores.provider(engine[0]).getClass();
      install(
          repo,
          "kv4j-" + engine[1],
          version,
          CHECKOUT.resolve(engine[1]).resolve("pom.xml"),
          Path.of(provider.getProtectionDomain().getCodeSource().getLocation().toURI()));
    }
  }

  private static String version() throws IOException {
    Matcher m =
        Pattern.compile("<artifactId>kv4j-parent</artifactId>\\s*<version>([^<]+)</version>")
            .matcher(Files.readString(CHECKOUT.resolve("pom.xml"), StandardCharsets.UTF_8));
    assertTrue(m.find(), "kv4j-parent's version in the root pom.xml");
    return m.group(1);
  }

  private static void install(Path repo, String artifact, String version, Path pom, Path classes)
      throws IOException {
    Path d = repo.resolve("io/kv4j").resolve(artifact).resolve(version);
    Files.createDirectories(d);
    Files.copy(pom, d.resolve(artifact + "-" + version + ".pom"));
    if (classes == null) {
      return;
    }
    Path jar = d.resolve(artifact + "-" + version + ".jar");
    if (Files.isDirectory(classes)) { // target/classes: `mvn test` ran without packaging
      jar(classes, jar);
    } else {
      Files.copy(classes, jar, StandardCopyOption.REPLACE_EXISTING);
    }
  }

  private static void jar(Path classes, Path jar) throws IOException {
    try (OutputStream out = Files.newOutputStream(jar);
        JarOutputStream j = new JarOutputStream(out);
        Stream<Path> files = Files.walk(classes)) {
      for (Path p : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        j.putNextEntry(new JarEntry(classes.relativize(p).toString().replace('\\', '/')));
        Files.copy(p, j);
        j.closeEntry();
      }
    }
  }
}
