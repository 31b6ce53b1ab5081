package io.kv4j.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPath;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/**
 * tck/README.md's project skeleton — pom, provider, store, services file, test class, each between
 * {@code <!-- tck-skeleton:begin PATH -->} and {@code <!-- tck-skeleton:end -->} — is extracted
 * into an empty directory, its pom checked for what Maven 3.8 gets wrong by default, its sources
 * compiled against this build's classes, and the kit run on the engine in a JVM of its own: a third
 * party following the README gets a green first run.
 */
class ReadmeSkeletonTest {
  private static final Path README = Path.of("README.md");
  private static final Pattern BLOCK =
      Pattern.compile(
          "<!-- tck-skeleton:begin (\\S+) -->\\n```[a-z]*\\n(.*?)```\\n<!-- tck-skeleton:end -->",
          Pattern.DOTALL);

  @TempDir Path project;

  /** The files of the skeleton, by path, as the README shows them. */
  static Map<String, String> skeleton() throws IOException {
    Map<String, String> files = new LinkedHashMap<>();
    Matcher m = BLOCK.matcher(Files.readString(README, StandardCharsets.UTF_8));
    while (m.find()) {
      assertThat(files.put(m.group(1), m.group(2))).as("%s shown once", m.group(1)).isNull();
    }
    return files;
  }

  @Test
  void readme_showsACompleteProject() throws IOException {
    assertThat(skeleton())
        .containsOnlyKeys(
            "pom.xml",
            "src/main/java/com/example/mini/MiniProvider.java",
            "src/main/java/com/example/mini/MiniStore.java",
            "src/main/resources/META-INF/services/io.kv4j.spi.StoreProvider",
            "src/test/java/com/example/mini/MiniTckTest.java");
  }

  @Test
  void readmePom_pinsWhatMaven38GetsWrongAndUsesThisVersion() throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(false);
    Document pom =
        f.newDocumentBuilder()
            .parse(
                new org.xml.sax.InputSource(new java.io.StringReader(skeleton().get("pom.xml"))));
    XPath x = XPathFactory.newInstance().newXPath();
    String plugin = "/project/build/plugins/plugin[artifactId='%s']/";
    assertThat(
            x.evaluate(
                String.format(plugin, "maven-compiler-plugin") + "configuration/release", pom))
        .as("the compiler plugin compiles for Java 17 (Maven 3.8's default rejects it)")
        .isEqualTo("17");
    assertThat(x.evaluate(String.format(plugin, "maven-compiler-plugin") + "version", pom))
        .as("a compiler plugin version that knows <release>")
        .matches("3\\.(1[0-9]|[89])\\..*");
    assertThat(x.evaluate(String.format(plugin, "maven-surefire-plugin") + "version", pom))
        .as("Surefire 3 (Maven 3.8's default 2.12.4 runs no JUnit 5 test)")
        .startsWith("3.");
    Document parent =
        f.newDocumentBuilder().parse(Path.of("..", "pom.xml").toFile()); // the kv4j root pom
    String version = x.evaluate("/project/version", parent);
    assertThat(x.evaluate("/project/properties/*[name()='kv4j.version']", pom))
        .as("the skeleton depends on this build's version")
        .isEqualTo(version);
    assertThat(x.evaluate("/project/dependencies/dependency[artifactId='kv4j-tck']/scope", pom))
        .isEqualTo("test");
    assertThat(x.evaluate("/project/dependencies/dependency[artifactId='kv4j-api']/version", pom))
        .isEqualTo("${kv4j.version}");
  }

  @Test
  void readmeSkeleton_compilesAndPassesTheKit() throws Exception {
    for (Map.Entry<String, String> e : skeleton().entrySet()) {
      Path p = project.resolve(e.getKey());
      Files.createDirectories(p.getParent());
      Files.writeString(p, e.getValue(), StandardCharsets.UTF_8);
    }
    Path classes = project.resolve("target/classes");
    Files.createDirectories(classes);
    List<String> sources = new ArrayList<>();
    try (var walk = Files.walk(project.resolve("src"))) {
      walk.filter(p -> p.toString().endsWith(".java")).forEach(p -> sources.add(p.toString()));
    }
    List<String> args =
        new ArrayList<>(
            List.of(
                "--release",
                "17",
                "-Xlint:all",
                "-d",
                classes.toString(),
                "-classpath",
                System.getProperty("java.class.path")));
    args.addAll(sources);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
    int rc = javac.run(null, diagnostics, diagnostics, args.toArray(String[]::new));
    assertThat(rc)
        .as("javac of the README's sources:%n%s", diagnostics.toString(StandardCharsets.UTF_8))
        .isZero();
    // What the resources phase does: the services file next to the classes.
    Path services = classes.resolve("META-INF/services/io.kv4j.spi.StoreProvider");
    Files.createDirectories(services.getParent());
    Files.copy(
        project.resolve("src/main/resources/META-INF/services/io.kv4j.spi.StoreProvider"),
        services);

    // The kit, in a JVM of its own (as surefire forks one), on the README's engine and test class.
    // Depth knobs are lowered to keep the build short; the by-hand run used the defaults.
    Path reports = project.resolve("target/kv4j-tck");
    try (ChildProcess c =
        ChildProcess.java(SkeletonRun.class, "com.example.mini.MiniTckTest")
            .jvmOptions(
                "-Xmx512m",
                "-Dkv4j.tck.reportDir=" + reports,
                "-Dkv4j.tck.manyKeys=20000",
                "-Dkv4j.tck.stressOps=500",
                "-Dkv4j.tck.ops=1000")
            .classPath(classes + File.pathSeparator + System.getProperty("java.class.path"))
            .directory(project)
            .start()) {
      int exit = c.await(Duration.ofSeconds(600)); // fails with the child's state if it hangs
      // The JUnit summary and failures are on stdout, whole (they may be more than the tail).
      assertThat(exit)
          .as(
              "the kit passes on the README's engine: %s%n--- its whole stdout:%n%s",
              c.describe(), c.stdout())
          .isZero();
      assertThat(c.stdout() + "\n" + c.stderr())
          .as("the run ends by printing where its report is")
          .contains(
              "kv4j TCK report for MiniTckTest (mini): "
                  + reports.resolve("MiniTckTest.md").toAbsolutePath()
                  + " (and MiniTckTest.json)");
    }
    String json = Files.readString(reports.resolve("MiniTckTest.json"), StandardCharsets.UTF_8);
    assertThat(json).contains("\"engine\": \"mini\"", "\"failed\": 0");
    Matcher passed = Pattern.compile("\"passed\": (\\d+)").matcher(json);
    assertThat(passed.find()).isTrue();
    assertThat(Integer.parseInt(passed.group(1)))
        .as("rules passed (the rest skipped: mini is not PERSISTENT)")
        .isGreaterThan(50);
  }
}
