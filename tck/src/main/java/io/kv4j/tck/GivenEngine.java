package io.kv4j.tck;

import io.kv4j.Store;
import io.kv4j.StoreConfig;
import io.kv4j.Stores;
import io.kv4j.spi.StoreProvider;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Modifier;
import java.util.List;

/**
 * An engine under test that {@link Stores} does not hold (a tool's own provider, kept out of the
 * registry every application sees), named by its provider class. The kit's child JVMs get the class
 * name in the system property {@value UriTck#PROVIDER} and make the provider with its public
 * no-argument constructor, as {@link java.util.ServiceLoader} would: a config URI alone names only
 * engines of the registry.
 */
final class GivenEngine {
  private GivenEngine() {}

  /**
   * A provider made from its class name with its public no-argument constructor.
   *
   * @param className the provider's binary class name, on this JVM's class path
   * @return a new provider
   * @throws IllegalArgumentException if there is no such class, it is no public {@link
   *     StoreProvider} class, or it has no public no-argument constructor
   */
  static StoreProvider load(String className) {
    Class<?> c;
    try {
      c = Class.forName(className, true, GivenEngine.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IllegalArgumentException(
          "engine provider class " + className + " is not on the class path", e);
    }
    if (!StoreProvider.class.isAssignableFrom(c)
        || !Modifier.isPublic(c.getModifiers())
        || Modifier.isAbstract(c.getModifiers())) {
      throw new IllegalArgumentException(
          "engine provider class " + className + " is no public concrete StoreProvider");
    }
    try {
      return (StoreProvider) c.getConstructor().newInstance();
    } catch (NoSuchMethodException | IllegalAccessException e) {
      throw new IllegalArgumentException(
          "engine provider class " + className + " has no public no-argument constructor", e);
    } catch (InstantiationException | InvocationTargetException e) {
      throw new IllegalArgumentException(
          "engine provider class " + className + " could not be made: " + e.getCause(), e);
    }
  }

  /**
   * A worker's store, in a child JVM: opened with the provider named by {@value UriTck#PROVIDER}
   * when the parent set it, else by the registry's engine the URI names.
   *
   * @param uri the config URI the parent passed
   * @return the open store
   */
  static Store open(String uri) {
    String className = System.getProperty(UriTck.PROVIDER, "").trim();
    return className.isEmpty()
        ? Stores.open(uri)
        : Stores.open(StoreConfig.parse(uri, load(className)));
  }

  /**
   * The child JVM option that names {@code provider}'s class, when the registry does not hold it;
   * none when it does (the child finds it by the URI, as ever).
   *
   * @param provider the engine under test
   * @return the option, or an empty list
   */
  static List<String> childOptions(StoreProvider provider) {
    return Stores.providers().contains(provider)
        ? List.of()
        : List.of("-D" + UriTck.PROVIDER + "=" + provider.getClass().getName());
  }
}
