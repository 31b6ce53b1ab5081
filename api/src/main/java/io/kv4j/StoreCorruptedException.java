package io.kv4j;

import java.nio.file.Path;
import java.util.List;

/**
 * Stored data failed a check (checksum, magic number, structure) or the location holds something
 * that is not this engine's data. Corrupt data is reported, never returned and never silently
 * discarded.
 */
public final class StoreCorruptedException extends StoreException {
  private static final long serialVersionUID = 1L;
  private static final Path UNKNOWN = Path.of("?");

  private final transient Path file;
  private final long offset;
  private final transient List<DamagedRegion> damage;

  /**
   * Creates an exception.
   *
   * @param message what is wrong
   * @param file the damaged file, or null if unknown
   * @param offset the byte offset of the damage in the file, or -1 if unknown
   */
  public StoreCorruptedException(String message, Path file, long offset) {
    super(message);
    this.file = file;
    this.offset = offset;
    this.damage = List.of(DamagedRegion.at(file == null ? UNKNOWN : file, offset, message));
  }

  /**
   * Creates an exception with a cause.
   *
   * @param message what is wrong
   * @param file the damaged file, or null if unknown
   * @param offset the byte offset of the damage, or -1 if unknown
   * @param cause the underlying error
   */
  public StoreCorruptedException(String message, Path file, long offset, Throwable cause) {
    super(message, cause);
    this.file = file;
    this.offset = offset;
    this.damage = List.of(DamagedRegion.at(file == null ? UNKNOWN : file, offset, message));
  }

  /**
   * Creates an exception for every damaged region a check found; {@link #file()} and {@link
   * #offset()} are the first region's.
   *
   * @param message what is wrong, overall
   * @param damage the damaged regions, at least one
   * @throws IllegalArgumentException if {@code damage} is empty
   */
  public StoreCorruptedException(String message, List<DamagedRegion> damage) {
    super(message);
    if (damage.isEmpty()) {
      throw new IllegalArgumentException("a corruption report needs at least one damaged region");
    }
    this.damage = List.copyOf(damage);
    this.file = damage.get(0).file();
    this.offset = damage.get(0).offset();
  }

  /**
   * The damaged file.
   *
   * @return the file, or null if unknown
   */
  public Path file() {
    return file;
  }

  /**
   * Where in {@link #file()} the damage is.
   *
   * @return the byte offset, or -1 if unknown
   */
  public long offset() {
    return offset;
  }

  /**
   * Every damaged region the check found, the first being {@link #file()} at {@link #offset()}.
   * Engines that stop at the first damage report one region; its file is {@code "?"} when unknown.
   *
   * @return the regions, at least one (empty only after deserialization)
   */
  public List<DamagedRegion> damage() {
    return damage == null ? List.of() : damage;
  }
}
