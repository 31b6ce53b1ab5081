package io.kv4j.spring;

import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.StoreException;
import io.kv4j.Stores;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Registers one {@link Store} bean per {@code kv4j.stores.<name>} entry, named {@code <name>}.
 * Every entry's configuration is checked here, before any store opens, so that a bad URI, an
 * unknown engine or option fails the startup naming its property and nothing is left open. The
 * stores open when their beans are created; the context closes each once, at shutdown ({@code
 * close} as the destroy method).
 */
final class StoreRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {
  /** The attribute marking a bean definition as a configured store; its value is the name. */
  static final String STORE_NAME = StoreRegistrar.class.getName() + ".name";

  private static final String STORES = Kv4jProperties.PREFIX + ".stores";

  private Environment environment;

  @Override
  public void setEnvironment(Environment environment) {
    this.environment = environment;
  }

  @Override
  public void registerBeanDefinitions(
      AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
    Map<String, StoreProperties> stores =
        Binder.get(environment)
            .bind(STORES, Bindable.mapOf(String.class, StoreProperties.class))
            .orElse(Map.of());
    List<String> primaries =
        stores.entrySet().stream()
            .filter(e -> e.getValue().isPrimary())
            .map(Map.Entry::getKey)
            .collect(Collectors.toList());
    if (primaries.size() > 1) {
      throw new InvalidConfigurationPropertyValueException(
          STORES + "." + primaries.get(1) + ".primary",
          true,
          "only one store may be primary; " + primaries + " all say so");
    }
    for (Map.Entry<String, StoreProperties> e : stores.entrySet()) {
      String name = e.getKey();
      StoreConfig config = config(name, e.getValue());
      if (registry.containsBeanDefinition(name)) {
        throw new InvalidConfigurationPropertyValueException(
            STORES + "." + name,
            config.toString(),
            "a bean named '" + name + "' exists already; give the store another name");
      }
      RootBeanDefinition bean = new RootBeanDefinition(Store.class, () -> open(name, config));
      bean.setDestroyMethodName("close");
      bean.setPrimary(stores.size() == 1 || e.getValue().isPrimary());
      bean.setAttribute(STORE_NAME, name);
      bean.setDescription("kv4j store '" + name + "': " + config);
      registry.registerBeanDefinition(name, bean);
    }
  }

  /**
   * Builds and checks a store's configuration.
   *
   * @throws InvalidConfigurationPropertyValueException naming the property at fault
   */
  static StoreConfig config(String name, StoreProperties p) {
    String property = STORES + "." + name;
    String uri = p.getUri();
    if (uri == null || uri.isBlank()) {
      throw new InvalidConfigurationPropertyValueException(
          property + ".uri",
          uri,
          "every store needs a URI, engine:path?key=value, such as hashlog:/var/lib/app/data");
    }
    StoreConfig.Builder b;
    try {
      b = StoreConfig.parse(uri).toBuilder();
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigurationPropertyValueException(
          property + ".uri", maskPasswords(uri), e.getMessage());
    }
    if (p.getDurability() != null) {
      b.durability(p.getDurability());
    }
    if (p.getReadOnly() != null) {
      b.readOnly(p.getReadOnly());
    }
    if (p.getCreateIfMissing() != null) {
      b.createIfMissing(p.getCreateIfMissing());
    }
    p.getOptions().forEach(b::option);
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigurationPropertyValueException(
          property + ".options", maskPasswords(p.getOptions().toString()), e.getMessage());
    }
  }

  private static Store open(String name, StoreConfig config) {
    try {
      return Stores.open(config);
    } catch (StoreException e) {
      throw new IllegalStateException(
          "cannot open kv4j store '"
              + name
              + "' ("
              + STORES
              + "."
              + name
              + ".uri, "
              + config
              + "): "
              + e.getMessage(),
          e);
    }
  }

  /** Configured values end up in startup failure reports; their passwords must not. */
  static String maskPasswords(String text) {
    return text.replaceAll("(?i)(password=)[^&,}\\s]*", "$1****");
  }
}
