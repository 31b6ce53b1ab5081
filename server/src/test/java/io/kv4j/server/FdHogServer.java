package io.kv4j.server;

import static io.kv4j.server.ServerOptions.Setting.PORT;
import static io.kv4j.server.ServerOptions.Setting.THREADS;

import io.kv4j.Stores;
import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A child process for {@link FdExhaustionTest}: serves a memory store on a free port and, on
 * command from standard input, uses up every free file descriptor of the process ("hog") or gives
 * them back ("release"). Prints "PORT n", "HOGGED n", "RELEASED" on standard output.
 */
final class FdHogServer {
  private FdHogServer() {}

  public static void main(String[] args) throws Exception {
    boolean nio = args.length > 0 && args[0].equals("nio");
    RespServer server =
        RespServer.start(
            Stores.open("memory:"),
            ServerOptions.defaults().with(PORT, 0).with(THREADS, 1).withNativeTransport(!nio));
    System.out.println("PORT " + server.port() + " " + server.transport);
    System.out.flush();
    List<FileInputStream> hog = new ArrayList<>();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.equals("hog")) {
        try {
          while (true) {
            hog.add(new FileInputStream("/dev/null"));
          }
        } catch (IOException e) {
          // EMFILE: every descriptor is taken now.
        }
        System.out.println("HOGGED " + hog.size());
      } else if (line.equals("release")) {
        for (FileInputStream f : hog) {
          f.close();
        }
        hog.clear();
        System.out.println("RELEASED");
      }
      System.out.flush();
    }
    server.close();
  }
}
