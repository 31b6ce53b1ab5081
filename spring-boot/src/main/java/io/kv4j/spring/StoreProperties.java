package io.kv4j.spring;

import io.kv4j.Durability;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One store's settings, under {@code kv4j.stores.<name>}: the URI, and the settings that may also
 * be given beside it instead of in its query string. A setting given here wins over the same one in
 * the URI.
 *
 * <pre>{@code
 * kv4j:
 *   stores:
 *     orders:
 *       uri: hashlog:/var/lib/app/orders
 *       durability: buffered
 *       options:
 *         segment-size: 256MiB
 * }</pre>
 */
public class StoreProperties {
  private String uri;
  private Durability durability;
  private Boolean readOnly;
  private Boolean createIfMissing;
  private boolean primary;
  private Map<String, String> options = new LinkedHashMap<>();

  /** Creates empty settings, for binding. */
  public StoreProperties() {}

  /**
   * The store's URI, such as {@code hashlog:/var/lib/app/orders?durability=buffered}. Required.
   *
   * @return the URI, or null when not set
   */
  public String getUri() {
    return uri;
  }

  /**
   * Sets the store's URI.
   *
   * @param uri the URI, {@code engine:path?key=value&...}
   */
  public void setUri(String uri) {
    this.uri = uri;
  }

  /**
   * The durability of acknowledged writes, {@code sync} or {@code buffered}.
   *
   * @return the durability, or null to keep the URI's (default sync)
   */
  public Durability getDurability() {
    return durability;
  }

  /**
   * Sets the durability of acknowledged writes.
   *
   * @param durability the durability, or null to keep the URI's
   */
  public void setDurability(Durability durability) {
    this.durability = durability;
  }

  /**
   * Whether the store refuses writes.
   *
   * @return true or false, or null to keep the URI's (default false)
   */
  public Boolean getReadOnly() {
    return readOnly;
  }

  /**
   * Sets whether the store refuses writes.
   *
   * @param readOnly true for read-only, or null to keep the URI's
   */
  public void setReadOnly(Boolean readOnly) {
    this.readOnly = readOnly;
  }

  /**
   * Whether a missing location is created.
   *
   * @return true or false, or null to keep the URI's (default true)
   */
  public Boolean getCreateIfMissing() {
    return createIfMissing;
  }

  /**
   * Sets whether a missing location is created.
   *
   * @param createIfMissing true to create, or null to keep the URI's
   */
  public void setCreateIfMissing(Boolean createIfMissing) {
    this.createIfMissing = createIfMissing;
  }

  /**
   * Whether this store's bean is the primary {@code Store} bean. A single configured store is
   * primary anyway; among several, at most one may be.
   *
   * @return true if primary
   */
  public boolean isPrimary() {
    return primary;
  }

  /**
   * Sets whether this store's bean is the primary {@code Store} bean.
   *
   * @param primary true for primary
   */
  public void setPrimary(boolean primary) {
    this.primary = primary;
  }

  /**
   * Engine options by name, as the engine's README lists them ({@code segment-size}, {@code
   * cache-size}, ...).
   *
   * @return the options, mutable, for binding
   */
  public Map<String, String> getOptions() {
    return options;
  }

  /**
   * Sets the engine options.
   *
   * @param options the options by name
   */
  public void setOptions(Map<String, String> options) {
    this.options = options;
  }
}
