package io.kv4j.cli;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import picocli.CommandLine.Option;

/**
 * How keys and values are written on the command line and printed: UTF-8 text by default (printed
 * as text when printable, else as {@code 0x}-prefixed hex), or hex or base64 both ways.
 */
final class Codec {
  @Option(
      names = "--hex",
      description = "Keys and values are given and printed as hex (e.g. 6b6579).")
  boolean hex;

  @Option(names = "--base64", description = "Keys and values are given and printed as base64.")
  boolean base64;

  /** Checks that at most one encoding was chosen. */
  void check() {
    if (hex && base64) {
      throw new CliException(ExitCode.USAGE, "choose one of --hex and --base64, not both");
    }
  }

  /** Decodes a key or value given on the command line. */
  byte[] decode(String what, String text) {
    check();
    if (hex) {
      String t = text.startsWith("0x") || text.startsWith("0X") ? text.substring(2) : text;
      try {
        return HexFormat.of().parseHex(t);
      } catch (IllegalArgumentException e) {
        throw new CliException(ExitCode.USAGE, what + " '" + text + "' is not valid hex");
      }
    }
    if (base64) {
      try {
        return Base64.getDecoder().decode(text);
      } catch (IllegalArgumentException e) {
        throw new CliException(ExitCode.USAGE, what + " '" + text + "' is not valid base64");
      }
    }
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** Formats bytes for output. */
  String format(byte[] b) {
    check();
    if (hex) {
      return HexFormat.of().formatHex(b);
    }
    if (base64) {
      return Base64.getEncoder().encodeToString(b);
    }
    String text = printable(b);
    return text != null ? text : "0x" + HexFormat.of().formatHex(b);
  }

  /** The bytes as text if they are valid UTF-8 without control characters, else null. */
  static String printable(byte[] b) {
    String s;
    try {
      s =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(b))
              .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
        return null;
      }
    }
    return s;
  }
}
