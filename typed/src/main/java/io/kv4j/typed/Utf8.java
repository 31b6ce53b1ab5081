package io.kv4j.typed;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * Strings as strict UTF-8, keys and values. Strict both ways: an unpaired surrogate would encode as
 * '?' and malformed bytes would decode as U+FFFD, and either breaks the round trip.
 */
final class Utf8 implements KeyCodec<String>, ValueCodec<String> {
  static final Utf8 INSTANCE = new Utf8();

  private Utf8() {}

  @Override
  public byte[] encode(String s) {
    Objects.requireNonNull(s, "string");
    try {
      ByteBuffer b =
          StandardCharsets.UTF_8
              .newEncoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .encode(CharBuffer.wrap(s));
      return Arrays.copyOfRange(b.array(), b.arrayOffset(), b.arrayOffset() + b.limit());
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(
          "string is not valid Unicode (an unpaired surrogate): " + e.getMessage(), e);
    }
  }

  @Override
  public String decode(byte[] bytes) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException("not valid UTF-8: " + e.getMessage(), e);
    }
  }

  @Override
  public String toString() {
    return "utf8";
  }
}
