package com.example.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kv4j on the module path: every kv4j jar has a stable module name (the package its code lives in:
 * {@code io.kv4j} from api's module-info, {@code Automatic-Module-Name} in the others), and a
 * consumer module that {@code requires io.kv4j} opens an engine found by the service loader.
 */
class ModulePathTest {
  @TempDir Path dir;

  private static List<Path> kv4jJars() {
    List<Path> jars = new ArrayList<>();
    for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path p = Path.of(e);
      if (p.getFileName().toString().startsWith("kv4j-")) {
        jars.add(p);
      }
    }
    return jars;
  }

  private static Path jar(String artifact) {
    for (Path p : kv4jJars()) {
      if (p.getFileName().toString().startsWith(artifact + "-")) {
        Assumptions.assumeTrue(
            p.toString().endsWith(".jar"),
            "built without packaging (" + p + "): run mvn verify, not test, for this check");
        return p;
      }
    }
    throw new AssertionError(artifact + " is not on the test classpath");
  }

  @Test
  void everyKv4jJar_namesItsModuleAfterItsPackage() throws IOException {
    List<Path> jars = kv4jJars();
    assertFalse(jars.isEmpty(), "no kv4j jar on the classpath");
    for (Path p : jars) {
      Assumptions.assumeTrue(p.toString().endsWith(".jar"), "not packaged: " + p);
      try (JarFile j = new JarFile(p.toFile())) {
        String name =
            j.getEntry("module-info.class") != null
                ? "io.kv4j"
                : j.getManifest().getMainAttributes().getValue("Automatic-Module-Name");
        assertTrue(
            name != null && name.matches("io\\.kv4j(\\.[a-z]+)*"),
            p + " has no valid module name: " + name);
        String dirOfPackage = name.replace('.', '/') + "/";
        assertTrue(
            j.stream()
                .anyMatch(
                    e -> e.getName().startsWith(dirOfPackage) && e.getName().endsWith(".class")),
            p + ": module name " + name + " is not a package of the jar");
      }
    }
  }

  @Test
  void consumerModule_onTheModulePath_opensHashlog() throws Exception {
    Path api = jar("kv4j-api");
    Path hashlog = jar("kv4j-engine-hashlog");
    Path src = Files.createDirectories(dir.resolve("src/consumer"));
    Files.writeString(
        dir.resolve("src/module-info.java"), "module consumer { requires io.kv4j; }\n");
    Files.writeString(
        src.resolve("Main.java"),
        String.join(
            "\n",
            "package consumer;",
            "public class Main {",
            "  public static void main(String[] a) {",
            "    try (io.kv4j.Store s = io.kv4j.Stores.open(a[0])) {",
            "      s.put(new byte[] {1}, \"on the module path\".getBytes());",
            "      System.out.println(new String(s.get(new byte[] {1})) + \" \" + s.info().engine());",
            "    }",
            "  }",
            "}",
            ""));
    Path out = dir.resolve("out");
    int rc =
        ToolProvider.getSystemJavaCompiler()
            .run(
                null,
                null,
                null,
                "--module-path",
                api.toString(),
                "-d",
                out.toString(),
                dir.resolve("src/module-info.java").toString(),
                src.resolve("Main.java").toString());
    assertEquals(0, rc, "javac of the consumer module");
    String javaCmd = ProcessHandle.current().info().command().orElse("java");
    ChildRun r =
        ChildRun.run(
            List.of(
                javaCmd,
                "--module-path",
                String.join(File.pathSeparator, out.toString(), api.toString(), hashlog.toString()),
                "--add-modules",
                "io.kv4j.hashlog", // by its Automatic-Module-Name, not a name derived from the file
                "-m",
                "consumer/consumer.Main",
                "hashlog:" + dir.resolve("data")),
            dir,
            Duration.ofSeconds(120));
    assertEquals(0, r.exit(), "exit code: " + r);
    assertEquals("on the module path hashlog", r.stdout().strip(), r.toString());
    assertEquals("", r.stderr(), r.toString());
  }
}
